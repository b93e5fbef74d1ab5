package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fabric/fabrictest"
	"github.com/ibkey/ibkey/internal/fakesysfs"
)

// TestDefaultOutputFits80: every command's default output on a terminal of unknown
// width (80 columns) is no wider than 80 (watch counters: its lines, --once or
// --count; the screen is internal/tui's), on the demo and on the worst a real site
// gives it: device names as long as the kernel allows, node descriptions of the
// 64 bytes NodeInfo holds (one word on a switch, "host HCA-1" on a node), 32-port
// switches, ports holding many keys, partitions with long names and many members.
// A table that gave up (plain records, Grid's last resort) must say so; a table that
// left columns out or cut words says which. (exporter --once prints Prometheus's
// text format, for machines: not here.)
func TestDefaultOutputFits80(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command")
	}
	dir := t.TempDir()
	host, devs := longHost(t, dir)
	wide, names := longFabric(t, dir)
	many := manyPortsFabric(t, dir)
	conf := longConf(t, dir, many)
	const cluster, mistakes = "../../testdata/partitions/cluster.conf", "../../testdata/partitions/mistakes.conf"
	var cases [][]string
	for _, on := range [][]string{{"--demo"}, {"--sysfs", host}} {
		a, b := "mlx5_0/1", "mlx5_1/1"
		if on[0] == "--sysfs" {
			a, b = devs[0]+"/1", devs[1]+"/1"
		}
		for _, args := range [][]string{
			{"devices"}, {"pkeys"}, {"pkeys", "--all"}, {"pkeys", "--find", "0x0002"},
			{"can-talk", a, b}, {"job", "--want", "0x8001"}, {"job", "NCCL_IB_PKEY=1", "UCX_IB_PKEY=0x0002"},
			{"watch", "pkeys", "--count", "1"},
			{"watch", "counters", "--once"}, {"watch", "counters", "--count", "2", "--interval", "10ms", "--all-counters"},
		} {
			cases = append(cases, append(slices(on), args...))
		}
	}
	cases = append(cases,
		[]string{"--demo", "devices", "--lid", "3,9", "--port", "all"},
		[]string{"--demo", "pkeys", "--lid", "8"},
		[]string{"--demo", "fabric", "discover"}, []string{"--demo", "fabric", "pkeys"},
		[]string{"--demo", "fabric", "pkeys", "--key", "0x0010"}, []string{"--demo", "fabric", "check"},
		[]string{"--demo", "can-talk", "node=storage01", "node=node02"},
		[]string{"--demo", "job", "--node", "node02,node03"},
		[]string{"--demo", "watch", "counters", "--lid", "3-9", "--port", "all", "--once"},
		[]string{"decode", "pkey", "0x8001", "0", "7fff", "80:02"}, []string{"decode", "qkey", "0x80010000", "b1b"},
		[]string{"partitions", "show", cluster}, []string{"partitions", "check", mistakes},
		[]string{"partitions", "matrix", cluster, "--sm-guid", "0x0002c90300001001"},
		[]string{"partitions", "show", conf, "--fabric-file", many},
		[]string{"partitions", "check", conf},
		[]string{"partitions", "matrix", conf, "--fabric-file", many},
		[]string{"sm", "log", "../../internal/smlog/testdata/lab.log", "--fabric-file", "../../internal/smlog/testdata/lab-fabric.json", "--partitions", "../../internal/smlog/testdata/lab-partitions.conf"},
		[]string{"sm", "log", "../../internal/smlog/testdata/lab-verbose.log"},
	)
	for _, file := range []string{wide, many} {
		cases = append(cases,
			[]string{"fabric", "discover", "--fabric-file", file}, []string{"fabric", "pkeys", "--fabric-file", file},
			[]string{"fabric", "pkeys", "--fabric-file", file, "--key", "0x0001"},
			[]string{"fabric", "check", "--fabric-file", file},
			[]string{"fabric", "check", "--fabric-file", file, "--partitions", conf},
		)
	}
	cases = append(cases,
		[]string{"fabric", "diff", writeFabric(t, filepath.Join(dir, "demo.json"), demo.Fabric()), wide},
		[]string{"can-talk", "--fabric-file", wide, "node=" + names["storage01"], "node=" + names["node02"]},
		[]string{"can-talk", "--fabric-file", wide, "node=" + names["gpu01"], "node=" + names["sm01"]},
		[]string{"job", "--fabric-file", wide, "--node", hostOf(names["node02"]) + "," + hostOf(names["node03"]), "--want", "0x0010"},
	)
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := runIbkey(t, true, nil, args...)
			if r.code == 2 || r.code == 3 {
				t.Fatalf("exit %d: the case is wrong, not the output:\n%s", r.code, r.stderr)
			}
			checkFits80(t, r.stdout)
		})
	}
}

// plainRecordsHeader is a plain layout's header line (two or more upper-case column
// names two or more spaces apart): on a terminal, a table that gave up.
var plainRecordsHeader = regexp.MustCompile(`^[A-Z][A-Z_]*(  +[A-Z][A-Z_]*)+$`)

