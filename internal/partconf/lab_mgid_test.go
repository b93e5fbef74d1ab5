package partconf

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	ibsimlab "github.com/ibkey/ibkey/internal/lab"
)

// TestLabMGIDInTwoPartitions: a one-shot OpenSM 3.3.23 (-o) crashes (segmentation
// fault) when an mgid= line's MGID is no group's as written but, with the scope OpenSM
// writes into it, is another partition's group (osm_prtn_add_mcgroup finds that group
// and track_mgrp_w_partition puts it in a second partition's list); a daemon crashed
// in some runs only, so the model says "may crash" (uncertain). Found by `make truth`
// (seed 5024). Each case runs through OpenSM once; the model must flag the crash
// exactly when OpenSM crashed.
func TestLabMGIDInTwoPartitions(t *testing.T) {
	needLab(t)
	net := filepath.Join(t.TempDir(), "net")
	// Two two-port CAs cabled back to back.
	topo := "caguid=0x2c90300000100\nHca 2 \"Hca1\"\n[1] \"Hca2\"[1]\n[2] \"Hca2\"[2]\n\n" +
		"caguid=0x2c90300000200\nHca 2 \"Hca2\"\n[1] \"Hca1\"[1]\n[2] \"Hca1\"[2]\n"
	if err := os.WriteFile(net, []byte(topo), 0o644); err != nil {
		t.Fatal(err)
	}
	l := ibsimlab.Start(t, net, &ibsimlab.Options{ToolNode: "Hca1"}) // OpenSM runs at the first CA, Hca1 too
	m := " 0x0002c90300000201, 0x0002c90300000101 ;\n"
	for _, tc := range []struct {
		name, body string
		crash      bool // what OpenSM did in the lab
	}{
		{"ff15::5 in two partitions (both scope 2: ff12::5)", "p1=0x10 :\n mgid=ff15::5\n" + m + "p2=0x20 :\n mgid=ff15::5\n" + m, true},
		{"ff12::5 then ff15::5", "p1=0x10 :\n mgid=ff12::5\n" + m + "p2=0x20 :\n mgid=ff15::5\n" + m, true},
		{"scope=2 written, ff15::5 twice", "p1=0x10 :\n mgid=ff15::5,scope=2\n" + m + "p2=0x20 :\n mgid=ff15::5,scope=2\n" + m, true},
		{"the second partition has no member in the fabric", "p1=0x10 :\n mgid=ff15::5\n" + m + "p2=0x20 :\n mgid=ff15::5\n 0x0002c9030000ffff ;\n", true},
		{"members swallowed by the mgid line", "gpu0=0x02c7 : mgid=ff15::5, 0x0002c90300000201 ;\np2=94 : mgid=ff15::5, 0x0002c90300000201 ;\n", true},
		{"ff15::5 twice in one partition", "p1=0x10 :\n mgid=ff15::5\n mgid=ff15::5\n" + m, false},
		{"one partition in two definitions", "p1=0x10 :\n mgid=ff15::5\n" + m + "p1b=0x10 :\n mgid=ff15::5\n" + m, false},
		{"the full and the limited key: one partition", "p1=0x10 :\n mgid=ff15::5\n" + m + "p2=0x8010 :\n mgid=ff15::5\n" + m, false},
		{"ff12::5 in two partitions (found as written: skipped)", "p1=0x10 :\n mgid=ff12::5\n" + m + "p2=0x20 :\n mgid=ff12::5\n" + m, false},
		{"ff15::5 then ff12::5", "p1=0x10 :\n mgid=ff15::5\n" + m + "p2=0x20 :\n mgid=ff12::5\n" + m, false},
		{"scope=5 written, ff15::5 twice", "p1=0x10 :\n mgid=ff15::5,scope=5\n" + m + "p2=0x20 :\n mgid=ff15::5,scope=5\n" + m, false},
		{"different MGIDs", "p1=0x10 :\n mgid=ff15::5\n" + m + "p2=0x20 :\n mgid=ff15::6\n" + m, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := "Default=0x7fff : ALL=full ;\n" + tc.body
			err := l.RunOpenSM(conf, false)
			crashed := err != nil && strings.Contains(err.Error(), "segmentation fault")
			if err != nil && !crashed {
				t.Fatal(err)
			}
			if crashed {
				// A crashed OpenSM leaves its ibsim slot attached: free it.
				clients, _ := l.Attached()
				for _, c := range clients {
					var slot, pid int
					if _, err := fmt.Sscanf(c, "Client %d: pid %d", &slot, &pid); err == nil && pid != os.Getpid() {
						l.MustConsole(fmt.Sprintf("X %d", slot))
					}
				}
			}
			if crashed != tc.crash {
				t.Errorf("OpenSM crashed: %v, recorded %v", crashed, tc.crash)
			}
			c := Parse("p.conf", []byte(conf))
			if c.crash != crashed {
				t.Errorf("model: crash %v (%q), OpenSM crashed %v; findings %v", c.crash, c.Uncertain, crashed, c.Findings)
			}
		})
	}
}

