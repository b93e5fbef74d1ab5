package pkeys

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/fakesysfs"
)

// TestCarrier: an IPoIB interface up without carrier whose key the table holds is a
// warning (exit 0: the tables were read; the warning names what it read), one the
// user took down is none, and flags/carrier/operstate not read are named in the
// warning and in JSON's link_unread, with admin_up or carrier null (never false).
func TestCarrier(t *testing.T) {
	const g = 0x0002c90300c0ffe0
	port := fakesysfs.Port{Num: 1, State: "4: ACTIVE", PhysState: "5: LinkUp", LID: "0x3", SMLID: "0x1", LMC: "0", SMSL: "0",
		CapMask: "0x2651e848", Rate: "100 Gb/sec (4X EDR)", LinkLayer: "InfiniBand", GIDs: []string{fakesysfs.GID0(g + 1)},
		PKeys: fakesysfs.Table(16, "0xffff", "0x8001", "0x8003", "0x8005")}
	nif := func(name, pkey, flags, carrier, oper string, unreadable ...string) fakesysfs.NetIf {
		return fakesysfs.NetIf{Name: name, Device: "mlx5_0", PKey: pkey, Type: "32", Address: fakesysfs.IPoIBAddress(0x1049, g+1),
			Flags: flags, Carrier: carrier, OperState: oper, Unreadable: unreadable}
	}
	dir := t.TempDir()
	if err := fakesysfs.Write(dir, fakesysfs.Host{
		Devices: []fakesysfs.Device{{Name: "mlx5_0", PCI: "0000:03:00.0", NodeType: "1: CA", NodeGUID: fakesysfs.GUID(g), NodeDesc: "n", Ports: []fakesysfs.Port{port}}},
		Net: []fakesysfs.NetIf{
			nif("ib0", "0xffff", "0x1003", "1", "up"),
			nif("ib0.8001", "0x8001", "0x1003", "0", "down"),
			nif("ib0.8003", "0x8003", "", "", "down"),
			nif("ib0.8005", "0x8005", "0x1002", "", "down", "carrier"),
		},
	}); err != nil {
		t.Fatal(err)
	}
	r := cmdtest.Run(t, root, false, nil, "--sysfs", dir, "pkeys")
	out := r.Stdout + r.Stderr
	if r.Code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", r.Code, out)
	}
	for _, w := range []string{"ib0.8001 is up without carrier", "ff12:401b:8001::ffff:ffff", "ibkey partitions check FILE", "ERR 1B11",
		"ib0.8003: whether it is up and has carrier is unknown (not read: flags: does not exist"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	for _, no := range []string{"ib0.8005 is", "ib0 is up"} {
		if strings.Contains(out, no) {
			t.Errorf("output warns %q:\n%s", no, out)
		}
	}

	r = cmdtest.Run(t, root, false, nil, "--sysfs", dir, "pkeys", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("json: exit %d, want 0:\n%s", r.Code, r.Stderr)
	}
	var doc struct {
		Ports []struct {
			IPoIB []struct {
				Name       string
				AdminUp    *bool  `json:"admin_up"`
				Carrier    *bool  `json:"carrier"`
				LinkUnread string `json:"link_unread"`
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Ports) != 1 {
		t.Fatalf("%v:\n%s", err, r.Stdout)
	}
	str := func(b *bool) string {
		if b == nil {
			return "null"
		}
		return map[bool]string{true: "true", false: "false"}[*b]
	}
	want := map[string]string{
		"ib0":      "true true ",
		"ib0.8001": "true false ",
		"ib0.8003": `null null flags: does not exist; operstate "down" fits both a down interface and one without carrier`,
		"ib0.8005": "false null ",
	}
	for _, ip := range doc.Ports[0].IPoIB {
		if got := str(ip.AdminUp) + " " + str(ip.Carrier) + " " + ip.LinkUnread; got != want[ip.Name] {
			t.Errorf("%s: %q, want %q", ip.Name, got, want[ip.Name])
		}
		delete(want, ip.Name)
	}
	if len(want) != 0 {
		t.Errorf("not in JSON: %v", want)
	}
}