func checkFits80(t *testing.T, out string) {
	t.Helper()
	gaveUp := strings.Contains(out, "(the table does not fit 80 columns")
	for _, l := range strings.Split(out, "\n") {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("a line of %d columns: %q\n%s", w, l, out)
			return
		}
		if plainRecordsHeader.MatchString(l) && !gaveUp {
			t.Errorf("a table fell back to plain records without saying so: %q\n%s", l, out)
			return
		}
	}
}

func slices(s []string) []string { return append([]string(nil), s...) }

// hostOf is a node description's host name (its first word).
func hostOf(desc string) string { return strings.Fields(desc)[0] }

// longHost is the demo host with device names of 63 bytes (the kernel's
// IB_DEVICE_NAME_MAX, 64 with the NUL) and node descriptions of 64, written under
// dir; it returns the tree and the device names.
func longHost(t *testing.T, dir string) (string, []string) {
	t.Helper()
	h := fakesysfs.Demo()
	h.NoSymlinks = false
	rename := map[string]string{}
	var devs []string
	for i := range h.Devices {
		d := &h.Devices[i]
		name := fmt.Sprintf("%s_rdma_device_with_the_longest_name_the_kernel_allows_%02d", d.Name, i)
		name += strings.Repeat("x", 63-len(name))
		rename[d.Name], d.Name = name, name
		d.NodeDesc = pad64(fmt.Sprintf("gpu-node-r12u07.datacenter-east.cluster.example.org HCA-%d", i+1))
		devs = append(devs, name)
	}
	for i := range h.Net {
		h.Net[i].Device = rename[h.Net[i].Device]
	}
	tree := filepath.Join(dir, "sysfs")
	if err := fakesysfs.Write(tree, h); err != nil {
		t.Fatal(err)
	}
	return tree, devs
}

// pad64 is s made 64 bytes long, NodeInfo's NodeDescription (IBA 14.2.5.3).
func pad64(s string) string {
	if len(s) >= 64 {
		return s[:64]
	}
	return s + strings.Repeat("z", 64-len(s))
}

// longFabric is the demo fabric with every node's description 64 bytes long: a
// switch's one word ("MF0;ib-leaf-r12-u40:MQM8790/U1" and longer), a node's host and
// adapter; it returns the file and the new descriptions by the old ones.
func longFabric(t *testing.T, dir string) (string, map[string]string) {
	t.Helper()
	f := demo.Fabric()
	names := map[string]string{}
	for _, n := range f.Nodes {
		desc := n.Description + "-r12u07.datacenter-east.cluster.example.org mlx5_0"
		if n.Type == check.NodeSwitch {
			desc = "MF0;ib-" + n.Description + "-r12-u40.datacenter-east:MQM8790-HS2F/U1"
		}
		names[n.Description] = pad64(desc)
		n.Description = names[n.Description]
	}
	return writeFabric(t, filepath.Join(dir, "wide.json"), f), names
}

// manyPortsFabric is a fat tree of 36-port leaves with switch descriptions of 64
// bytes and ports holding many keys.
func manyPortsFabric(t *testing.T, dir string) string {
	t.Helper()
	f := fabrictest.FatTree(3, 2, 32)
	for _, n := range f.Nodes {
		n.Description = pad64("MF0;" + n.Description + "-datacenter-east-row-b:MQM9790-NS2F/U1")
		if n.Type == check.NodeCA {
			n.Description = pad64(strings.ToLower(strings.TrimPrefix(n.Description[:12], "MF0;")) + ".cluster.example.org HCA-1")
			for _, p := range n.Ports {
				if len(p.PKeys) > 20 {
					for i := 2; i < 20; i++ {
						p.PKeys[i] = check.PKey(0x8000 | i)
					}
				}
			}
		}
	}
	return writeFabric(t, filepath.Join(dir, "many.json"), f)
}

func writeFabric(t *testing.T, file string, f *fabric.Fabric) string {
	t.Helper()
	w, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := fabric.EncodeFabric(w, f); err != nil {
		t.Fatal(err)
	}
	return file
}

// longConf is a partitions.conf for the fabric in file: partitions with long names
// and every CA a member.
func longConf(t *testing.T, dir, file string) string {
	t.Helper()
	r, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := fabric.DecodeFabric(r)
	if err != nil {
		t.Fatal(err)
	}
	var members []string
	for _, n := range f.Nodes {
		if n.Type == check.NodeCA {
			members = append(members, n.Ports[0].GUID.String()+"=full")
		}
	}
	var b strings.Builder
	b.WriteString("Default=0x7fff, ipoib : ALL=full ;\n")
	for i := 1; i <= 18; i++ {
		fmt.Fprintf(&b, "storage_and_compute_partition_with_a_long_name_%02d=0x%04x, ipoib, mtu=5 : %s ;\n", i, i, strings.Join(members, ", "))
	}
	conf := filepath.Join(dir, "partitions.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}
