package lab

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

func TestFatTreeFileIsGenerated(t *testing.T) {
	b, err := os.ReadFile("testdata/fattree.net")
	if err != nil {
		t.Fatal(err)
	}
	if got := FatTree(4, 2, 8); string(b) != got {
		t.Fatal("testdata/fattree.net differs from FatTree(4, 2, 8); regenerate it")
	}
	topo, err := parseTopology(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(topo.CAs()); n != 32 {
		t.Errorf("CAs = %d, want 32", n)
	}
	switches := 0
	for _, n := range topo.Nodes {
		if n.Type == Switch {
			switches++
		}
	}
	if switches != 6 {
		t.Errorf("switches = %d, want 6", switches)
	}
}

func TestParseTopologyAndDRPath(t *testing.T) {
	b, err := os.ReadFile("testdata/small.net")
	if err != nil {
		t.Fatal(err)
	}
	topo, err := parseTopology(string(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		from, to string
		arrive   int
		want     string
	}{
		{"HcaA", "HcaA", 0, "0"},
		{"HcaA", "Switch1", 0, "0,1"},
		{"HcaA", "HcaB", 1, "0,1,2"},
		{"HcaA", "Switch2", 0, "0,1,7"},
		{"HcaA", "HcaC", 1, "0,1,7,1"},
		{"HcaA", "HcaD", 2, "0,1,7,2"},
		{"HcaA", "HcaD", 1, "0,1,3"},
	} {
		p, err := topo.DRPath(tc.from, tc.to, tc.arrive)
		if err != nil {
			t.Errorf("DRPath(%s, %s, %d): %v", tc.from, tc.to, tc.arrive, err)
			continue
		}
		if got := mad.FormatDRPath(p); got != tc.want {
			t.Errorf("DRPath(%s, %s, %d) = %s, want %s", tc.from, tc.to, tc.arrive, got, tc.want)
		}
	}
	if _, err := topo.DRPath("HcaA", "HcaB", 2); err == nil {
		t.Error("DRPath to HcaB's unconnected port 2: no error")
	}
	for _, bad := range []string{
		"Hca 1 \"A\"\n[1] \"B\"[1]\n",                            // unknown peer
		"Hca 1 \"A\"\n[1] \"B\"[1]\nHca 1 \"B\"\n[1] \"A\"[2]\n", // not linked back (port 2)
		"Hca 1 \"A\"\n[3] \"B\"[1]\n",                            // port out of range
		"Hca 1 \"A\"\n\nHca 1 \"A\"\n",                           // duplicate
		"[1] \"B\"[1]\n",                                         // link before header
	} {
		if _, err := parseTopology(bad); err == nil {
			t.Errorf("parseTopology(%q): no error", bad)
		}
	}
}

func TestParsePKeys(t *testing.T) {
	out := "   0: 0xffff 0x8001 0x0002 0x0000 0x0000 0x0000 0x0000 0x0000\n" +
		"   8: 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000 0x7fff\n" +
		"16 pkeys capacity for this port\n"
	got, err := ParsePKeys(out)
	if err != nil {
		t.Fatal(err)
	}
	if got.Capacity != 16 || len(got.Entries) != 16 || got.Entries[1] != 0x8001 || got.Entries[15] != 0x7fff {
		t.Errorf("ParsePKeys = %+v", got)
	}
	for _, bad := range []string{
		"",
		"   0: 0xffff\n", // no capacity
		"   8: 0xffff\n1 pkeys capacity for this port\n", // starts at 8
		"   0: 0xffff\n8 pkeys capacity for this port\n", // too few entries
		"   0: 0xffff\nsmpquery: iberror: failed\n1 pkeys capacity for this port\n",
	} {
		if _, err := ParsePKeys(bad); err == nil {
			t.Errorf("ParsePKeys(%q): no error", bad)
		}
	}
}

func TestParseFields(t *testing.T) {
	out := "# Port info: Lid 3 port 1\nLid:.............................3\nLinkWidthSupported:..............1X or 4X\nMkey:............................<not displayed>\nCapMask:.........................0x2651a48\n"
	f := ParseFields(out)
	if f["Lid"] != "3" || f["LinkWidthSupported"] != "1X or 4X" || f["Mkey"] != "<not displayed>" {
		t.Errorf("ParseFields = %v", f)
	}
	if n, err := f.Uint("CapMask"); err != nil || n != 0x2651a48 {
		t.Errorf("Uint(CapMask) = %d, %v", n, err)
	}
	if _, err := f.Uint("Mkey"); err == nil {
		t.Error("Uint(Mkey): no error")
	}
	if _, err := f.Uint("Nope"); err == nil {
		t.Error("Uint(Nope): no error")
	}
}

// TestLab exercises the harness itself against ibsim: console, tools, OpenSM.
func TestLab(t *testing.T) {
	t.Parallel()
	l := Start(t, "testdata/small.net", nil)

	// Before an SM runs, only directed routes work.
	out := l.MustTool("smpquery", "-D", "pkeys", "0")
	pk, err := ParsePKeys(out)
	if err != nil {
		t.Fatal(err)
	}
	if pk.Entries[0] != 0xffff || pk.Capacity == 0 {
		t.Errorf("HcaA before SM: %+v", pk)
	}

	if err := l.RunOpenSM("Default=0x7fff, ipoib : ALL=full ;\nStorage=0x8001 : ALL_CAS=limited ;\n", false); err != nil {
		t.Fatal(err)
	}
	ni := ParseFields(l.MustTool("smpquery", "nodeinfo", "1"))
	if ni["NodeType"] == "" {
		t.Errorf("smpquery nodeinfo 1: %v", ni)
	}

	// PerformanceSet shows up in perfquery.
	if out, err := l.Console(`PerformanceSet "HcaB"[1] PortCounters.PortRcvConstraintErrors=7`); err != nil || !strings.Contains(out, "has been set to 7") {
		t.Fatalf("PerformanceSet: %q, %v", out, err)
	}
	pi := ParseFields(l.MustTool("smpquery", "-D", "portinfo", "0,1,2", "1"))
	lid := pi["Lid"]
	pq := ParseFields(l.MustTool("perfquery", lid, "1"))
	if pq["PortRcvConstraintErrors"] != "7" {
		t.Errorf("perfquery %s 1: PortRcvConstraintErrors = %q, want 7", lid, pq["PortRcvConstraintErrors"])
	}

	clients, err := l.Attached()
	if err != nil || len(clients) != 0 {
		t.Errorf("Attached = %v, %v; want none", clients, err)
	}
	if !slices.Contains([]string{"HcaA"}, l.Topology.Nodes[0].Name) {
		t.Errorf("first node %q", l.Topology.Nodes[0].Name)
	}
}

func TestConsoleRejectsBadInput(t *testing.T) {
	t.Parallel()
	l := Start(t, "testdata/small.net", nil)
	if _, err := l.Console("Dump\nQuit"); err == nil {
		t.Error("two lines: no error")
	}
	if _, err := l.Console(strings.Repeat("#", 200)); err == nil {
		t.Error("200 bytes: no error")
	}
	if _, err := l.Console("Dump"); err != nil {
		t.Errorf("Dump: %v", err)
	}
	l.Kill()
	if _, err := l.Console("Dump"); err == nil {
		t.Error("console after Kill: no error")
	}
}

func TestParseIbnetdiscover(t *testing.T) {
	out := `# Topology file
vendid=0x0
switchguid=0x200001(200001)
Switch	8 "S-0000000000200001"		# "Switch2" base port 0 lid 3 lmc 0
[1]	"H-0000000000100006"[1](100007) 		# "HcaC" lid 5 4xSDR
[7]	"S-0000000000200000"[7]		# "Switch1" lid 2 4xSDR

caguid=0x100006
Ca	2 "H-0000000000100006"		# "HcaC"
[1](100007) 	"S-0000000000200001"[1]		# lid 5 lmc 0 "Switch2" lid 3 4xSDR
`
	n, err := ParseIbnetdiscover(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Nodes) != 2 || n.Nodes[0x200001] != (NetNode{"Switch", 8, "Switch2"}) || n.Nodes[0x100006] != (NetNode{"Ca", 2, "HcaC"}) {
		t.Errorf("nodes %+v", n.Nodes)
	}
	if !n.Links[NetLink(0x100006, 1, 0x200001, 1)] || !n.Links[NetLink(0x200001, 7, 0x200000, 7)] || len(n.Links) != 2 {
		t.Errorf("links %v", n.Links)
	}
	if n.PortGUIDs[NetEnd(0x100006, 1)] != 0x100007 {
		t.Errorf("port GUIDs %v", n.PortGUIDs)
	}
	if _, err := ParseIbnetdiscover("nothing"); err == nil {
		t.Error("no nodes: want an error")
	}
}

// TestToolCrashRunAgain: a query tool that dies of a segmentation fault is run again
// (saquery under libumad2sim did once in CI), and the second run's answer is the
// tool's. A stand-in saquery on PATH crashes on its first run only.
func TestToolCrashRunAgain(t *testing.T) {
	l := Start(t, "testdata/small.net", nil)
	bin := t.TempDir()
	script := "#!/bin/sh\nif [ ! -e \"$0.ran\" ]; then : > \"$0.ran\"; kill -SEGV $$; fi\necho answer\n"
	if err := os.WriteFile(bin+"/saquery", []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	out, err := l.ToolAt("HcaA", "saquery", "PR")
	if err != nil || out != "answer\n" {
		t.Fatalf("saquery after a crash: %q %v", out, err)
	}
	n := 0
	l.crashed.Range(func(_, _ any) bool { n++; return true })
	if n != 1 {
		t.Errorf("%d crashed tools recorded, want 1", n)
	}
}
