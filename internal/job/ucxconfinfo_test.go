package job

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// osAt reads the host's files as the OS does, a relative name in dir (the working
// directory of the ucx_info it is compared with).
type osAt struct{ dir string }

func (o osAt) ReadFile(name string) ([]byte, error) {
	if !filepath.IsAbs(name) {
		name = filepath.Join(o.dir, name)
	}
	return os.ReadFile(name)
}

func (osAt) IsDir(string) bool { return false }

// ucxConfLine is one random line of a ucx.conf: settings of the variables ibkey
// reads (and look-alikes UCX ignores) written every way inih reads them, comments,
// sections, continuation lines, errors and lines longer than inih's 199 bytes.
func ucxConfLine(r *rand.Rand) string {
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	value := func(name string) string {
		switch name {
		case "UCX_TLS":
			return pick("rc", "ud", "tcp", "rc,,ud", "^rc", "all", "rc # x", `"rc"`, "")
		case "UCX_NET_DEVICES":
			return pick("mlx5_0:1", "all", "mlx5_0:1,mlx5_1:1", "^mlx5_0", "")
		}
		return pick("0x12", "0x7fff", "auto", "AUTO", "8001", "0x", "zz", "0x8001", "0x5 # five", "0x6;x", "", "0X7", "0x 8", "0x100000009")
	}
	name := pick("UCX_IB_PKEY", "UCX_IB_PKEY", "UCX_IB_PKEY", "UCX_TLS", "UCX_NET_DEVICES", "ucx_ib_pkey", "UCX_IB_PKEY ", "UCX_LOG_LEVEL")
	set := name + pick("=", " = ", ":", "\t=\t", " :") + value(strings.TrimSpace(name)) + pick("", "", " ; comment", " \t", ";", " ;")
	switch r.IntN(14) {
	case 0:
		return pick("; ", "#", " ;", "\t# ") + set
	case 1:
		return pick("[ib]", "[Grace Hopper]", "[bad", "[x ;y]", "[]")
	case 2:
		return pick("garbage", "UCX_IB_PKEY", " ", "", "=0x13")
	case 3:
		return pick("  ", "\t", " \v") + pick("0x21", "auto", "UCX_IB_PKEY=0x22", "zz ; c")
	case 4:
		// Cut by fgets: the rest is a line of its own.
		return "#" + strings.Repeat(" ", 197) + set
	case 5:
		return set + strings.Repeat(" ", r.IntN(250))
	case 6:
		return "UCX_IB_PKEY=0x" + strings.Repeat("0", 185+r.IntN(20)) + "31"
	}
	return set
}

// ucxAllowList is how ucx_info -c prints an allow list: '^', then the names not
// empty, comma-separated.
func ucxAllowList(v string) string {
	neg := strings.HasPrefix(v, "^")
	var names []string
	for _, n := range strings.Split(strings.TrimPrefix(v, "^"), ",") {
		if n != "" {
			names = append(names, n)
		}
	}
	if neg {
		return "^" + strings.Join(names, ",")
	}
	return strings.Join(names, ",")
}

