package devices

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/internal/query"
)

// TestSwitchNamesFit80: over the fabric (devices --lid) DEVICE is the node
// description, and a switch's ("MF0;ib-leaf-r12-u40:MQM8790/U1") is one word that
// cannot wrap: the rows did not fit 80 columns even without PHYS, SM_LID and LINK and
// came out as plain records the terminal wrapped. PORT_GUID gives way too.
func TestSwitchNamesFit80(t *testing.T) {
	s := func(v string) *string { return &v }
	lid, n, size := uint16(2), 2, 32
	var rows []devicePortJSON
	var views []*query.PortView
	for _, name := range []string{"MF0;ib-leaf-r12-u40:MQM8790/U1", "gpu-node-r12u07 HCA-1"} {
		rows = append(rows, devicePortJSON{Device: name, Port: 1, LinkLayer: s("InfiniBand"), State: "ACTIVE", PhysState: s("LinkUp"),
			LID: &lid, SMLID: &lid, Rate: s("100 Gb/sec (4X EDR)"), PortGUID: s("0x0002c90300a00041"), TableSize: &size, ValidPKeys: &n})
		views = append(views, &query.PortView{})
	}
	var out bytes.Buffer
	o := &DevicesOptions{Deps: cmdutil.Deps{IO: &cmdutil.IOStreams{Out: &out}, Format: cmdutil.FormatTable}}
	if err := writeDevices(o, rows, views, cmdutil.Source{}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Errorf("a line of %d columns:\n%s", ansi.StringWidth(l), out.String())
			break
		}
	}
	if !strings.Contains(out.String(), "│ DEVICE") {
		t.Errorf("not a table:\n%s", out.String())
	}
}

// TestDemoRatesAgree: the demo host's ports read from its sysfs and read over the demo
// fabric (--lid) are the same ports and say the same rate (the demo fabric gave every
// port 4X QDR: 40 Gb/sec beside sysfs's EDR, HDR and SDR).
func TestDemoRatesAgree(t *testing.T) {
	type doc struct {
		Ports []struct {
			PortGUID string `json:"port_guid"`
			Rate     string `json:"rate"`
		} `json:"ports"`
	}
	read := func(args ...string) map[string]string {
		r := cmdtest.Run(t, root, false, nil, append([]string{"--demo", "devices", "-o", "json"}, args...)...)
		var d doc
		if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, r.Stdout)
		}
		rates := map[string]string{}
		for _, p := range d.Ports {
			if p.PortGUID != "" { // a RoCE port, or a DOWN port over the fabric
				rates[p.PortGUID] = p.Rate
			}
		}
		return rates
	}
	host, fabric := read(), read("--lid", "3,9", "--port", "all")
	n := 0
	for guid, rate := range fabric {
		if want, ok := host[guid]; ok {
			n++
			if rate != want {
				t.Errorf("port %s: %q over the fabric, %q in sysfs", guid, rate, want)
			}
		}
	}
	if n < 2 {
		t.Errorf("%d ports in both readings, want the demo host's ports: sysfs %v, fabric %v", n, host, fabric)
	}
}

// TestDemoOneRowPerPort80: the demo host's table at 80 columns is one line per port.
// RATE held the kernel's "100 Gb/sec (4X EDR)", which wrapped onto a second line in
// every row; the table now shows it as "100G 4X EDR", and never wraps it (a wider
// terminal left PHYS in and wrapped RATE instead).
func TestDemoOneRowPerPort80(t *testing.T) {
	r := cmdtest.Run(t, root, true, nil, "--demo", "devices")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	rows := 0
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("a line of %d columns: %q", w, l)
		}
		if strings.HasPrefix(l, "│") && !strings.HasPrefix(l, "│ DEVICE") {
			rows++
			if !strings.HasPrefix(l, "│ mlx5_") {
				t.Errorf("a row on two lines: %q", l)
			}
		}
	}
	if rows != 4 || !strings.Contains(r.Stdout, "│ 100G 4X EDR │") {
		t.Errorf("want 4 rows, RATE 100G 4X EDR:\n%s", r.Stdout)
	}
	for _, args := range [][]string{{"-o", "plain"}, {"-o", "json"}} {
		if r := cmdtest.Run(t, root, true, nil, append([]string{"--demo", "devices"}, args...)...); !strings.Contains(r.Stdout, "100") || strings.Contains(r.Stdout, "100G") {
			t.Errorf("%v: the kernel's rate text changed:\n%s", args, r.Stdout)
		}
	}
}

// TestSwitchPortHasNoLID: a switch's external ports have no LID, SM LID or port GUID
// of their own (IBA 14.2.5.6: they are port 0's; a switch's sysfs has only ports/0).
// devices showed n/a there, which says "not read", where the fabric tables leave the
// cells empty: both now say there is none. JSON keeps null with the reason.
func TestSwitchPortHasNoLID(t *testing.T) {
	r := cmdtest.Run(t, root, false, nil, "--demo", "devices", "--lid", "2", "-o", "plain")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(r.Stdout, "\n") {
		if f := strings.Fields(l); len(f) == 10 {
			rows[f[1]] = f
		}
	}
	// DEVICE PORT LINK STATE PHYS LID SM_LID RATE PKEYS PORT_GUID
	if p0 := rows["0"]; p0 == nil || p0[5] != "2" || p0[9] != "0x0002c90200400100" {
		t.Errorf("port 0: %v\n%s", p0, r.Stdout)
	}
	if p1 := rows["1"]; p1 == nil || p1[5] != "-" || p1[6] != "-" || p1[9] != "-" {
		t.Errorf("port 1: want -, -, - for LID, SM_LID, PORT_GUID: %v\n%s", p1, r.Stdout)
	}
	j := cmdtest.Run(t, root, false, nil, "--demo", "devices", "--lid", "2", "--port", "1", "-o", "json")
	if !strings.Contains(j.Stdout, `"lid": null`) || !strings.Contains(j.Stdout, `"lid": "a switch's external port has none`) {
		t.Errorf("JSON changed:\n%s", j.Stdout)
	}
}