// TestLabMGIDBeforeBroadcast: an IPoIB mgid= line before the line that makes its
// broadcast group is refused when OpenSM reads it (ERR 1B1B), and a running OpenSM
// creates the group at its next heavy sweep, the broadcast group being there by
// then. The model's mgid-refused finding says both.
func TestLabMGIDBeforeBroadcast(t *testing.T) {
	needLab(t)
	net := filepath.Join(t.TempDir(), "net")
	topo := "caguid=0x2c90300000100\nHca 2 \"Hca1\"\n[1] \"Hca2\"[1]\n[2] \"Hca2\"[2]\n\n" +
		"caguid=0x2c90300000200\nHca 2 \"Hca2\"\n[1] \"Hca1\"[1]\n[2] \"Hca1\"[2]\n"
	if err := os.WriteFile(net, []byte(topo), 0o644); err != nil {
		t.Fatal(err)
	}
	l := ibsimlab.Start(t, net, &ibsimlab.Options{ToolNode: "Hca1"})
	conf := "Default=0x7fff, ipoib : ALL=full ;\np2=0x0002, ipoib, scope=5 :\n mgid=ff12:401b::1,sl=0\n mgid=ff15:401b::ffff:ffff,sl=0\n ALL=full ;\n"
	d := l.StartOpenSMDaemon(t, conf)
	exists := func() bool {
		out, _ := l.ToolAt("Hca2", "saquery", "--mgid", "ff15:401b:8002::1", "MCMR")
		return strings.Contains(out, "ff15:401b:8002::1")
	}
	if exists() {
		t.Error("ff15:401b:8002::1 exists after the first read")
	}
	if !strings.Contains(d.LogText(), "ERR 1B1B: Broadcast group ff15:401b:8002::ffff:ffff not found") {
		t.Error("no ERR 1B1B in the log")
	}
	if err := d.Resweep(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !exists() {
		t.Error("ff15:401b:8002::1 does not exist after a heavy sweep")
	}
	c := Parse("p.conf", []byte(conf))
	for _, f := range c.Findings {
		if f.Rule == "mgid-refused" && f.Pos.Line == 3 && strings.Contains(f.Message, "next heavy sweep") && strings.Contains(f.Action, "line 4") {
			return
		}
	}
	t.Errorf("no mgid-refused finding at line 3 that names the next sweep: %v", c.Findings)
}

// TestLabGroupValues: the SL, MTU and rate the SA reports for each group of a
// partition are the model's. OpenSM 3.3.23 without QoS (the default) gives a
// partition's sl= to none of its groups (partition_create sets it to 0 first: the
// IPoIB broadcast group and an mgid= group that inherits it get SL 0), while an mgid=
// line's own sl= is kept; with qos TRUE the partition's sl= is kept and inherited.
// A group asked for again (a second ipoib definition, an mgid= line repeated) keeps
// the values it was made with. The lint says both.
func TestLabGroupValues(t *testing.T) {
	needLab(t)
	net := filepath.Join(t.TempDir(), "net")
	topo := "caguid=0x2c90300000100\nHca 2 \"Hca1\"\n[1] \"Hca2\"[1]\n[2] \"Hca2\"[2]\n\n" +
		"caguid=0x2c90300000200\nHca 2 \"Hca2\"\n[1] \"Hca1\"[1]\n[2] \"Hca1\"[2]\n"
	if err := os.WriteFile(net, []byte(topo), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := "Default=0x7fff, ipoib : ALL=full ;\np=0x10, ipoib, sl=3, mtu=5, rate=7 :\n mgid=ff12::7\n mgid=ff12::8,sl=5\n mgid=ff12::8,sl=6,mtu=2\n ALL=full ;\n" +
		"p=0x10, ipoib, mtu=4 : ALL=full ;\n"
	for _, qos := range []bool{false, true} {
		t.Run(fmt.Sprintf("qos=%v", qos), func(t *testing.T) {
			l := ibsimlab.Start(t, net, &ibsimlab.Options{ToolNode: "Hca1"})
			l.StartOpenSMDaemon(t, conf, fmt.Sprintf("qos %s", strings.ToUpper(strconv.FormatBool(qos))))
			c := ParseWith("p.conf", []byte(conf), Options{QoS: qos})
			groups := c.Partition(0x10).Groups
			if len(groups) != 3 {
				t.Fatalf("model: %d groups of 0x0010, want 3 (broadcast, ff12::7, ff12::8)", len(groups))
			}
			sls := map[int]bool{}
			for _, g := range groups {
				sls[int(g.SL)] = true
				out, err := l.ToolAt("Hca2", "saquery", "--mgid", g.MGID.String(), "MCMR")
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]string{}
				for _, line := range strings.Split(out, "\n") {
					if name, v, ok := strings.Cut(strings.TrimSpace(line), "."); ok {
						got[name] = strings.TrimLeft(v, ".")
					}
				}
				// mtu and rate carry the selector "exactly" (2) in their top two bits.
				for _, f := range []struct {
					name string
					want int
				}{{"SL", int(g.SL)}, {"mtu", 2<<6 | int(g.MTU)}, {"rate", 2<<6 | int(g.Rate)}} {
					if want := fmt.Sprintf("0x%x", f.want); got[f.name] != want {
						t.Errorf("group %s: the SA reports %s %q, the model %s", g.MGID, f.name, got[f.name], want)
					}
				}
			}
			// The partition's sl=3 reaches the broadcast group and ff12::7 only with QoS.
			if sls[3] != qos {
				t.Errorf("model: group SLs %v with qos %v", sls, qos)
			}
			wants := []struct {
				rule string
				line int
			}{{"group-exists", 5}, {"group-exists", 7}}
			if !qos {
				wants = append(wants, struct {
					rule string
					line int
				}{"sl-without-qos", 2})
			}
			for _, want := range wants {
				if !slices.ContainsFunc(c.Findings, func(f check.Finding) bool { return f.Rule == want.rule && f.Pos.Line == want.line }) {
					t.Errorf("no %s finding at line %d: %v", want.rule, want.line, c.Findings)
				}
			}
			if qos && slices.ContainsFunc(c.Findings, func(f check.Finding) bool { return f.Rule == "sl-without-qos" }) {
				t.Errorf("sl-without-qos with qos TRUE: %v", c.Findings)
			}
		})
	}
}
