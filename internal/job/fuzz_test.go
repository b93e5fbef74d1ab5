package job

import (
	"strings"
	"testing"
)

// The parsers that read user input never panic, and what they accept is stable.

func FuzzParseC(f *testing.F) {
	for _, s := range []string{"0", "12", "0x1f", "010", "-1", " +7z", "0x", "99999999999999999999", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, base := range []int{0, 10} {
			n := parseC(s, base)
			if !n.Digits && (n.Value != 0 || n.Rest != s) {
				t.Errorf("parseC(%q, %d): no digits but %+v", s, base, n)
			}
		}
	})
}

func FuzzNCCLHCA(f *testing.F) {
	for _, s := range []string{"", "^", "=mlx5_0", "^=mlx5_0:1", "mlx5_0:1:2:3,mlx5_1", ",,:", "mlx5_0:-1"} {
		f.Add(s, "mlx5_0", 1)
	}
	f.Fuzz(func(t *testing.T, hca, dev string, port int) {
		flt := parseNCCLHCA(hca)
		if len(flt.entries) > maxNCCLDevs {
			t.Errorf("%d entries kept, NCCL keeps %d", len(flt.entries), maxNCCLDevs)
		}
		_ = flt.match(dev, port)
	})
}

func FuzzEnvFile(f *testing.F) {
	f.Add("# c\nexport NCCL_IB_PKEY=1\nUCX_IB_PKEY='0x2'\n")
	f.Add("A=\"b\nC=")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ReadEnvFile("f", strings.NewReader(s))
		if err == nil {
			for k := range e {
				if !validName(k) {
					t.Errorf("accepted variable name %q", k)
				}
			}
		}
	})
}

func FuzzPerftestArgs(f *testing.F) {
	f.Add("ib_send_bw -d mlx5_0 -i 1 --pkey_index=2")
	f.Add("ib_write_bw --pkey_index --ib-dev")
	f.Add("ib_send_bw -i=1 -i257 --pkey_index= -d=x")
	f.Fuzz(func(t *testing.T, s string) { _ = ParsePerftestArgs(s) })
}

func FuzzSettings(f *testing.F) {
	f.Add("NCCL_IB_PKEY", "0x8001")
	f.Add("UCX_IB_PKEY", "0x")
	f.Add("GASNET_IBV_PKEY", "-1")
	f.Add("MV2_DEFAULT_PKEY", "0x18002")
	f.Add("OMPI_MCA_btl_openib_pkey", "")
	f.Add("NVSHMEM_IB_PKEY_INDEX", "99999999999999999999")
	f.Add("UCX_IB_PKEY", "0x -0x100000001")
	f.Add("GASNET_IBV_PKEY", "- 9999999999999999999.5.")
	f.Add("GASNET_IBV_PKEY", "%03")
	f.Add("GASNET_IBV_PORTS", "mlx5_0:1,,+:")
	f.Add("OMPI_MCA_btl_openib_pkey", "17179869184g")
	f.Add("NVSHMEM_IB_PKEY_INDEX", "-0x80000001")
	f.Add("MV2_DEFAULT_PORT", " +0z")
	f.Add("MV2_NUM_PORTS", "2")
	f.Add("NCCL_IB_HCA", "^=mlx5_0:4294967297,")
	f.Add("NVSHMEM_HCA_LIST", "^,:3,mlx5_0:1z:2:,")
	f.Fuzz(func(t *testing.T, name, value string) {
		p := port("", "mlx5_0", 1, 0xffff, 0x8001, 0, 0x0002, unread)
		for _, r := range Resolve(Libraries(), Inputs{Env: Env{name: value}}, []*Port{p}) {
			if r.Verdict == Works && len(r.Findings) > 0 {
				t.Errorf("%s: works with findings %q", r.Library.ID, r.Findings)
			}
		}
	})
}

// ucx.conf as inih reads it: no value keeps the white space it trims, no line
// number is beyond the lines fgets reads.
func FuzzUCXINI(f *testing.F) {
	f.Add("\xef\xbb\xbf[s]\nUCX_IB_PKEY = 0x1 ; c\r\n  0x2\n# x\nbad\n")
	f.Add("A:" + strings.Repeat(" ", 250) + "B=1\x00C\n[x ;]")
	f.Fuzz(func(t *testing.T, s string) {
		lines := 0
		bad := ucxINI([]byte(s), func(_, _, value string, line int) bool {
			if strings.Trim(value, cSpace) != value {
				t.Errorf("value %q keeps white space", value)
			}
			lines = max(lines, line)
			return true
		})
		if n := strings.Count(s, "\n") + len(s)/(iniMaxLine-1) + 1; bad > n || lines > n {
			t.Errorf("line %d or %d of at most %d", bad, lines, n)
		}
	})
}