// TestUCXConfAgainstUcxInfo writes random ucx.conf files in $HOME, $UCX_CONFIG_DIR
// and the working directory and compares what the real UCX (Debian's ucx-utils,
// UCX 1.13.1: ucx_info -c, the configuration it takes) sets UCX_IB_PKEY (as
// UCX_RC_VERBS_PKEY shows it), UCX_TLS and UCX_NET_DEVICES to with what ibkey
// reads (ReadUCXFiles and the environment, ucxParsePKey).
func TestUCXConfAgainstUcxInfo(t *testing.T) {
	bin := needTool(t, "ucx_info", "ucx-utils")
	for _, f := range []string{"/etc/ucx/ucx.conf", "/usr/lib/etc/ucx.conf"} {
		if _, err := os.Stat(f); err == nil {
			t.Skipf("%s exists on this host: the comparison needs the files it writes alone", f)
		}
	}
	// The release ucx_info is (--lib-version ucx=), for the decided reading.
	vout, err := exec.Command(bin, "-v").Output()
	if err != nil {
		t.Fatalf("%s -v: %v", bin, err)
	}
	release, ok := ParseVersion(strings.TrimSpace(strings.TrimPrefix(strings.SplitN(string(vout), "\n", 2)[0], "# Version")))
	if !ok {
		t.Fatalf("%s -v: no version in %q", bin, vout)
	}
	r := rand.New(rand.NewPCG(11, 13))
	base := t.TempDir()
	for i := range 400 {
		dirs := map[string]string{}
		for _, d := range []string{"home", "cfg", "cwd"} {
			dirs[d] = filepath.Join(base, fmt.Sprint(i), d)
			if err := os.MkdirAll(dirs[d], 0o755); err != nil {
				t.Fatal(err)
			}
			if r.IntN(4) == 0 {
				continue
			}
			var b strings.Builder
			if r.IntN(10) == 0 {
				b.WriteString("\xef\xbb\xbf")
			}
			eol := "\n"
			if r.IntN(4) == 0 {
				eol = "\r\n"
			}
			for range 1 + r.IntN(6) {
				b.WriteString(ucxConfLine(r) + eol)
			}
			if err := os.WriteFile(filepath.Join(dirs[d], "ucx.conf"), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		all := Env{"HOME": dirs["home"]}
		if r.IntN(2) == 0 {
			all["UCX_CONFIG_DIR"] = dirs["cfg"]
		}
		if r.IntN(8) == 0 {
			all["UCX_IB_PKEY"] = []string{"auto", "0x7fff", "zz"}[r.IntN(3)]
		}
		if r.IntN(10) == 0 {
			all["UCX_TLS"] = "ud"
		}
		cmd := exec.Command(bin, "-c")
		cmd.Dir = dirs["cwd"]
		for k, v := range all {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, _ := cmd.CombinedOutput()
		got := map[string]string{"UCX_RC_VERBS_PKEY": "error"}
		for _, line := range strings.Split(string(out), "\n") {
			for _, name := range []string{"UCX_RC_VERBS_PKEY", "UCX_TLS", "UCX_NET_DEVICES"} {
				if v, ok := strings.CutPrefix(line, name+"="); ok {
					got[name] = v
				}
			}
		}

		env := Env{}
		for _, name := range []string{"UCX_IB_PKEY", "UCX_TLS"} {
			if v, ok := all[name]; ok {
				env[name] = v
			}
		}
		u := ReadUCXFiles(all, osAt{dirs["cwd"]})
		files := func() string {
			var files strings.Builder
			for _, d := range []string{"home", "cfg", "cwd"} {
				b, _ := os.ReadFile(filepath.Join(dirs[d], "ucx.conf"))
				fmt.Fprintf(&files, "%s/ucx.conf: %q\n", d, b)
			}
			return files.String()
		}
		// The files as UCX 1.12.0 and later read them, then as ibkey decides
		// with --lib-version ucx= this UCX's release (ucxEnv, as UCX.configure).
		in := Inputs{Env: env, UCX: u, Versions: Versions{"ucx": release}}
		_, decided, _ := ucxEnv(in, in.version(&UCX))
		for how, merged := range map[string]Env{"reads": ucxMerge(env, u.Values), "decides (" + release.String() + ")": decided} {
			want := map[string]string{"UCX_TLS": "all", "UCX_NET_DEVICES": "all"}
			for _, name := range []string{"UCX_TLS", "UCX_NET_DEVICES"} {
				if v, ok := merged[name]; ok {
					want[name] = ucxAllowList(v)
				}
			}
			v, set := merged["UCX_IB_PKEY"]
			key, reject, _ := ucxParsePKey(v, set)
			want["UCX_RC_VERBS_PKEY"] = fmt.Sprintf("0x%x", key)
			switch {
			case key == ucxAuto || key&0xffff == 0xfffe:
				want["UCX_RC_VERBS_PKEY"] = "auto"
			case reject != "":
				want["UCX_RC_VERBS_PKEY"] = "error"
			}
			for name, w := range want {
				if got[name] != w {
					t.Errorf("case %d, environment %v: UCX has %s=%q, ibkey %s %q\n%s", i, all, name, got[name], how, w, files())
				}
			}
		}
		// Decided: no version split is left, and the ports UCX_NET_DEVICES selects
		// are UCX's: before 1.21 each name ucx_info lists is one dev:port, compared
		// exactly, "all" among them every port.
		s := UCX.setup(in)
		for _, x := range s.Unchecked {
			if strings.Contains(x, ucxVersionUnknown) || strings.Contains(x, "UCX before") {
				t.Errorf("case %d, environment %v: not decided with --lib-version ucx=%s: %s\n%s", i, all, release, x, files())
			}
		}
		if s.unknown != "" {
			t.Errorf("case %d, environment %v: not decided with --lib-version ucx=%s: %s\n%s", i, all, release, s.unknown, files())
		}
		if s.Inactive != "" || s.Reject != "" {
			continue
		}
		listed := strings.Split(got["UCX_NET_DEVICES"], ",")
		for _, name := range append(slices.Clone(listed), "mlx5_0:1", "mlx5_0", "zz_9:2") {
			dev, num := name, 1
			if d, p, ok := strings.Cut(name, ":"); ok {
				dev, num = d, atoi(p)
			}
			want := slices.Contains(listed, "all") || slices.Contains(listed, fmt.Sprintf("%s:%d", dev, num))
			if ok, why := s.allows(nil, dev, num); ok != want {
				t.Errorf("case %d, environment %v: UCX %s lists UCX_NET_DEVICES=%s: %s:%d selected %v, ibkey decides %v (%s)\n%s", i, all, release, got["UCX_NET_DEVICES"], dev, num, want, ok, why, files())
			}
		}
	}
}
