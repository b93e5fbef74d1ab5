package hostlist

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want: hosts joined by spaces
	}{
		{"node01", "node01"},
		{"node[01-04,07]", "node01 node02 node03 node04 node07"},
		{"node[01-04,07],gpu[1-2]", "node01 node02 node03 node04 node07 gpu1 gpu2"},
		{"n[9-011]", "n9 n10 n11"},
		{"n[001-5]", "n001 n002 n003 n004 n005"},
		{"n[1-10]", "n1 n2 n3 n4 n5 n6 n7 n8 n9 n10"},
		{"n[01-10]", "n01 n02 n03 n04 n05 n06 n07 n08 n09 n10"},
		{"a[1-2]b[3-4]", "a1b3 a1b4 a2b3 a2b4"},
		{"a[1-2]b[3-4]c[5-6]", "a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 a1b4c6 a2b4c5 a2b4c6"},
		{"rack[1-2]-node[01-02]", "rack1-node01 rack1-node02 rack2-node01 rack2-node02"},
		{"n[1-2][3-4]", "n13 n14 n23 n24"},
		{"gpu-a[01-02]-ib", "gpu-a01-ib gpu-a02-ib"},
		{"[1-3]", "1 2 3"},
		{"x y\tz\nw", "x y z w"},
		{"a,,b", "a b"},
		{" , a ,", "a"},
		{"", ""},
		{"n[1-2],n[2-3]", "n1 n2 n2 n3"},
		{"n]1", "n]1"},
		{"n[[1-2]", "n[1 n[2"},
		{"n[1-2]]", "n1] n2]"},
		{"HcaB,HcaC", "HcaB HcaC"},
		{"0x0002c90300a1b2c4", "0x0002c90300a1b2c4"},
		{"n[0]", "n0"},
		{"n[00]", "n00"},
		{"n[3,1]", "n3 n1"},
	} {
		got, err := Expand(tc.in)
		if err != nil {
			t.Errorf("Expand(%q): %v", tc.in, err)
			continue
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("Expand(%q) = %q, want %q", tc.in, strings.Join(got, " "), tc.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"n[1", `"n[1": '[' without ']'`},
		{"n[]", `invalid range "": empty`},
		{"n[1,,2]", `invalid range "": empty`},
		{"n[3-1]", `invalid range "3-1": it ends below its start`},
		{"n[1--2]", `"-2" is not a number`},
		{"n[x]", `invalid range "x"`},
		{"n[1x2]", `invalid range "1x2"`},
		{"n[ 1,2]", `invalid range " 1"`},
		{"n[+1]", `invalid range "+1"`},
		{"n[1a-3]", `"1a" is not a number`},
		{"n[1-]", `"" is not a number`},
		{"n[0-65536]", "more than 65536 hosts"},
		{"n[99999999999999999999]", "is not a number"},
		{"a[1-300]b[1-300]", "more than 65536"},
		{"a[1]b[3-1]", `it ends below its start`},
	} {
		_, err := Expand(tc.in)
		var he *Error
		if !errors.As(err, &he) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Expand(%q): error %v, want one containing %q", tc.in, err, tc.want)
		}
	}
	// The limit is Slurm's: 65536 hosts in one range are accepted.
	if hs, err := Expand("n[0-65535]"); err != nil || len(hs) != MaxHosts {
		t.Errorf("n[0-65535]: %d hosts, %v", len(hs), err)
	}
}

// genExpr makes a random well-formed hostlist: tokens of letters, dashes and bracket
// groups of numbers and ranges with random zero padding.
func genExpr(r *rand.Rand) string {
	var toks []string
	for range 1 + r.Intn(3) {
		var b strings.Builder
		b.WriteString([]string{"n", "node", "gpu-", "rack", "c"}[r.Intn(5)])
		groups := r.Intn(3)
		for g := 0; g < groups; g++ {
			b.WriteByte('[')
			for p := range 1 + r.Intn(3) {
				if p > 0 {
					b.WriteByte(',')
				}
				lo := r.Intn(20)
				w := 1 + r.Intn(3)
				fmt.Fprintf(&b, "%0*d", w, lo)
				if r.Intn(2) == 0 {
					fmt.Fprintf(&b, "-%0*d", 1+r.Intn(3), lo+r.Intn(4))
				}
			}
			b.WriteByte(']')
			if g < groups-1 {
				b.WriteString([]string{"", "-", "x", "b"}[r.Intn(4)])
			}
		}
		toks = append(toks, b.String())
	}
	return strings.Join(toks, []string{",", " ", ",\t"}[r.Intn(3)])
}

// TestScontrolOracle compares Expand with Slurm's own expansion (`scontrol show
// hostnames`, Debian's slurm-client) on generated expressions: whatever Expand
// accepts must expand exactly as Slurm does. (Slurm before 23.02.5 has no suffix after
// a bracket group, so the generator writes none.)
func TestScontrolOracle(t *testing.T) {
	scontrol, err := exec.LookPath("scontrol")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("scontrol not found (CI is set, so this fails instead of skipping); install with: apt-get install -y slurm-client")
		}
		t.Skip("scontrol not found; install with: apt-get install -y slurm-client")
	}
	// scontrol reads a slurm.conf before it does anything; show hostnames needs no
	// controller.
	conf := filepath.Join(t.TempDir(), "slurm.conf")
	if err := os.WriteFile(conf, []byte("ClusterName=ibkey\nSlurmctldHost=localhost\nNodeName=n1\nPartitionName=p Nodes=n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	slurm := func(expr string) (string, bool) {
		cmd := exec.Command(scontrol, "show", "hostnames", expr)
		cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
		out, err := cmd.Output()
		return strings.Join(strings.Fields(string(out)), " "), err == nil
	}
	r := rand.New(rand.NewSource(1))
	exprs := []string{"node[01-04,07]", "a[1-2]b[3-4]c[5-6]", "n[9-011]", "x y\tz", "n[1-2],n[2-3]", "n[[1-2]", "[1-3]"}
	for range 150 {
		exprs = append(exprs, genExpr(r))
	}
	compared := 0
	for _, e := range exprs {
		got, err := Expand(e)
		want, ok := slurm(e)
		if err != nil {
			if ok {
				t.Logf("%q: Slurm expands it (%s), Expand refuses it: %v", e, want, err)
			}
			continue
		}
		if !ok {
			t.Errorf("%q: Expand accepts it (%v), Slurm refuses it", e, got)
			continue
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%q:\n Expand %s\n Slurm  %s", e, strings.Join(got, " "), want)
		}
		compared++
	}
	if compared < 100 {
		t.Errorf("only %d of %d expressions compared with Slurm", compared, len(exprs))
	}
	t.Logf("%d expressions expanded alike by Expand and scontrol", compared)
}
