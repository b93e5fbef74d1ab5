package job

import (
	"maps"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// unread marks an entry that could not be read in a test table.
const unread = -1

func port(host, dev string, num int, entries ...int) *Port {
	p := &Port{Host: host, Device: dev, Num: num, LinkLayer: "InfiniBand", State: "ACTIVE", LID: uint16(num + 1)}
	for i, v := range entries {
		e := check.TableEntry{Index: i, Readable: v != unread}
		if v != unread {
			e.PKey = check.PKey(v)
		}
		p.Table = append(p.Table, e)
	}
	return p
}

func env(kv ...string) Inputs {
	e := Env{}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		e[k] = v
	}
	return Inputs{Env: e}
}

// pickOn resolves one library on one port and returns what it uses there.
func pickOn(t *testing.T, l *Library, in Inputs, p *Port) (Pick, *Result) {
	t.Helper()
	r := Resolve([]*Library{l}, in, []*Port{p})[0]
	for _, pr := range r.Ports {
		if pr.Port == p {
			if !pr.Used {
				t.Fatalf("%s does not use %s: %s", l.Name, p.Label(), pr.Why)
			}
			return pr.Pick, r
		}
	}
	t.Fatalf("%s: port %s not in the resolution", l.Name, p.Label())
	return Pick{}, nil
}

type pickCase struct {
	name    string
	in      Inputs
	table   []int
	outcome Outcome
	index   int
	pkey    check.PKey
	// contains must appear in the setting, a finding, a note or the problem.
	contains string
}

func runPicks(t *testing.T, l *Library, cases []pickCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := port("", "mlx5_0", 1, c.table...)
			pk, r := pickOn(t, l, c.in, p)
			if pk.Outcome != c.outcome || pk.Index != c.index || (c.outcome == Uses && pk.PKey != c.pkey) {
				t.Errorf("%s: got %s index %d %s (%s), want %s index %d %s", r.Setting, pk.Outcome, pk.Index, pk.PKey, pk.Problem, c.outcome, c.index, c.pkey)
			}
			all := strings.Join(append(append(append([]string{r.Setting, pk.Problem}, r.Findings...), r.Notes...), r.Unchecked...), "\n")
			if c.contains != "" && !strings.Contains(all, c.contains) {
				t.Errorf("%q not in:\n%s", c.contains, all)
			}
			wantVerdict := map[Outcome]Verdict{Uses: Works, EmptyEntry: DoesNotWork, Fails: DoesNotWork, Skips: DoesNotWork, NotChecked: Incomplete}[c.outcome]
			if r.Verdict != wantVerdict {
				t.Errorf("verdict %s, want %s (findings %q)", r.Verdict, wantVerdict, r.Findings)
			}
		})
	}
}

// NCCL: NCCL_IB_PKEY is an index, strtoll base 0, default 0, used unchecked
// (src/transport/net_ib/connect.cc ncclIbQpInit, src/misc/param.cc ncclLoadParam).
func TestNCCLPKey(t *testing.T) {
	tbl := []int{0xffff, 0x8001, 0x0000, 0x0002, 0x8002, 0, 0, 0, 0x8003}
	runPicks(t, &NCCL, []pickCase{
		{"unset is index 0", env(), tbl, Uses, 0, 0xffff, "index 0"},
		{"empty keeps the default", env("NCCL_IB_PKEY="), tbl, Uses, 0, 0xffff, "NCCL_IB_PKEY empty: NCCL keeps the default"},
		{"index 1", env("NCCL_IB_PKEY=1"), tbl, Uses, 1, 0x8001, ""},
		{"a hole (OpenSM keeps indexes)", env("NCCL_IB_PKEY=2"), tbl, EmptyEntry, 2, 0, "empty entry"},
		{"limited entry", env("NCCL_IB_PKEY=3"), tbl, Uses, 3, 0x0002, "limited member"},
		{"a P_Key value is an index to NCCL", env("NCCL_IB_PKEY=0x8001"), tbl, Fails, 0x8001, 0, "an index, not a P_Key value"},
		{"leading zero is octal", env("NCCL_IB_PKEY=010"), tbl, Uses, 8, 0x8003, "octal"},
		{"not a number is 0", env("NCCL_IB_PKEY=abc"), tbl, Uses, 0, 0xffff, "strtoll reads 0"},
		{"trailing text ignored", env("NCCL_IB_PKEY=1abc"), tbl, Uses, 1, 0x8001, "ignored"},
		{"overflow keeps the default", env("NCCL_IB_PKEY=99999999999999999999"), tbl, Uses, 0, 0xffff, "overflows"},
		{"-1 is 65535", env("NCCL_IB_PKEY=-1"), tbl, Fails, 65535, 0, "truncated"},
		// INT64_MIN is NCCL_PARAM's "uninitialized": not cached, read again each time, same value.
		{"INT64_MIN is index 0", env("NCCL_IB_PKEY=-9223372036854775808"), tbl, Uses, 0, 0xffff, "truncated to 16 bits: 0"},
		{"below INT64_MIN keeps the default", env("NCCL_IB_PKEY=-9223372036854775809"), tbl, Uses, 0, 0xffff, "overflows"},
		{"NCCL_IB_GID_INDEX is noted", env("NCCL_IB_PKEY=1", "NCCL_IB_GID_INDEX=3"), tbl, Uses, 1, 0x8001, "from NCCL 2.22.3"},
		{"unreadable entry", env("NCCL_IB_PKEY=1"), []int{0xffff, unread}, NotChecked, 1, 0, "could not be read"},
	})
}

// NCCL_IB_HCA: '^' then '=' prefixes, comma list of name[:port], prefix match
// (ncclIbInitDevices, parseStringList, matchIfList).
func TestNCCLIBHCA(t *testing.T) {
	ports := [][2]any{{"mlx5_0", 1}, {"mlx5_0", 2}, {"mlx5_1", 1}, {"mlx5_10", 1}, {"ib0", 1}}
	for _, c := range []struct {
		hca  string
		want string
	}{
		{"", "mlx5_0/1 mlx5_0/2 mlx5_1/1 mlx5_10/1 ib0/1"},
		{"mlx5", "mlx5_0/1 mlx5_0/2 mlx5_1/1 mlx5_10/1"},
		{"mlx5_1", "mlx5_1/1 mlx5_10/1"}, // prefix match
		{"=mlx5_1", "mlx5_1/1"},
		{"mlx5_0:2", "mlx5_0/2"},
		{"mlx5_0:", "mlx5_0/1 mlx5_0/2"},
		{"^mlx5_0", "mlx5_1/1 mlx5_10/1 ib0/1"},
		{"^=mlx5_1,ib", "mlx5_0/1 mlx5_0/2 mlx5_10/1 ib0/1"}, // exact: "ib" is not ib0
		{"=^mlx5_0", ""},                                     // '=' first: "^mlx5_0" is a name
		{"^", ""},
		{",,mlx5_0:1,,", "mlx5_0/1"},
		{"mlx5_0:x", ""}, // atoi("x") = 0: no port 0
		{"mlx5_0:1:3:0", "mlx5_0/1"},
		{"mlx5_0:4294967298", "mlx5_0/2"},  // atoi: (int)strtol, the low 32 bits
		{"mlx5_0:-1", "mlx5_0/1 mlx5_0/2"}, // -1 is "any port"
	} {
		f := parseNCCLHCA(c.hca)
		var got []string
		for _, p := range ports {
			if f.match(p[0].(string), p[1].(int)) {
				got = append(got, p[0].(string)+"/"+itoa(p[1].(int)))
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("NCCL_IB_HCA=%q selects %q, want %q", c.hca, strings.Join(got, " "), c.want)
		}
	}
}

// Each NCCL_IB_HCA entry is cut to 63 bytes (snprintf into netIf.prefix[64]); device
// names are at most 63 bytes (IB_DEVICE_NAME_MAX 64), so a longer exact entry can
// name one.
func TestNCCLIBHCALongName(t *testing.T) {
	dev := strings.Repeat("d", 63)
	if f := parseNCCLHCA("=" + dev + "_extra"); !f.match(dev, 1) {
		t.Errorf("=%s_extra: NCCL cuts the entry to 63 bytes and selects %s", dev, dev)
	}
}

// NVSHMEM_HCA_LIST, else NVSHMEM_HCA_PE_MAPPING, choose the ports (ibrc.cpp init,
// transport_common.cpp nvshmemt_parse_hca_list): exact names, '^' excludes.
func TestNVSHMEMHCAList(t *testing.T) {
	ports := []*Port{port("", "mlx5_0", 1, 0xffff), port("", "mlx5_0", 2, 0xffff), port("", "mlx5_1", 1, 0xffff), port("", "mlx5_10", 1, 0xffff)}
	for _, c := range []struct {
		env  []string
		want string
	}{
		{nil, "mlx5_0/1 mlx5_0/2 mlx5_1/1 mlx5_10/1"},
		{[]string{"NVSHMEM_HCA_LIST=mlx5_1"}, "mlx5_1/1"}, // exact: not mlx5_10
		{[]string{"NVSHMEM_HCA_LIST=mlx5_0:2"}, "mlx5_0/2"},
		{[]string{"NVSHMEM_HCA_LIST=mlx5_0:2:4,mlx5_1"}, "mlx5_0/2 mlx5_1/1"},
		{[]string{"NVSHMEM_HCA_LIST=mlx5_0:-1"}, "mlx5_0/1 mlx5_0/2"},
		{[]string{"NVSHMEM_HCA_LIST=^mlx5_0"}, "mlx5_1/1 mlx5_10/1"},
		{[]string{"NVSHMEM_HCA_LIST=^"}, "mlx5_0/1 mlx5_0/2 mlx5_1/1 mlx5_10/1"}, // no entry: no filter
		{[]string{"NVSHMEM_HCA_LIST=,:3,mlx5_10x:1z,mlx5_10"}, "mlx5_10/1"},
		{[]string{"NVSHMEM_HCA_PE_MAPPING=mlx5_1:1:2"}, "mlx5_1/1"},
		{[]string{"NVSHMEM_HCA_LIST=mlx5_0:1", "NVSHMEM_HCA_PE_MAPPING=mlx5_1:1:2"}, "mlx5_0/1"}, // the list wins
		{[]string{"NVSHMEM_HCA_PE_MAPPING=^mlx5_1"}, "mlx5_1/1"},                                 // '^' only for the list
	} {
		var got []string
		for _, pr := range Resolve([]*Library{&NVSHMEM}, env(c.env...), ports)[0].Ports {
			if pr.Used {
				got = append(got, pr.Port.Label())
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%v: NVSHMEM uses %q, want %q", c.env, strings.Join(got, " "), c.want)
		}
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

// UCX: UCX_IB_PKEY is a 15-bit value or auto; full entries win, then the first
// limited; only 0x0000 is skipped (uct_ib_iface_init_pkey, ucs_config_sscanf_hex).
func TestUCXPKey(t *testing.T) {
	runPicks(t, &UCX, []pickCase{
		{"auto takes the first full entry", env(), []int{0x7fff, 0x8002, 0xffff}, Uses, 1, 0x8002, ""},
		{"auto skips 0x0000 holes", env("UCX_IB_PKEY=auto"), []int{0, 0, 0xffff}, Uses, 2, 0xffff, ""},
		{"auto takes 0x8000 (UCX skips only 0x0000)", env("UCX_IB_PKEY=AUTO"), []int{0, 0x8000, 0xffff}, EmptyEntry, 1, 0x8000, "skips only 0x0000"},
		{"auto, limited only", env(), []int{0, 0x7fff, 0x0002}, Uses, 1, 0x7fff, "first limited"},
		{"value prefers full", env("UCX_IB_PKEY=0x2"), []int{0xffff, 0x0002, 0x8002}, Uses, 2, 0x8002, ""},
		{"value, limited only", env("UCX_IB_PKEY=0x0002"), []int{0xffff, 0x0002}, Uses, 1, 0x0002, "first limited"},
		{"value not in table", env("UCX_IB_PKEY=0x5"), []int{0xffff, 0x8002}, Fails, -1, 0, "unable to find specified pkey"},
		{"no 0x is rejected", env("UCX_IB_PKEY=8002"), []int{0xffff, 0x8002}, Fails, -1, 0, "UCX rejects"},
		{"full bit is rejected", env("UCX_IB_PKEY=0x8002"), []int{0xffff, 0x8002}, Fails, -1, 0, "UCX_IB_PKEY=0x0002"},
		// Before a full match of the key, an entry not read can only be another
		// full match (the same P_Key): the index is not known, the P_Key is.
		{"unreadable before the full match", env("UCX_IB_PKEY=0x2"), []int{0xffff, unread, 0x8002}, Uses, -1, 0x8002, "or an entry before it that could not be read (from 1)"},
		{"auto, unreadable before the full match", env(), []int{unread, 0x8002}, NotChecked, -1, 0, "could not be read"},
		{"unreadable before a limited match", env("UCX_IB_PKEY=0x2"), []int{0xffff, unread, 0x0002}, NotChecked, -1, 0, "could not be read"},
		{"key 0, unreadable before 0x8000", env("UCX_IB_PKEY=0x0"), []int{0xffff, unread, 0x8000}, NotChecked, -1, 0, "could not be read"},
		{"unreadable after the full match", env("UCX_IB_PKEY=0x2"), []int{0x8002, unread}, Uses, 0, 0x8002, ""},
		{"no valid pkey", env(), []int{0, 0}, Fails, -1, 0, "no valid pkey"},
		// sscanf("%x") after the 0x, as glibc reads it (TestLibcNumbers).
		{"cut to 32 bits", env("UCX_IB_PKEY=0x100000002"), []int{0xffff, 0x8002}, Uses, 1, 0x8002, "as 0x2: glibc"},
		{"white space, sign and a second 0x", env("UCX_IB_PKEY=0x +0x2"), []int{0xffff, 0x8002}, Uses, 1, 0x8002, "as 0x2"},
		{"text after the digits", env("UCX_IB_PKEY=0x2g"), []int{0xffff, 0x8002}, Uses, 1, 0x8002, "ignores what follows"},
		{"minus wraps to 32 bits", env("UCX_IB_PKEY=0x-2"), []int{0xffff, 0x8002}, Fails, -1, 0, "0xfffffffe is invalid"},
		{"0x then no number", env("UCX_IB_PKEY=0x g"), []int{0xffff}, Fails, -1, 0, "no hex digits"},
		{"0x0x is 0", env("UCX_IB_PKEY=0x0x"), []int{0xffff, 0x8000}, EmptyEntry, 1, 0x8000, "key 0"},
		{"0x1fffe is not", env("UCX_IB_PKEY=0x1fffe"), []int{0x7fff, 0x8002}, Fails, -1, 0, "0x1fffe is invalid"},
	})
	// 0xfffe is auto from UCX 1.8.0 (UCS_HEXUNITS_AUTO), out of range before: which
	// one applies depends on the UCX version.
	for _, v := range []string{"0xfffe", "0x10000fffe"} {
		pk, r := pickOn(t, &UCX, env("UCX_IB_PKEY="+v), port("", "mlx5_0", 1, 0x7fff, 0x8002))
		if pk.Index != 1 || r.Verdict != Incomplete || len(r.Unchecked) != 1 || !strings.Contains(r.Unchecked[0], "1.8.0 and later take as auto") {
			t.Errorf("UCX_IB_PKEY=%s: index %d, verdict %s, unchecked %q; want auto (index 1), not checked", v, pk.Index, r.Verdict, r.Unchecked)
		}
	}
	// RoCE: index 0 (0xffff) whatever the value, from UCX 1.12.0 (Debian's 1.13.1 on
	// rxe, TestUCXOnKernel); before, the InfiniBand lookup, which finds the same entry
	// only for auto and 0x7fff: otherwise the answer depends on the UCX version.
	roce := port("", "mlx5_2", 1, 0xffff)
	roce.LinkLayer = "Ethernet"
	for _, c := range []struct {
		v, why string
	}{
		{"auto", ""}, {"0x7fff", ""},
		{"0x5", "unable to find specified pkey 0x5"},
		{"0x8001", "requested pkey 0x8001 is invalid"},
		{"0xffff", "requested pkey 0xffff is invalid"},
		{"0x0", "unable to find specified pkey 0x0"},
	} {
		pk, r := pickOn(t, &UCX, env("UCX_IB_PKEY="+c.v), roce)
		switch {
		case c.why == "" && (pk.Outcome != Uses || pk.Index != 0 || pk.PKey != 0xffff || r.Verdict != Works):
			t.Errorf("RoCE, UCX_IB_PKEY=%s: %+v, %s; want index 0 0xffff without reading the table", c.v, pk, r.Verdict)
		case c.why != "" && (pk.Outcome != NotChecked || r.Verdict != Incomplete || !strings.Contains(pk.Problem, "UCX 1.12.0 and later use index 0, 0xffff") || !strings.Contains(pk.Problem, c.why)):
			t.Errorf("RoCE, UCX_IB_PKEY=%s: %+v, %s; want not checked: index 0 from UCX 1.12.0, %q before", c.v, pk, r.Verdict, c.why)
		}
	}
	// A value above 0x7fff fails on an InfiniBand port (the worker, so the host), not
	// on a RoCE one: not a rejection of the setting everywhere.
	roceH := port("h", "mlx5_2", 1, 0xffff)
	roceH.LinkLayer = "Ethernet"
	r := Resolve([]*Library{&UCX}, env("UCX_IB_PKEY=0x8001"), []*Port{port("h", "mlx5_0", 1, 0xffff, 0x8001), roceH})[0]
	if r.Verdict != DoesNotWork || len(r.Aborts) != 1 || r.Aborts[0].Device != "mlx5_0" || !strings.Contains(r.Setting, "UCX rejects it on InfiniBand ports (give UCX_IB_PKEY=0x0001), not on RoCE ports") {
		t.Errorf("UCX_IB_PKEY=0x8001 on InfiniBand and RoCE: %s, aborts %+v, setting %q", r.Verdict, r.Aborts, r.Setting)
	}
	r = Resolve([]*Library{&UCX}, env("UCX_RC_VERBS_PKEY=0x3"), []*Port{port("", "mlx5_0", 1, 0xffff)})[0]
	if r.Verdict != Incomplete {
		t.Errorf("a per-transport PKEY variable: verdict %s, want not-checked", r.Verdict)
	}
	// A value UCX cannot parse in the verbs transports' own variables fails their
	// interfaces, opened on every port (Debian's 1.13.1: "Invalid value for PKEY");
	// with UCX_TLS set they may not be opened.
	for _, name := range []string{"UCX_RC_VERBS_PKEY", "UCX_UD_VERBS_PKEY"} {
		r = Resolve([]*Library{&UCX}, env(name+"=8001"), []*Port{roce})[0]
		if r.Verdict != DoesNotWork || !strings.Contains(r.Setting, name+"=8001") {
			t.Errorf("%s=8001: %s, setting %q; want does not work", name, r.Verdict, r.Setting)
		}
		if r = Resolve([]*Library{&UCX}, env(name+"=8001", "UCX_TLS=rc_x"), []*Port{roce})[0]; r.Verdict != Incomplete {
			t.Errorf("%s=8001 UCX_TLS=rc_x: %s; want not checked", name, r.Verdict)
		}
	}
	// A name UCX does not read (its names are upper case) is a look-alike, not an
	// override that leaves the answer open.
	r = Resolve([]*Library{&UCX}, env("UCX_rc_PKEY=0x3"), []*Port{port("", "mlx5_0", 1, 0xffff)})[0]
	if l := LookAlikes(Env{"UCX_rc_PKEY": "0x3"}); r.Verdict != Works || len(l) != 1 {
		t.Errorf("UCX_rc_PKEY: verdict %s, look-alikes %q; want works and one look-alike", r.Verdict, l)
	}
}

// UCX_TLS: a list without InfiniBand transports opens no RDMA port, and UCX then
// reads no UCX_IB_PKEY (Debian's 1.13.1 on rxe: "unused env variable", the worker
// created; TestUCXOnKernel); a verbs transport or its alias opens them; what ibkey
// cannot follow is not checked.
func TestUCXTransports(t *testing.T) {
	roce := port("", "rxe0", 1, 0xffff)
	roce.LinkLayer = "Ethernet"
	for _, c := range []struct {
		tls     []string
		used    bool
		verdict Verdict
	}{
		{nil, true, Works},
		{[]string{"UCX_TLS=tcp"}, false, NotApplicable},
		{[]string{"UCX_TLS=sm,self,tcp", "UCX_IB_PKEY=8001"}, false, NotApplicable},
		{[]string{"UCX_TLS=tcp", "UCX_RC_VERBS_PKEY=0x3", "UCX_IB_PKEY=0xfffe"}, false, NotApplicable}, // nothing read: nothing left open
		// An empty list: "The TLs list is empty" (a real ucx_info 1.13.1 exits 244).
		{[]string{"UCX_TLS="}, false, DoesNotWork},
		{[]string{"UCX_TLS=^"}, false, DoesNotWork},
		{[]string{"UCX_TLS=,,"}, false, DoesNotWork},
		{[]string{"UCX_TLS=rc_v"}, true, Works},
		{[]string{"UCX_TLS=sm,self,ud"}, true, Works},
		{[]string{"UCX_TLS=all"}, true, Works},
		{[]string{"UCX_TLS=^tcp"}, true, Works},
		{[]string{"UCX_TLS=rc_v", "UCX_IB_PKEY=8001"}, true, DoesNotWork},
		{[]string{"UCX_TLS=^ib"}, true, Incomplete},
		{[]string{"UCX_TLS=rc_x,sm"}, true, Incomplete},
		{[]string{"UCX_TLS=tcp,efa_new"}, true, Incomplete},
		{[]string{"UCX_TLS=all,tcp"}, true, Incomplete},
	} {
		r := Resolve([]*Library{&UCX}, env(c.tls...), []*Port{roce})[0]
		if c.verdict == NotApplicable {
			if r.Verdict != c.verdict || r.Inactive == "" || len(r.Unchecked) > 0 {
				t.Errorf("%v: %s (%q, unchecked %q), want not applicable", c.tls, r.Verdict, r.Inactive, r.Unchecked)
			}
			continue
		}
		if r.Ports[0].Used != c.used || r.Verdict != c.verdict {
			t.Errorf("%v: used %v (%s), %s; want used %v, %s", c.tls, r.Ports[0].Used, r.Ports[0].Why, r.Verdict, c.used, c.verdict)
		}
		if !c.used && strings.Contains(r.Setting, "UCX_IB_PKEY") {
			t.Errorf("%v: setting %q, but UCX reads no UCX_IB_PKEY", c.tls, r.Setting)
		}
	}
}

// UCX_NET_DEVICES values that UCX 1.21 and later read differently from UCX before
// 1.21 (Debian 12's 1.13.1 takes "all,mlx5_0" and "^mlx5_0" as they are, ucx_info
// -c) leave the answer not checked, naming both readings, rather than failing or
// working as the newer UCX alone would.
func TestUCXNetDevicesVersions(t *testing.T) {
	p := port("", "mlx5_0", 1, 0xffff)
	for _, c := range []struct{ v, newer, older string }{
		// ucs_config_sscanf_allow_list_impl (1.21+): "all" must be the only name.
		{"all,mlx5_0", "Invalid value for NET_DEVICES", "uses every device"},
		{"mlx5_0,all", "use the ports named", "uses every device"},
		{"^mlx5_1:1", "every port not named", "has no '^'"},
		{"^all", "use every device", "uses every device"},
		{"mlx5_0", "every port of the device", "selects no port"},
	} {
		r := Resolve([]*Library{&UCX}, env("UCX_NET_DEVICES="+c.v), []*Port{p})[0]
		all := strings.Join(r.Unchecked, "\n")
		if r.Verdict != Incomplete || !strings.Contains(all, c.newer) || !strings.Contains(all, c.older) {
			t.Errorf("UCX_NET_DEVICES=%s: verdict %s, unchecked %q; want not checked naming %q and %q", c.v, r.Verdict, r.Unchecked, c.newer, c.older)
		}
	}
	for _, v := range []string{"all", "all,", "mlx5_0:1", ",mlx5_0:1,,mlx5_1:1"} {
		if r := Resolve([]*Library{&UCX}, env("UCX_NET_DEVICES="+v), []*Port{p})[0]; r.Verdict != Works || len(r.Unchecked) > 0 {
			t.Errorf("UCX_NET_DEVICES=%s: verdict %s, unchecked %q; every UCX reads it alike", v, r.Verdict, r.Unchecked)
		}
	}
}

func TestUCXNetDevices(t *testing.T) {
	for _, c := range []struct {
		v    string
		set  bool
		want string
	}{
		{"", false, "mlx5_0/1 mlx5_0/2 mlx5_1/1"},
		{"all", true, "mlx5_0/1 mlx5_0/2 mlx5_1/1"},
		{"mlx5_0:1", true, "mlx5_0/1"},
		{"mlx5_0", true, "mlx5_0/1 mlx5_0/2"},
		{"^mlx5_0:1", true, "mlx5_0/2 mlx5_1/1"},
		{"mlx5", true, ""}, // exact names, no prefix match
		{"", true, ""},
		// ucs_config_array_expand_ranges drops empty names: "all," is all.
		{"all,", true, "mlx5_0/1 mlx5_0/2 mlx5_1/1"},
		{",all", true, "mlx5_0/1 mlx5_0/2 mlx5_1/1"},
		{"mlx5_1,,", true, "mlx5_1/1"},
		{"^", true, "mlx5_0/1 mlx5_0/2 mlx5_1/1"},
		{"^all", true, "mlx5_0/1 mlx5_0/2 mlx5_1/1"},
	} {
		d := parseUCXDevices(c.v, c.set)
		var got []string
		for _, p := range [][2]any{{"mlx5_0", 1}, {"mlx5_0", 2}, {"mlx5_1", 1}} {
			if d.match(p[0].(string), p[1].(int)) {
				got = append(got, p[0].(string)+"/"+itoa(p[1].(int)))
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("UCX_NET_DEVICES=%q (set %v) selects %q, want %q", c.v, c.set, strings.Join(got, " "), c.want)
		}
	}
}

// NVSHMEM: index 0 before 3.7.0; NVSHMEM_IB_PKEY_INDEX from 3.7.0, checked against
// the table length (ibrc.cpp ep_create).
func TestNVSHMEMPKey(t *testing.T) {
	tbl := []int{0xffff, 0x8001, 0}
	runPicks(t, &NVSHMEM, []pickCase{
		{"unset is index 0", env(), tbl, Uses, 0, 0xffff, "every NVSHMEM version"},
		{"index 1", env("NVSHMEM_IB_PKEY_INDEX=1"), tbl, Uses, 1, 0x8001, "3.7.0"},
		{"hole", env("NVSHMEM_IB_PKEY_INDEX=2"), tbl, EmptyEntry, 2, 0, "empty entry"},
		{"beyond the table", env("NVSHMEM_IB_PKEY_INDEX=3"), tbl, Fails, 3, 0, "Invalid NVSHMEM_IB_PKEY_INDEX"},
		{"negative", env("NVSHMEM_IB_PKEY_INDEX=-1"), tbl, Fails, -1, 0, "Invalid NVSHMEM_IB_PKEY_INDEX"},
		// nvshmemi_getenv_int: (int)strtol(value, &end, 0); a failed conversion is
		// reported on stderr and its result used.
		{"not a number reads 0", env("NVSHMEM_IB_PKEY_INDEX=x"), tbl, Uses, 0, 0xffff, `"Environment variable conversion failed (x)" and uses 0`},
		{"empty reads 0", env("NVSHMEM_IB_PKEY_INDEX="), tbl, Uses, 0, 0xffff, "conversion failed"},
		{"hex", env("NVSHMEM_IB_PKEY_INDEX=0x1"), tbl, Uses, 1, 0x8001, ""},
		{"octal", env("NVSHMEM_IB_PKEY_INDEX=010"), tbl, Fails, 8, 0, "octal"},
		{"trailing text", env("NVSHMEM_IB_PKEY_INDEX=1k"), tbl, Uses, 1, 0x8001, `"k" after the number is ignored`},
		{"cut to int", env("NVSHMEM_IB_PKEY_INDEX=4294967297"), tbl, Uses, 1, 0x8001, "32-bit int: 1"},
		{"overflow is LONG_MAX as int", env("NVSHMEM_IB_PKEY_INDEX=99999999999999999999"), tbl, Fails, -1, 0, "conversion failed"},
	})
	r := Resolve([]*Library{&NVSHMEM}, env("NVSHMEM_REMOTE_TRANSPORT=ucx"), []*Port{port("", "mlx5_0", 1, 0xffff)})[0]
	if r.Verdict != NotApplicable || !strings.Contains(r.Inactive, "UCX") {
		t.Errorf("NVSHMEM over UCX: %s %q", r.Verdict, r.Inactive)
	}
}

// GASNet: GASNET_IBV_PKEY is a value, membership stripped, 2..0x7fff; the first entry
// of the key wins whatever its membership (gasnet_core.c get_pkey, gasnetc_probe_ports).
func TestGASNetPKey(t *testing.T) {
	tbl := []int{0xffff, 0x0002, 0x8002, 0x8003}
	runPicks(t, &GASNet, []pickCase{
		{"unset is index 0", env(), tbl, Uses, 0, 0xffff, ""},
		{"first entry, even limited", env("GASNET_IBV_PKEY=0x8002"), tbl, Uses, 1, 0x0002, "whatever its membership"},
		{"decimal", env("GASNET_IBV_PKEY=3"), tbl, Uses, 3, 0x8003, ""},
		{"key 1 is refused", env("GASNET_IBV_PKEY=1"), tbl, Fails, -1, 0, "Invalid GASNET_IBV_PKEY"},
		{"not found", env("GASNET_IBV_PKEY=0x9"), tbl, Fails, -1, 0, "Failed to locate index"},
		{"unreadable before the match", env("GASNET_IBV_PKEY=0x3"), []int{0xffff, unread, 0x8003}, NotChecked, -1, 0, "fatal"},
		// gasneti_parse_int: no octal, never refuses, a '.' in hex is fatal.
		{"010 is ten", env("GASNET_IBV_PKEY=010"), []int{0xffff, 0x8008, 0x800a}, Uses, 2, 0x800a, ""},
		{"-1 is unset", env("GASNET_IBV_PKEY=-1"), tbl, Uses, 0, 0xffff, "unset"},
		{"not a number is 0, refused", env("GASNET_IBV_PKEY=abc"), tbl, Fails, -1, 0, "Invalid GASNET_IBV_PKEY 'abc'"},
		{"0b is not binary", env("GASNET_IBV_PKEY=0b11"), tbl, Fails, -1, 0, "Invalid GASNET_IBV_PKEY"},
		{"_ ends the number", env("GASNET_IBV_PKEY=3_0"), tbl, Uses, 3, 0x8003, ""},
		{"fraction truncated", env("GASNET_IBV_PKEY=3.9"), tbl, Uses, 3, 0x8003, ""},
		{"'.' in hex is fatal", env("GASNET_IBV_PKEY=0x3.0"), tbl, Fails, -1, 0, "Format error in numerical string"},
		{"sign then white space", env("GASNET_IBV_PKEY=+ 3"), tbl, Uses, 3, 0x8003, ""},
		{"white space then sign is 0", env("GASNET_IBV_PKEY= -3"), tbl, Fails, -1, 0, "Invalid"},
		{"trailing text ignored", env("GASNET_IBV_PKEY=0x3zz"), tbl, Uses, 3, 0x8003, ""},
		{"%0 decoded", env("GASNET_IBV_PKEY=%033"), tbl, Uses, 3, 0x8003, ""},
		{"%0 kept when decoding is off", env("GASNET_IBV_PKEY=%033", "GASNET_DISABLE_ENVDECODE=1"), tbl, Fails, -1, 0, "Invalid"},
		{"huge fraction undefined", env("GASNET_IBV_PKEY=9999999999999999999.5"), tbl, NotChecked, -1, 0, "undefined in C"},
	})
}

// gasneti_parse_int(s, 0) as GASNet's gasnet_tools.c reads it (values worked from the
// source: 64-bit wrap, 80 digits at most, the sign only first).
func TestGASNetParseInt(t *testing.T) {
	for in, want := range map[string]int64{
		"": 0, "-": 0, "12": 12, "-12": -12, "010": 10, "0x1F": 31, "0X": 0, "0x": 0, " \t7": 7,
		"- 7": -7, " -7": 0, "7 8": 7, "1e3": 1, "2.5": 2, "-2.5": -2, "1.5.9": 1, ".": 0, "..7": 0, ".7": 0,
		"18446744073709551615": -1, "18446744073709551617": 1, "0x10000000000000003": 3,
		strings.Repeat("0", 79) + "12": 1, "0x8001": 0x8001, "32769": 0x8001,
	} {
		if got, fatal, undefined := gasnetParseInt(in); got != want || fatal || undefined {
			t.Errorf("gasnetParseInt(%q) = %d %v %v, want %d", in, got, fatal, undefined, want)
		}
	}
	for _, in := range []string{"0x1.0", "0x.", "-0x2."} {
		if _, fatal, _ := gasnetParseInt(in); !fatal {
			t.Errorf("gasnetParseInt(%q): not fatal", in)
		}
	}
}

// Each GASNET_IBV_PORTS entry serves one port (gasnetc_match_port marks it
// matched), and the list is walked last entry first (gasnetc_add_port prepends): a
// wildcard listed after an entry for port 1 is what port 1 takes.
func TestGASNetPortEntries(t *testing.T) {
	host := []*Port{port("", "mlx5_0", 1, 0xffff), port("", "mlx5_0", 2, 0xffff), port("", "mlx5_1", 1, 0xffff)}
	for _, c := range []struct{ ports, want string }{
		{"mlx5_0", "mlx5_0/1"},
		{"mlx5_0+mlx5_0", "mlx5_0/1 mlx5_0/2"},
		{"mlx5_0:1+mlx5_0", "mlx5_0/1"},
		{"mlx5_0+mlx5_0:1", "mlx5_0/1 mlx5_0/2"},
		{"mlx5_0:2+mlx5_0", "mlx5_0/1 mlx5_0/2"},
		{"mlx5_0:1,1", "mlx5_0/1"},
		{"mlx5_1+mlx5_0", "mlx5_0/1"}, // one HCA, in device order
	} {
		in := env("GASNET_IBV_PORTS=" + c.ports)
		var got []string
		for _, pr := range Resolve([]*Library{&GASNet}, in, host)[0].Ports {
			if pr.Used {
				got = append(got, pr.Port.Label())
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("GASNET_IBV_PORTS=%q uses %q, want %q", c.ports, strings.Join(got, " "), c.want)
		}
	}
}

func TestGASNetPorts(t *testing.T) {
	host := []*Port{port("", "mlx5_0", 1, 0xffff), port("", "mlx5_0", 2, 0xffff), port("", "mlx5_1", 1, 0xffff)}
	host[0].State = "DOWN"
	for _, c := range []struct {
		ports, want string
	}{
		{"(unset)", "mlx5_0/2"},
		{"", "mlx5_0/2"}, // set and empty: GASNETC_DEFAULT_IBV_PORTS, no list
		{"mlx5_1", "mlx5_1/1"},
		{"mlx5_0:1,2", "mlx5_0/2"}, // port 1 is DOWN
		{"mlx5_9", ""},
		// gasnetc_parse_ports: atoi per port, a ':' at the end is every port.
		{"mlx5_0:", "mlx5_0/2"},
		{"mlx5_0: 2x,", "mlx5_0/2"},
		{"mlx5_0:2,,1", ""}, // the empty port fails the whole list
		{"+", ""},
	} {
		in := env()
		if c.ports != "(unset)" {
			in.Env["GASNET_IBV_PORTS"] = c.ports
		}
		r := Resolve([]*Library{&GASNet}, in, host)[0]
		var got []string
		for _, pr := range r.Ports {
			if pr.Used {
				got = append(got, pr.Port.Label())
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("GASNET_IBV_PORTS=%q uses %q, want %q", c.ports, strings.Join(got, " "), c.want)
		}
	}
}

// MVAPICH2: MV2_DEFAULT_PKEY is strtol base 0 & 0x7fff; 0 means index 0 (the
// MV2_DEFAULT_PKEY_IX option went before 1.2); else the first entry of the key
// (ibv_param.c, rdma_iba_priv.c).
func TestMVAPICH2PKey(t *testing.T) {
	tbl := []int{0xffff, 0x0002, 0x8002}
	runPicks(t, &MVAPICH2, []pickCase{
		{"unset is index 0", env(), tbl, Uses, 0, 0xffff, ""},
		{"first entry, even limited", env("MV2_DEFAULT_PKEY=0x8002"), tbl, Uses, 1, 0x0002, "whatever its membership"},
		{"0x8000 masks to 0: index 0", env("MV2_DEFAULT_PKEY=0x8000", "MV2_DEFAULT_PKEY_IX=2"), tbl, Uses, 0, 0xffff, "means unset"},
		{"MV2_DEFAULT_PKEY_IX is not read", env("MV2_DEFAULT_PKEY_IX=2"), tbl, Uses, 0, 0xffff, "MV2_DEFAULT_PKEY_IX=2 is not read"},
		{"past 16 bits", env("MV2_DEFAULT_PKEY=0x18002"), tbl, Uses, 1, 0x0002, ""},
		{"not found aborts", env("MV2_DEFAULT_PKEY=5"), tbl, Fails, -1, 0, "Can't find PKEY INDEX"},
		{"port 1 given", env("MV2_DEFAULT_PORT=1"), tbl, Uses, 0, 0xffff, ""},
		{"MV2_NUM_PORTS=2 is cut to 1", env("MV2_DEFAULT_PORT=1", "MV2_NUM_PORTS=2"), tbl, Uses, 0, 0xffff, "MV2_NUM_PORTS=2 is cut to 1"},
		{"port 0 aborts", env("MV2_DEFAULT_PORT=0"), tbl, Fails, -1, 0, "reads as port 0"},
		{"port text aborts", env("MV2_DEFAULT_PORT=one"), tbl, Fails, -1, 0, "reads as port 0"},
	})
	// MV2_DEFAULT_PORT names the port on every HCA; rdma_iba_hca_init aborts when it is
	// not ACTIVE on an HCA MVAPICH2 opens.
	down := port("", "mlx5_0", 2, 0xffff)
	down.State = "DOWN"
	up := port("", "mlx5_0", 1, 0xffff)
	for _, c := range []struct {
		in   Inputs
		want Verdict
	}{
		{env("MV2_DEFAULT_PORT=2", "MV2_IBA_HCA=mlx5_0"), DoesNotWork},
		{env("MV2_DEFAULT_PORT=1", "MV2_IBA_HCA=mlx5_0"), Works},
		{env("MV2_DEFAULT_PORT=-1", "MV2_IBA_HCA=mlx5_0"), Works},
		{env(), Works}, // port 3 holds no table entry 0, but MVAPICH2 scans ports 1 and 2 only
		{env("MV2_DEFAULT_PORT=3"), DoesNotWork},
	} {
		if r := Resolve([]*Library{&MVAPICH2}, c.in, []*Port{up, down, port("", "mlx5_0", 3, 0)})[0]; r.Verdict != c.want {
			t.Errorf("%v: %s, want %s", c.in.Env, r.Verdict, c.want)
		}
	}
}

// Open MPI openib: value masked 0x7fff; the first entry of the key; a port without it
// is left out (btl_openib_component.c init_one_device).
func TestOpenMPIPKey(t *testing.T) {
	tbl := []int{0xffff, 0x0002, 0x8002}
	// Open MPI 4.x's openib BTL uses InfiniBand ports only with allow_ib (init_one_port).
	ompi := func(kv ...string) Inputs { return env(append(kv, "OMPI_MCA_btl_openib_allow_ib=1")...) }
	runPicks(t, &OpenMPI, []pickCase{
		{"unset is index 0", ompi(), tbl, Uses, 0, 0xffff, ""},
		{"first entry", ompi("OMPI_MCA_btl_openib_pkey=0x8002"), tbl, Uses, 1, 0x0002, "whatever its membership"},
		{"synonym", ompi("OMPI_MCA_btl_openib_ib_pkey_val=2"), tbl, Uses, 1, 0x0002, ""},
		{"port left out", ompi("OMPI_MCA_btl_openib_pkey=7"), tbl, Skips, -1, 0, "leaves every port out"},
		// int_from_string: strtoull(s, &end, 0), no error for text after the number.
		{"not a number reads 0", ompi("OMPI_MCA_btl_openib_pkey=x"), tbl, Uses, 0, 0xffff, "reads as key 0"},
		{"octal", ompi("OMPI_MCA_btl_openib_pkey=010"), []int{0xffff, 0x800a, 0x8008}, Uses, 2, 0x8008, ""},
		{"k multiplies by 1024", ompi("OMPI_MCA_btl_openib_pkey=1k"), []int{0xffff, 0x8400}, Uses, 1, 0x8400, "partition 0x0400"},
		{"text after the number", ompi("OMPI_MCA_btl_openib_pkey= 2z"), tbl, Uses, 1, 0x0002, ""},
		{"-1 is refused, 0 kept", ompi("OMPI_MCA_btl_openib_pkey=-1"), tbl, Uses, 0, 0xffff, "Open MPI refuses"},
		{"past 32 bits is refused, not cut", ompi("OMPI_MCA_btl_openib_pkey=0x100000002"), tbl, Uses, 0, 0xffff, "Open MPI refuses"},
		{"the synonym is read last", ompi("OMPI_MCA_btl_openib_pkey=3", "OMPI_MCA_btl_openib_ib_pkey_val=2"), tbl, Uses, 1, 0x0002, "ib_pkey_val=2"},
		{"a refused synonym keeps the value", ompi("OMPI_MCA_btl_openib_pkey=2", "OMPI_MCA_btl_openib_ib_pkey_val=-1"), tbl, Uses, 1, 0x0002, "keeps the value it had (key 0x0002)"},
		{"a refused pkey stops the synonym", ompi("OMPI_MCA_btl_openib_pkey=-1", "OMPI_MCA_btl_openib_ib_pkey_val=2"), tbl, Uses, 0, 0xffff, "refuses"},
		{"the long name first", ompi("OMPI_MCA_opal_btl_openib_pkey=2", "OMPI_MCA_btl_openib_pkey=3"), tbl, Uses, 1, 0x0002, ""},
	})
	// init_one_device looks the key up on every ACTIVE port, RoCE ones too: there
	// only the one entry, 0xffff, is found (init_one_port refuses only InfiniBand
	// ports without allow_ib).
	roce := port("", "mlx5_2", 1, 0xffff)
	roce.LinkLayer = "Ethernet"
	for _, c := range []struct {
		pkey    string
		outcome Outcome
		index   int
	}{{"", Uses, 0}, {"0x7fff", Uses, 0}, {"0x8005", Skips, -1}} {
		in := ompi()
		if c.pkey != "" {
			in = ompi("OMPI_MCA_btl_openib_pkey=" + c.pkey)
		}
		if pk, _ := pickOn(t, &OpenMPI, in, roce); pk.Outcome != c.outcome || pk.Index != c.index {
			t.Errorf("RoCE, btl_openib_pkey=%q: %s index %d (%s), want %s index %d", c.pkey, pk.Outcome, pk.Index, pk.Problem, c.outcome, c.index)
		}
	}
	// With allow_ib, a wanted value is looked up on RoCE ports too: it applies there.
	if w := WantPartition([]*Library{&OpenMPI}, ompi(), check.PKey(0xffff), []*Port{roce})[0]; w.Verdict != Works || slices.ContainsFunc(w.Notes, func(n string) bool { return strings.Contains(n, "does not apply") }) {
		t.Errorf("--want 0xffff on RoCE: %s, notes %q: want works, the value looked up", w.Verdict, w.Notes)
	}
	// A wanted partition not on a RoCE port: the export makes openib skip it, as
	// Resolve says; a host left with no port is a finding.
	for _, c := range []struct {
		ports   []*Port
		verdict Verdict
	}{{[]*Port{port("", "mlx5_0", 1, 0xffff, 0x8005), roce}, Works}, {[]*Port{roce}, DoesNotWork}} {
		if w := WantPartition([]*Library{&OpenMPI}, ompi(), check.PKey(0x8005), c.ports)[0]; w.Verdict != c.verdict || !strings.Contains(strings.Join(slices.Concat(w.Notes, w.Findings), " "), "mlx5_2/1") {
			t.Errorf("--want 0x8005 with %d ports, one RoCE: %s (%q, %q), want %s naming the RoCE port", len(c.ports), w.Verdict, w.Notes, w.Findings, c.verdict)
		}
	}
	// Without allow_ib, init_one_port refuses InfiniBand ports only: openib is not
	// applicable to a job without a RoCE port it lists, and runs on the RoCE ports
	// of one that has them, unless an ACTIVE InfiniBand port it lists reaches
	// init_one_port (key 0, or the key found there): init_one_device then fails and
	// btl_openib_component_init gives up every device, or not if a RoCE BTL came
	// first (NUMA order): where it runs it uses the RoCE entries, a note, and where
	// no RoCE port holds the key no RoCE BTL can come first: not applicable.
	ib := port("", "mlx5_0", 1, 0xffff, 0x8005)
	vpi := port("", "mlx5_0", 2, 0xffff)
	vpi.LinkLayer = "Ethernet"
	unreadLL := port("", "mlx5_3", 1, 0xffff)
	unreadLL.LinkLayer = ""
	for _, c := range []struct {
		what    string
		kv      []string
		ports   []*Port
		verdict Verdict
		used    []bool // per port
	}{
		{"InfiniBand only", nil, []*Port{ib}, NotApplicable, nil},
		{"RoCE only", nil, []*Port{roce}, Works, []bool{true}},
		{"RoCE and an InfiniBand port, key 0", nil, []*Port{ib, roce}, Works, []bool{false, true}},
		{"RoCE and an InfiniBand port holding the key", []string{"OMPI_MCA_btl_openib_pkey=5"}, []*Port{ib, roce}, NotApplicable, nil},
		{"RoCE and an InfiniBand port without the key", []string{"OMPI_MCA_btl_openib_pkey=0x7fff"}, []*Port{port("", "mlx5_0", 1, 0x8005), roce}, Works, []bool{false, true}},
		{"RoCE skips the key", []string{"OMPI_MCA_btl_openib_pkey=5"}, []*Port{port("", "mlx5_0", 1, 0xffff), roce}, DoesNotWork, []bool{false, true}},
		{"RoCE not listed", []string{"OMPI_MCA_btl_openib_if_include=mlx5_0"}, []*Port{ib, roce}, NotApplicable, nil},
		{"a RoCE port after an InfiniBand one", nil, []*Port{ib, vpi}, Works, []bool{false, true}},
		// A port whose link layer was not read may be RoCE: openib may run there, so
		// it is not "not applicable", and that port's pick is not checked.
		{"an InfiniBand port and one whose link layer was not read", nil, []*Port{ib, unreadLL}, Incomplete, []bool{false, true}},
	} {
		r := Resolve([]*Library{&OpenMPI}, env(c.kv...), c.ports)[0]
		var used []bool
		for _, pr := range r.Ports {
			used = append(used, pr.Used)
		}
		if r.Verdict != c.verdict || !slices.Equal(used, c.used) {
			t.Errorf("allow_ib unset, %s: %s (%s%s), ports used %v, want %s, %v", c.what, r.Verdict, r.Inactive, r.Findings, used, c.verdict, c.used)
		}
		// Where the order decides whether it runs at all, a note says so.
		order := slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "by NUMA distance") })
		if want := c.verdict != NotApplicable && len(c.ports) > 1 && c.ports[0].LinkLayer != "Ethernet" && c.kv == nil; order != want {
			t.Errorf("allow_ib unset, %s: a note on the device order: %v, want %v (%q)", c.what, order, want, r.Notes)
		}
		// A gate's export has nothing to put in a partition on RoCE ports.
		if w := WantPartition([]*Library{&OpenMPI}, env(c.kv...), check.PKey(0x8005), c.ports)[0]; w.Verdict != NotApplicable {
			t.Errorf("allow_ib unset, %s: --want gives %s, want not applicable", c.what, w.Verdict)
		}
	}
	r := Resolve([]*Library{&OpenMPI}, env("OMPI_MCA_pml=ucx"), []*Port{port("", "mlx5_0", 1, 0xffff)})[0]
	if r.Verdict != NotApplicable {
		t.Errorf("pml ucx: %s", r.Verdict)
	}
	// OMPI_MCA_btl and OMPI_MCA_pml are component lists
	// (mca_base_component_parse_requested), checked with a real Open MPI 4.1.4:
	// btl_base_verbose shows openib opened or not, pml_base_verbose that pml ^ucx
	// took cm there (by priority), and '^' past the start fails MPI_Init.
	for _, c := range []struct {
		kv      []string
		verdict Verdict
		text    string
	}{
		{[]string{"OMPI_MCA_btl=self,tcp"}, NotApplicable, "not opened"},
		{[]string{"OMPI_MCA_btl=^openib"}, NotApplicable, "not opened"},
		// Names are not trimmed: " openib" is no component, and MPI_Init stops
		// (TestComponentListsAgainstMPIInit runs the real one).
		{[]string{"OMPI_MCA_btl= openib,self"}, DoesNotWork, `no BTL is named " openib"`},
		{[]string{"OMPI_MCA_opal_btl=self,openib", "OMPI_MCA_btl=tcp"}, Works, ""},
		{[]string{"OMPI_MCA_btl=self,,openib"}, Works, ""},
		{[]string{"OMPI_MCA_btl=^^tcp"}, Works, ""},
		{[]string{"OMPI_MCA_btl=^tcp,^self"}, DoesNotWork, "'^' may only start the list"},
		{[]string{"OMPI_MCA_pml=ob1"}, Works, ""},
		{[]string{"OMPI_MCA_pml=^ob1"}, NotApplicable, "pml ob1 is not selected"},
		{[]string{"OMPI_MCA_ompi_pml=ucx", "OMPI_MCA_pml=ob1"}, NotApplicable, "pml ob1 is not selected"},
		{[]string{"OMPI_MCA_pml=^ucx"}, Incomplete, "choose among several PMLs"},
		{[]string{"OMPI_MCA_pml=cm,ob1"}, Incomplete, "choose among several PMLs"},
		{[]string{"OMPI_MCA_pml="}, Incomplete, "choose among several PMLs"},
		// A PML choice decides nothing when openib is not opened anyway (Debian's
		// openmpi-mca-params.conf sets both lines).
		{[]string{"OMPI_MCA_pml=^ucx", "OMPI_MCA_btl=^uct,openib,ofi"}, NotApplicable, "not opened"},
	} {
		r := Resolve([]*Library{&OpenMPI}, ompi(c.kv...), []*Port{port("", "mlx5_0", 1, 0xffff)})[0]
		all := strings.Join(append([]string{r.Inactive, r.Setting}, r.Unchecked...), "\n")
		if r.Verdict != c.verdict || !strings.Contains(all, c.text) {
			t.Errorf("%q: %s (%s), want %s with %q", c.kv, r.Verdict, all, c.verdict, c.text)
		}
		if c.verdict == NotApplicable && len(r.Unchecked) > 0 {
			t.Errorf("%q: not applicable, yet not checked: %q", c.kv, r.Unchecked)
		}
	}
	// btl_openib_component_init: if_include with if_exclude is "specified include and
	// exclude", and the openib BTL makes no BTL at all.
	r = Resolve([]*Library{&OpenMPI}, ompi("OMPI_MCA_btl_openib_if_include=mlx5_0", "OMPI_MCA_btl_openib_if_exclude=mlx5_1"), []*Port{port("", "mlx5_0", 1, 0xffff)})[0]
	if r.Verdict != NotApplicable {
		t.Errorf("if_include and if_exclude: %s, want not-applicable", r.Verdict)
	}
	// An empty if_include is no list (var_set_string stores NULL): every port.
	r = Resolve([]*Library{&OpenMPI}, ompi("OMPI_MCA_btl_openib_if_include="), []*Port{port("", "mlx5_0", 1, 0xffff)})[0]
	if r.Verdict != Works {
		t.Errorf("an empty if_include: %s, want works", r.Verdict)
	}
	// btl_openib_allow_ib, a bool (mca_base_var_enum_bool_vfs): strtol base 10 with
	// nothing after it, or true/t/enabled/yes/y; anything else is refused (false stays).
	for v, allowed := range map[string]bool{"": false, "1": true, " 2": true, "0": false, "yes": true, "y": true, "enabled": true, "TRUE": false, "0x1": false, "no": false} {
		e := env("OMPI_MCA_btl_openib_allow_ib=" + v)
		if v == "" {
			e = env() // unset: false
		}
		r = Resolve([]*Library{&OpenMPI}, e, []*Port{port("", "mlx5_0", 1, 0xffff)})[0]
		if got := r.Verdict != NotApplicable; got != allowed {
			t.Errorf("btl_openib_allow_ib=%q: verdict %s, want InfiniBand ports used: %v", v, r.Verdict, allowed)
		}
	}
	r = Resolve([]*Library{&OpenMPI}, env("OMPI_MCA_opal_btl_openib_allow_ib=0", "OMPI_MCA_btl_openib_allow_ib=1"), []*Port{port("", "mlx5_0", 1, 0xffff)})[0]
	if r.Verdict != NotApplicable || !strings.Contains(r.Setting+r.Inactive, "uses no InfiniBand port") {
		t.Errorf("the long name first: %s %q", r.Verdict, r.Inactive)
	}
}

// perftest: --pkey_index, default 0; above the device's max_pkeys-1 it becomes 0
// (perftest_parameters.c ctx_chk_pkey_index), which on InfiniBand is the table's last
// index; otherwise ibv_modify_qp gets it as a uint16_t (perftestPick).
func TestPerftest(t *testing.T) {
	a := ParsePerftestArgs("ib_send_bw -d mlx5_1 -i 2 --pkey_index=3 peer")
	if a.Device != "mlx5_1" || a.Port != 2 || a.PKeyIdx != 3 || !a.Given || a.BadValue != "" {
		t.Errorf("parsed %+v", a)
	}
	a = ParsePerftestArgs("ib_write_bw --ib-dev=mlx5_0 --ib-port 1 --pkey_index 0x2")
	if a.Device != "mlx5_0" || a.Port != 1 || a.PKeyIdx != 2 {
		t.Errorf("parsed %+v", a)
	}
	if a = ParsePerftestArgs("ib_send_bw --pkey_index=2x"); a.BadValue == "" {
		t.Error("--pkey_index=2x: perftest rejects it")
	}
	// CHECK_VALUE (perftest_parameters.h): (type)strtol(optarg, &end, 0), refused
	// when *end is not NUL; -i below 1 is refused after the uint8_t cast.
	for _, c := range []struct {
		line     string
		port, ix int
		bad      string
	}{
		{"ib_send_bw --pkey_index=", 1, 0, ""},
		{"ib_send_bw --pkey_index=010", 1, 8, ""},
		{"ib_send_bw --pkey_index=4294967298", 1, 2, ""},
		{"ib_send_bw -i 257", 1, 0, ""},
		{"ib_send_bw -i0x2", 2, 0, ""},
		{"ib_send_bw -i 256", 0, 0, "IB Port can't be less than 1"},
		{"ib_send_bw -i 0", 0, 0, "IB Port can't be less than 1"},
		{"ib_send_bw -i=1", 0, 0, "IB Port argument =1 should be uint8_t"},
		{"ib_send_bw -i 1z --pkey_index=x", 1, 0, "IB Port argument 1z should be uint8_t"},
		{"ib_send_bw --pkey_index=0x", 1, 0, "Pkey index argument 0x should be int"},
		// getopt_long: unique prefixes of long options, clusters of short ones, values
		// of other options skipped, "--" ends the options.
		{"ib_send_bw --pk=3 --ib-p 2", 2, 3, ""},
		{"ib_send_bw -ai2", 2, 0, ""},
		{"ib_send_bw -p -i", 1, 0, ""},
		{"ib_send_bw -a -F -i 2 -s 8 -- -i 3", 2, 0, ""},
		{"ib_send_bw --pkey_index -1", 1, -1, ""},
	} {
		a := ParsePerftestArgs(c.line)
		if a.Port != c.port || a.PKeyIdx != c.ix || (c.bad == "") != (a.BadValue == "") || !strings.Contains(a.BadValue, c.bad) {
			t.Errorf("%s: port %d index %d refused %q, want %d %d %q", c.line, a.Port, a.PKeyIdx, a.BadValue, c.port, c.ix, c.bad)
		}
	}
	if a = ParsePerftestArgs("ib_send_bw -Fdmlx5_1 --ib-d mlx5_2"); a.Device != "mlx5_2" {
		t.Errorf("-Fdmlx5_1 --ib-d mlx5_2: the last -d wins, got %q", a.Device)
	}
	if a = ParsePerftestArgs("ib_send_bw -d=mlx5_0"); a.Device != "=mlx5_0" {
		t.Errorf("-d=mlx5_0: getopt gives the device %q, ibkey %q", "=mlx5_0", a.Device)
	}
	tbl := []int{0xffff, 0x8001, 0}
	pf := func(line string) Inputs { a := ParsePerftestArgs(line); return Inputs{Env: Env{}, Perftest: &a} }
	runPicks(t, &Perftest, []pickCase{
		{"default", pf("ib_send_bw"), tbl, Uses, 0, 0xffff, ""},
		{"index 1", pf("ib_send_bw --pkey_index=1"), tbl, Uses, 1, 0x8001, ""},
		{"beyond the table becomes 0", pf("ib_send_bw --pkey_index=7"), tbl, Uses, 0, 0xffff, "Changing to 0"},
		{"hole", pf("ib_send_bw --pkey_index=2"), tbl, EmptyEntry, 2, 0, "empty"},
		// A negative index reaches ibv_modify_qp as its uint16_t: beyond an InfiniBand
		// table the driver refuses it (usesIndex); on RoCE see below.
		{"negative", pf("ib_send_bw --pkey_index=-1"), tbl, Fails, 65535, 0, "outside"},
		{"negative, 16 bits in the table", pf("ib_send_bw --pkey_index=-65535"), tbl, Uses, 1, 0x8001, "gets index 1"},
		{"INT_MIN is index 0", pf("ib_send_bw --pkey_index=2147483648"), tbl, Uses, 0, 0xffff, "negative"},
		{"rdma_cm chooses the P_Key", pf("ib_send_bw -R --pkey_index=1"), tbl, NotChecked, -1, 0, "rdma_cm"},
		{"--rd is --rdma_cm", pf("ib_send_bw --rd"), tbl, NotChecked, -1, 0, "rdma_cm"},
		{"-z only exchanges over rdma_cm", pf("ib_send_bw -z --pkey_index=1"), tbl, Uses, 1, 0x8001, ""},
	})
	// RoCE: max_pkeys is not the table's size (rxe: 64, one entry), so only 65535 and
	// above are known to become 0; below, rxe's ibv_modify_qp takes the index (the
	// kernel lab: TestPerftestOnKernel).
	for _, c := range []struct {
		line    string
		outcome Outcome
		index   int
	}{
		{"ib_send_bw --pkey_index=1", NotChecked, -1},
		{"ib_send_bw --pkey_index=65534", NotChecked, -1},
		{"ib_send_bw --pkey_index=65535", Uses, 0},
		{"ib_send_bw --pkey_index=70000", Uses, 0},
		{"ib_send_bw --pkey_index=-1", NotChecked, 65535},
		{"ib_send_bw --pkey_index=-65536", Uses, 0},
	} {
		p := port("", "roce0", 1, 0xffff)
		p.LinkLayer = "Ethernet"
		if pk, _ := pickOn(t, &Perftest, pf(c.line), p); pk.Outcome != c.outcome || pk.Index != c.index {
			t.Errorf("RoCE, %s: %s index %d (%s), want %s index %d", c.line, pk.Outcome, pk.Index, pk.Problem, c.outcome, c.index)
		}
	}
	// rdma_rxe: max_pkeys 64 (rxe_param.h, read by ibv_query_device), and its
	// ibv_modify_qp takes any index and sends 0xffff (the kernel lab:
	// TestPerftestOnKernel, TestPKeyIndexOnKernel).
	for _, c := range []struct {
		line  string
		index int
		note  string
	}{
		{"ib_send_bw --pkey_index=1", 1, "rdma_rxe takes any index"},
		{"ib_send_bw --pkey_index=63", 63, "rdma_rxe takes any index"},
		{"ib_send_bw --pkey_index=64", 0, "above rdma_rxe's max_pkeys-1 (63)"},
		{"ib_send_bw --pkey_index=-1", 65535, "rdma_rxe takes any index"},
	} {
		p := port("", "rxe0", 1, 0xffff)
		p.LinkLayer, p.Driver = "Ethernet", "rdma_rxe"
		p.MaxPKeys, p.MaxPKeysRead = 64, true
		pk, _ := pickOn(t, &Perftest, pf(c.line), p)
		if pk.Outcome != Uses || pk.Index != c.index || pk.PKey != 0xffff || !strings.Contains(strings.Join(pk.Notes, "; "), c.note) {
			t.Errorf("rdma_rxe, %s: %s index %d %s %q, want uses index %d 0xffff (%s)", c.line, pk.Outcome, pk.Index, pk.PKey, pk.Notes, c.index, c.note)
		}
	}
	if r := Resolve([]*Library{&Perftest}, pf("ib_send_bw -aR"), []*Port{port("", "mlx5_0", 1, 0xffff)})[0]; r.Verdict != Incomplete {
		t.Errorf("perftest -R: %s, want incomplete", r.Verdict)
	}
	testPerftestMaxPKeys(t, pf)
	// -O/--dualport (perftest_parameters.c): ib_port = 1, ib_port2 = 2, and half the
	// QPs take ib_port2 with the same pkey_index (ctx_modify_qp_to_init); a later -i
	// changes ib_port only. The index on port 2 matters too.
	for _, c := range []struct {
		line string
		used string
	}{
		{"ib_send_bw -O --pkey_index=1", "mlx5_0/1 mlx5_0/2"},
		{"ib_send_bw --dua --pkey_index=1", "mlx5_0/1 mlx5_0/2"},
		{"ib_send_bw -i 2 -O --pkey_index=1", "mlx5_0/1 mlx5_0/2"},
		{"ib_send_bw -O -i 3 --pkey_index=1", "mlx5_0/2 mlx5_0/3"},
		{"ib_send_bw --pkey_index=1", "mlx5_0/1"},
	} {
		ports := []*Port{port("", "mlx5_0", 1, 0xffff, 0x8001), port("", "mlx5_0", 2, 0xffff, 0), port("", "mlx5_0", 3, 0xffff, 0x8001)}
		r := Resolve([]*Library{&Perftest}, pf(c.line), ports)[0]
		var used []string
		for _, pr := range r.Ports {
			if pr.Used {
				used = append(used, pr.Port.Label())
			}
		}
		if strings.Join(used, " ") != c.used {
			t.Errorf("%s: uses %q, want %q", c.line, strings.Join(used, " "), c.used)
		}
		if strings.Contains(c.used, "/2") && r.Verdict != DoesNotWork {
			t.Errorf("%s: index 1 of port 2 is empty: verdict %s, want does-not-work", c.line, r.Verdict)
		}
	}
}

func TestParseC(t *testing.T) {
	for _, c := range []struct {
		in     string
		base   int
		v      int64
		digits bool
		rest   string
	}{
		{"12", 0, 12, true, ""}, {"0x1f", 0, 31, true, ""}, {"010", 0, 8, true, ""},
		{"08", 0, 0, true, "8"}, {"0x", 0, 0, true, "x"}, {" -3z", 0, -3, true, "z"},
		{"abc", 0, 0, false, "abc"}, {"", 10, 0, false, ""}, {"010", 10, 10, true, ""},
	} {
		n := parseC(c.in, c.base)
		if n.Value != c.v || n.Digits != c.digits || n.Rest != c.rest {
			t.Errorf("parseC(%q, %d) = %+v, want %d %v %q", c.in, c.base, n, c.v, c.digits, c.rest)
		}
	}
	// Overflow as strtoll: ERANGE and saturation, checked against strconv.ParseInt
	// (base 0: 0x hex, a leading 0 octal) on numbers around 2^63 and 2^64 in each
	// base, 0x10000000000000010 among them (its accumulation wraps 2^64 to 16).
	rng := rand.New(rand.NewPCG(23, 2026))
	digits := map[int]string{8: "01234567", 10: "0123456789", 16: "0123456789abcdef"}
	prefix := map[int]string{8: "0", 10: "", 16: "0x"}
	for i := 0; i < 20000; i++ {
		base := []int{8, 10, 16}[i%3]
		n := 18 + rng.IntN(8) // around 2^63 and 2^64 in base 10, past them in 16 and 8
		if base == 8 {
			n += 3
		}
		b := []byte{digits[base][1+rng.IntN(len(digits[base])-1)]}
		for len(b) < n-5+rng.IntN(6) {
			b = append(b, digits[base][rng.IntN(len(digits[base]))])
		}
		in := prefix[base] + string(b)
		if rng.IntN(2) == 0 {
			in = "-" + in
		}
		want, err := strconv.ParseInt(in, 0, 64)
		got := parseC(in, 0)
		if got.Value != want || got.Overflow != (err != nil) || !got.Digits || got.Rest != "" {
			t.Fatalf("parseC(%q, 0) = %+v, want %d (overflow %v)", in, got, want, err != nil)
		}
	}
}

func TestEnvFile(t *testing.T) {
	e, err := ReadEnvFile("job.env", strings.NewReader("# comment\n\nexport NCCL_IB_PKEY=1\nUCX_IB_PKEY='0x2'\r\nX=\"a b\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if e["NCCL_IB_PKEY"] != "1" || e["UCX_IB_PKEY"] != "0x2" || e["X"] != "a b" {
		t.Errorf("%v", e)
	}
	for _, bad := range []string{"NOEQUALS\n", "1X=2\n", "=v\n", "A-B=1\n"} {
		if _, err := ReadEnvFile("f", strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestMentionedModifiers: a setting that only changes how a library reads its others
// (Library.Modifiers) does not, alone, make the library mentioned.
func TestMentionedModifiers(t *testing.T) {
	for _, tc := range []struct {
		in   Inputs
		want bool
	}{
		{env("GASNET_DISABLE_ENVDECODE=1"), false},
		{env("GASNET_DISABLE_ENVDECODE=1", "GASNET_IBV_PKEY=2"), true},
		{env("GASNET_IBV_PORTS=mlx5_0"), true},
		{env("NCCL_IB_PKEY=1"), false},
	} {
		if got := GASNet.Mentioned(tc.in); got != tc.want {
			t.Errorf("GASNet.Mentioned(%v) = %v, want %v", tc.in.Env, got, tc.want)
		}
	}
}

// Aborts: the settings a host cannot satisfy stop the library's process there at
// start-up, whatever the tables hold (MVAPICH2 rdma_iba_priv.c rdma_open_hca and
// rdma_iba_hca_init; perftest ctx_find_dev and set_link_layer). The host's verdict
// is the abort, never "uses none of its ports".
func TestAborts(t *testing.T) {
	long := "mlx5_bond_" + strings.Repeat("x", 22) + "_tail" // 37 bytes
	host := func() []*Port {
		ps := []*Port{port("", "mlx5_0", 1, 0xffff), port("", "mlx5_0", 2, 0xffff), port("", "mlx5_1", 1, 0xffff), port("", long, 1, 0xffff)}
		ps[1].State = "DOWN"
		return ps
	}
	one := func() []*Port { return []*Port{port("", "mlx5_0", 1, 0xffff)} }
	down := func() []*Port {
		ps := host()
		for _, p := range ps {
			p.State = "INIT"
		}
		return ps
	}
	for _, c := range []struct {
		name  string
		lib   *Library
		in    Inputs
		ports func() []*Port
		abort string // "" works
		// waits: a port coming up can remove the abort (a gate keeps waiting).
		waits bool
	}{
		// MV2_NUM_PORTS is cut to MAX_NUM_PORTS (1): MV2_DEFAULT_PORT=2 stays the
		// port (this case once said "MV2_DEFAULT_PORT=2 is not used").
		{"MV2_NUM_PORTS=2 keeps the port", &MVAPICH2, env("MV2_DEFAULT_PORT=2", "MV2_NUM_PORTS=2"), one, "mlx5_0 has no port 2", false},
		{"a port the HCA lacks", &MVAPICH2, env("MV2_DEFAULT_PORT=3", "MV2_IBA_HCA=mlx5_0"), host, "user specified port 3: fail to query or not ACTIVE\" (rdma_iba_hca_init): mlx5_0 has no port 3", false},
		{"a port that is DOWN", &MVAPICH2, env("MV2_DEFAULT_PORT=2", "MV2_IBA_HCA=mlx5_0"), host, "mlx5_0/2 is DOWN", true},
		{"no HCA has the port ACTIVE", &MVAPICH2, env("MV2_DEFAULT_PORT=2"), host, "user specified port 2", false},
		{"some HCA has the port", &MVAPICH2, env("MV2_DEFAULT_PORT=1"), host, "", false},
		{"an HCA the host lacks", &MVAPICH2, env("MV2_IBA_HCA=mlx5_9"), host, "The HCA (mlx5_9) the user requested for is not available on the system", false},
		{"the first name is looked for", &MVAPICH2, env("MV2_IBA_HCA=mlx5_9:mlx5_0"), host, "The HCA (mlx5_9)", false},
		{"a later name only with that many HCAs", &MVAPICH2, env("MV2_IBA_HCA=mlx5_0:mlx5_9"), one, "", false},
		{"two named HCAs: two names looked for", &MVAPICH2, env("MV2_IBA_HCA=mlx5_1:mlx5_9:mlx5_0"), host, "The HCA (mlx5_9)", false},
		{"no more names than usable HCAs", &MVAPICH2, env("MV2_IBA_HCA=mlx5_0:mlx5_1:" + long + ":mlx5_9"), host, "", false},
		{"an HCA without an ACTIVE port 1 or 2", &MVAPICH2, env("MV2_IBA_HCA=mlx5_0"), down, "No IB device found", true},
		{"nohca names no HCA", &MVAPICH2, env("MV2_IBA_HCA=nohca"), host, "", false},
		{"empty names are skipped", &MVAPICH2, env("MV2_IBA_HCA=::mlx5_1:"), host, "", false},
		// rdma_iba_hcas entries are 32 bytes (strncpy) compared with strncmp(.., 32).
		{"32 bytes of a longer name", &MVAPICH2, env("MV2_IBA_HCA=" + long[:32] + "_other"), host, "", false},
		{"31 bytes are another name", &MVAPICH2, env("MV2_IBA_HCA=" + long[:31]), host, "The HCA (" + long[:31] + ")", false},
		{"perftest -d the host lacks", &Perftest, Inputs{Env: Env{}, Perftest: &PerftestArgs{Device: "mlx5_9", Port: 1}}, host, "\"IB device mlx5_9 not found\"", false},
		{"perftest -i the device lacks", &Perftest, Inputs{Env: Env{}, Perftest: &PerftestArgs{Device: "mlx5_1", Port: 2}}, host, "Unable to query port 2 attributes\" (set_link_layer): mlx5_1 has no port 2", false},
		{"perftest -i not ACTIVE", &Perftest, Inputs{Env: Env{}, Perftest: &PerftestArgs{Device: "mlx5_0", Port: 2}}, host, "\" Port number 2 state is Down\"", true},
		// gasnetc_init: no port found is "unable to open any HCA ports".
		{"GASNet: a device the host lacks", &GASNet, env("GASNET_IBV_PORTS=mlx5_9"), host, "\"unable to open any HCA ports given in GASNET_IBV_PORTS\" (gasnetc_init)", false},
		{"GASNet: a listed port DOWN", &GASNet, env("GASNET_IBV_PORTS=mlx5_0:2"), host, "unable to open any HCA ports given in GASNET_IBV_PORTS", true},
		{"GASNet: a list it refuses", &GASNet, env("GASNET_IBV_PORTS=mlx5_0:2,,1"), host, "GASNET_IBV_PORTS=mlx5_0:2,,1: port \"\" is not a port number", false},
		{"GASNet: no ACTIVE port", &GASNet, env(), down, "\"unable to open any HCA ports\" (gasnetc_init): no ACTIVE port with a LID", true},
		{"GASNet: a listed port", &GASNet, env("GASNET_IBV_PORTS=mlx5_1:1"), host, "", false},
		{"perftest's first device", &Perftest, Inputs{Env: Env{}, Perftest: &PerftestArgs{Port: 1}}, host, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []string{"resolve", "want"} {
				var r *Result
				if mode == "resolve" {
					r = Resolve([]*Library{c.lib}, c.in, c.ports())[0]
				} else {
					r = WantPartition([]*Library{c.lib}, c.in, check.DefaultFull, c.ports())[0]
				}
				if c.abort == "" {
					if len(r.Aborts) > 0 || r.Verdict != Works {
						t.Errorf("%s: %s, aborts %v, findings %q", mode, r.Verdict, r.Aborts, r.Findings)
					}
					continue
				}
				if len(r.Aborts) != 1 && !(c.name == "no HCA has the port ACTIVE" && len(r.Aborts) == 3) {
					t.Fatalf("%s: aborts %v, want one", mode, r.Aborts)
				}
				if !strings.Contains(r.Aborts[0].Reason, c.abort) || r.Verdict != DoesNotWork {
					t.Errorf("%s: %s, abort %q, want %q", mode, r.Verdict, r.Aborts[0].Reason, c.abort)
				}
				if !slices.ContainsFunc(r.Findings, func(f string) bool { return strings.Contains(f, c.abort) }) || slices.ContainsFunc(r.Findings, func(f string) bool { return strings.Contains(f, "uses none") || f == "no port is used" }) {
					t.Errorf("%s: findings %q", mode, r.Findings)
				}
				for _, pr := range r.Ports {
					if pr.Used {
						t.Errorf("%s: %s used on a host where the library aborts", mode, pr.Port.Label())
					}
				}
				if mode == "want" {
					pending := Gate([]*Result{r}, check.DefaultFull, false)
					if hopeless := Hopeless(pending); (len(hopeless) == 0) != c.waits || !slices.ContainsFunc(pending, func(p Pending) bool { return p.Kind == PendingAbort }) {
						t.Errorf("gate: pending %v, hopeless %v, want waits %v", pending, hopeless, c.waits)
					}
				}
			}
		})
	}
}

// mv2HCAMatch against the C it models, generated: strncpy(entry, tok, 32) into a
// 32-byte rdma_iba_hcas entry, then strncmp(device, entry, 32) == 0.
func TestMVAPICH2HCANames32(t *testing.T) {
	strncmp32 := func(dev string, entry [32]byte) bool {
		for i := 0; i < 32; i++ {
			var a byte
			if i < len(dev) {
				a = dev[i]
			}
			if a != entry[i] {
				return false
			}
			if a == 0 {
				return true
			}
		}
		return true
	}
	r := rand.New(rand.NewPCG(27, 3))
	name := func() string {
		b := []byte(strings.Repeat("m", 26+r.IntN(12)))
		for i := 0; i < 2; i++ {
			b[r.IntN(len(b))] = "mn"[r.IntN(2)]
		}
		return string(b)
	}
	for i := 0; i < 5000; i++ {
		tok, dev := name(), name()
		var entry [32]byte
		copy(entry[:], tok) // strncpy: the first 32 bytes, NUL padded
		names := mv2HCANames(tok)
		if want := strncmp32(dev, entry); mv2HCAMatch(names[0], dev) != want {
			t.Fatalf("MV2_IBA_HCA=%s (%d bytes), device %s (%d bytes): match %v, want %v", tok, len(tok), dev, len(dev), !want, want)
		}
	}
}

// A device that could not be read and that the library could choose makes its abort
// (and "uses none of its ports") not checked: what it asks for may be that device. A
// gate waits on it as on an unread table.
func TestAbortsUnread(t *testing.T) {
	host := []*Port{port("", "mlx5_0", 1, 0xffff)}
	unread := []Unread{{Device: "mlx5_9", Port: -1, Name: "device mlx5_9", Why: "permission denied"}}
	for _, c := range []struct {
		in     Inputs
		unsure bool
	}{
		{env("MV2_IBA_HCA=mlx5_9"), true},
		{env("MV2_IBA_HCA=mlx5_8"), false},
		{env("NCCL_IB_HCA==mlx5_9"), true},
		{env("NCCL_IB_HCA==mlx5_8"), false},
	} {
		c.in.Unread = unread
		l := &MVAPICH2
		if _, ok := c.in.Env["NCCL_IB_HCA"]; ok {
			l = &NCCL
		}
		r := Resolve([]*Library{l}, c.in, host)[0]
		w := WantPartition([]*Library{l}, c.in, check.DefaultFull, host)[0]
		pending := Gate([]*Result{w}, check.DefaultFull, false)
		if c.unsure {
			if r.Verdict != Incomplete || len(r.Aborts) > 0 || w.Verdict != Incomplete || len(pending) != 1 || pending[0].Kind != PendingUnread || len(Hopeless(pending)) > 0 {
				t.Errorf("%v: %s %v / %s, pending %v", c.in.Env, r.Verdict, r.Aborts, w.Verdict, pending)
			}
			continue
		}
		if r.Verdict != DoesNotWork || w.Verdict != DoesNotWork || len(Choosers([]*Result{r, w}, unread[0])) > 0 {
			t.Errorf("%v: %s / %s, choosers %v", c.in.Env, r.Verdict, w.Verdict, Choosers([]*Result{r, w}, unread[0]))
		}
	}
}

// A lookup that stops the process (MVAPICH2's set_pkey_index, GASNet's "Failed to
// locate index of requested pkey") is the port's fails and an abort of its host.
func TestPickAborts(t *testing.T) {
	for _, c := range []struct {
		lib *Library
		in  Inputs
	}{{&MVAPICH2, env("MV2_DEFAULT_PKEY=5")}, {&GASNet, env("GASNET_IBV_PKEY=5")}} {
		r := Resolve([]*Library{c.lib}, c.in, []*Port{port("h1", "mlx5_0", 1, 0xffff), port("h2", "mlx5_0", 1, 0xffff, 0x8005)})[0]
		if r.Verdict != DoesNotWork || len(r.Aborts) != 1 || r.Aborts[0].Host != "h1" || r.Aborts[0].Port != 1 || r.Ports[0].Outcome != Fails {
			t.Errorf("%s: %s, aborts %+v", c.lib.Name, r.Verdict, r.Aborts)
		}
	}
}

// UCX opens an interface on every port it selects when its worker is created
// (ucp_worker.c ucp_worker_add_resource_ifaces, UCX 1.8.0 to master) and stops at
// the first that fails: a port without the key (uct_ib_iface_init_pkey's "unable
// to find specified pkey", or "there is no valid pkey to use" for auto) fails
// ucp_worker_create on that host, not just that interface. This test once said the
// opposite ("UCX does not stop"), an assumption the source does not bear out.
func TestUCXWorkerCreate(t *testing.T) {
	for _, c := range []struct {
		in    Inputs
		table []int
		says  string
	}{
		{env("UCX_IB_PKEY=0x0005"), []int{0xffff}, "unable to find specified pkey 0x5"},
		{env(), []int{0x0000, 0x0000}, "there is no valid pkey to use"},
	} {
		host := []*Port{port("h1", "mlx5_0", 1, 0xffff, 0x8005), port("h1", "mlx5_1", 1, c.table...), port("h2", "mlx5_0", 1, 0xffff, 0x8005)}
		r := Resolve([]*Library{&UCX}, c.in, host)[0]
		if r.Verdict != DoesNotWork || len(r.Aborts) != 1 || r.Aborts[0].Host != "h1" || r.Aborts[0].Device != "mlx5_1" || r.Aborts[0].Port != 1 {
			t.Fatalf("%v: %s, aborts %+v", c.in.Env, r.Verdict, r.Aborts)
		}
		if a := r.Aborts[0].Reason; !strings.Contains(a, c.says) || !strings.Contains(a, "ucp_worker_create fails") {
			t.Errorf("%v: abort %q", c.in.Env, a)
		}
	}
	// A port UCX_NET_DEVICES leaves out is not opened: no abort.
	host := []*Port{port("", "mlx5_0", 1, 0xffff, 0x8005), port("", "mlx5_1", 1, 0xffff)}
	if r := Resolve([]*Library{&UCX}, env("UCX_IB_PKEY=0x0005", "UCX_NET_DEVICES=mlx5_0:1"), host)[0]; len(r.Aborts) > 0 || r.Verdict != Works {
		t.Errorf("UCX_NET_DEVICES=mlx5_0:1: %s, aborts %+v", r.Verdict, r.Aborts)
	}
}

// A gate waits only for the ports a library would use once they come up: a DOWN
// port its device settings leave out is not waited for.
func TestIdleOnlyChosen(t *testing.T) {
	host := []*Port{port("", "mlx5_0", 1, 0xffff), port("", "mlx5_1", 1, 0xffff)}
	host[0].State, host[1].State = "DOWN", "DOWN"
	for _, c := range []struct {
		in   Inputs
		lib  *Library
		want string
	}{
		{env("NCCL_IB_HCA=mlx5_1"), &NCCL, "mlx5_1/1"},
		{env(), &NCCL, "mlx5_0/1 mlx5_1/1"},
		{env("UCX_NET_DEVICES=mlx5_0:1"), &UCX, "mlx5_0/1"},
		{env("GASNET_IBV_PORTS=mlx5_1"), &GASNet, "mlx5_1/1"},
		{env("MV2_IBA_HCA=mlx5_1"), &MVAPICH2, "mlx5_1/1"},
	} {
		var got []string
		for _, p := range Gate(WantPartition([]*Library{c.lib}, c.in, check.DefaultFull, host), check.DefaultFull, false) {
			if p.Kind == PendingNotActive {
				got = append(got, p.Port)
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("%v: waits for %q, want %q", c.in.Env, got, c.want)
		}
	}
}

// Hosts where Open MPI's openib BTL leaves every port out are listed in host order,
// the same on every run (they came from a map's range, in random order).
func TestSkipsOnlyHostOrder(t *testing.T) {
	var ports []*Port
	var want []string
	for _, h := range []string{"n1", "n2", "n3", "n4", "n5"} {
		ports = append(ports, port(h, "mlx5_0", 1, 0xffff))
		want = append(want, h+": Open MPI (openib) leaves every port out (the partition is in none of their tables)")
	}
	for range 20 {
		r := Resolve([]*Library{&OpenMPI}, env("OMPI_MCA_btl_openib_pkey=0x0005", "OMPI_MCA_btl_openib_allow_ib=1"), ports)[0]
		if got := strings.Join(r.Findings, "\n"); got != strings.Join(want, "\n") {
			t.Fatalf("findings:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
		}
	}
}

// The one description is read two ways: selectPorts walks a host's ports, chooses
// and usesOnceUp ask its settings about a device that was not read or a port not
// up. Generated hosts and settings: chooses must say what selectPorts says of the
// unread device made an ACTIVE InfiniBand device placed first among the host's, and
// usesOnceUp what it says of the port brought up on a host where nothing is used.
func TestDescriptionReadBothWays(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 27))
	one := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	devs := []string{"mlx5_0", "mlx5_1", "mlx5_10", "hfi1_0"}
	settings := map[string][]string{
		"NCCL_IB_HCA": {"mlx5", "=mlx5_1", "^mlx5_0", "mlx5_0:2", "^"}, "UCX_NET_DEVICES": {"mlx5_0:1", "^mlx5_1", "mlx5_0"},
		"NVSHMEM_HCA_LIST": {"mlx5_0", "^mlx5_0:1", "mlx5_1:2"}, "GASNET_IBV_PORTS": {"mlx5_0", "mlx5_1:1,2", "mlx5_0+mlx5_1", "mlx5_0:2,,1"},
		"MV2_IBA_HCA": {"mlx5_0", "mlx5_1:mlx5_9", "nohca"}, "MV2_DEFAULT_PORT": {"1", "2", "3"},
		"OMPI_MCA_btl_openib_if_include": {"mlx5_0", "mlx5_1:1"}, "OMPI_MCA_btl_openib_if_exclude": {"mlx5_0:2"},
	}
	for i := 0; i < 3000; i++ {
		in := env()
		for k, vs := range settings {
			if r.IntN(3) == 0 {
				in.Env[k] = one(vs...)
			}
		}
		a := ParsePerftestArgs(one("ib_send_bw", "ib_send_bw -d mlx5_1 -i 2", "ib_send_bw -i 2"))
		in.Perftest = &a
		var host []*Port
		for _, d := range devs[:1+r.IntN(len(devs))] {
			for n := 1; n <= 1+r.IntN(3); n++ {
				p := port("h", d, n, 0xffff)
				p.State = one("ACTIVE", "DOWN")
				host = append(host, p)
			}
		}
		u := Unread{Host: "h", Device: one(devs...), Port: r.IntN(4) - 1}
		for _, l := range Libraries() {
			s := l.setup(in)
			var maybe []*Port
			for _, n := range unreadPortNums(in, u) {
				maybe = append(maybe, &Port{Host: "h", Device: u.Device, Num: n, LinkLayer: "InfiniBand", State: "ACTIVE", LID: 1, NoTable: "not read"})
			}
			walked := slices.ContainsFunc(s.selectPorts(append(maybe, host...)), func(pr PortResult) bool { return pr.Used && slices.Contains(maybe, pr.Port) })
			if got := s.chooses(in, host, u); got != walked && s.Inactive == "" {
				t.Fatalf("%s %v %+v: chooses %v, selectPorts %v", l.ID, in.Env, u, got, walked)
			}
			if slices.ContainsFunc(s.selectPorts(host), func(pr PortResult) bool { return pr.Used }) {
				continue
			}
			for i, p := range host {
				if p.Active() {
					continue
				}
				up := *p
				up.State = "ACTIVE"
				ports := slices.Clone(host)
				ports[i] = &up
				walked := s.selectPorts(ports)[i].Used
				if got := s.usesOnceUp(host, p); got != walked {
					t.Fatalf("%s %v: %s usesOnceUp %v, selectPorts %v", l.ID, in.Env, p.Label(), got, walked)
				}
			}
		}
	}
}

// A lookup that stops the process opening every port the library selects on a host
// (UCX's ucp_worker_create, GASNet's gasnetc_probe_ports: gasneti_fatalerror in the
// loop over the ports) leaves that host's other ports unused: their rows say so,
// never "uses". MVAPICH2 opens one HCA a process (MV2_MRAIL_BINDING) and one port of
// it: ranks on the host's other HCA run, which stays used; with rail sharing
// (MV2_NUM_HCAS) every process opens both HCAs and none runs.
func TestPickAbortsHostPorts(t *testing.T) {
	for _, c := range []struct {
		lib       *Library
		in        Inputs
		dev2      string // the device of each host's port 2
		otherUsed bool
	}{
		{&UCX, env("UCX_IB_PKEY=0x0005"), "mlx5_0", false},
		{&GASNet, env("GASNET_IBV_PKEY=5", "GASNET_IBV_PORTS=mlx5_0:1,2"), "mlx5_0", false},
		{&MVAPICH2, env("MV2_DEFAULT_PKEY=5"), "mlx5_1", true},
		{&MVAPICH2, env("MV2_DEFAULT_PKEY=5", "MV2_NUM_HCAS=2"), "mlx5_1", false},
	} {
		ports := []*Port{port("h1", "mlx5_0", 1, 0xffff, 0x8005), port("h1", c.dev2, 2, 0xffff), port("h2", "mlx5_0", 1, 0xffff, 0x8005), port("h2", c.dev2, 2, 0xffff, 0x8005)}
		r := Resolve([]*Library{c.lib}, c.in, ports)[0]
		if r.Verdict != DoesNotWork || len(r.Aborts) != 1 || r.Aborts[0].Host != "h1" || r.Aborts[0].Port != 2 {
			t.Fatalf("%s: %s, aborts %+v", c.lib.Name, r.Verdict, r.Aborts)
		}
		for _, pr := range r.Ports {
			switch {
			case pr.Port.Host == "h1" && pr.Port.Num == 2:
				if !pr.Used || pr.Outcome != Fails {
					t.Errorf("%s: %s: used %v, %s", c.lib.Name, pr.Port.Label(), pr.Used, pr.Outcome)
				}
			case pr.Port.Host == "h1" && c.otherUsed:
				if !pr.Used || pr.Outcome != Uses {
					t.Errorf("%s: %s: used %v, %s, want uses (one port a process)", c.lib.Name, pr.Port.Label(), pr.Used, pr.Outcome)
				}
			case pr.Port.Host == "h1":
				if pr.Used || !strings.Contains(pr.Why, "aborts on this host at h1:"+c.dev2+"/2's P_Key lookup") {
					t.Errorf("%s: %s: used %v (%s), why %q: the process that aborted uses none of its ports", c.lib.Name, pr.Port.Label(), pr.Used, pr.Outcome, pr.Why)
				}
			default:
				if !pr.Used || pr.Outcome != Uses {
					t.Errorf("%s: %s: used %v, %s", c.lib.Name, pr.Port.Label(), pr.Used, pr.Outcome)
				}
			}
		}
	}
}

// --want: the wanted value, set, stops UCX's and GASNet's process on a host where a
// port they open lacks the partition: the host's other ports are not used (never a
// setting that "uses" there). MVAPICH2's other HCA stays used, unless its processes
// share their rails (MV2_NUM_HCAS).
func TestWantAbortsHostPorts(t *testing.T) {
	for _, c := range []struct {
		lib       *Library
		in        Inputs
		dev2      string
		otherUsed bool
	}{
		{&UCX, env(), "mlx5_0", false},
		{&GASNet, env("GASNET_IBV_PORTS=mlx5_0:1,2"), "mlx5_0", false},
		{&MVAPICH2, env(), "mlx5_1", true},
		{&MVAPICH2, env("MV2_NUM_HCAS=2"), "mlx5_1", false},
	} {
		ports := []*Port{port("h1", "mlx5_0", 1, 0xffff, 0x8005), port("h1", c.dev2, 2, 0xffff), port("h2", "mlx5_0", 1, 0xffff, 0x8005)}
		w := WantPartition([]*Library{c.lib}, c.in, check.PKey(0x8005), ports)[0]
		if w.Verdict != DoesNotWork {
			t.Fatalf("%s: %s", c.lib.Name, w.Verdict)
		}
		for _, pw := range w.Ports {
			if pw.Port.Host != "h1" || pw.Port.Num != 1 {
				continue
			}
			if c.otherUsed != pw.Used || !c.otherUsed && (pw.Setting != "" || !strings.Contains(pw.Why, "aborts on this host at h1:"+c.dev2+"/2's P_Key lookup")) {
				t.Errorf("%s: h1:mlx5_0/1 used %v, setting %q, why %q", c.lib.Name, pw.Used, pw.Setting, pw.Why)
			}
		}
	}
}

// A host read over the fabric whose device names are not known: which of its ports
// the process opens is not known (GASNet opens the first ACTIVE one), so a lookup
// that stops it leaves the others as given, as hostAborts does.
func TestAbortHostUnknownDevices(t *testing.T) {
	ports := []*Port{port("h1", "h1", 1, 0xffff, 0x8005), port("h1", "h1", 2, 0xffff), port("h2", "h2", 1, 0xffff, 0x8005)}
	for _, p := range ports {
		p.Fabric = true
	}
	r := Resolve([]*Library{&UCX}, env("UCX_IB_PKEY=0x0005"), ports)[0]
	w := WantPartition([]*Library{&UCX}, env(), check.PKey(0x8005), ports)[0]
	for _, prs := range [][]PortResult{r.Ports, w.Ports} {
		for _, pr := range prs {
			if !pr.Used {
				t.Errorf("%s: not used (%s)", pr.Port.Label(), pr.Why)
			}
		}
	}
}

// MVAPICH2 uses one port of each HCA it opens: rdma_iba_hca_init's rails take the
// first rdma_num_ports (MAX_NUM_PORTS, 1) of the HCA's ACTIVE ports 1..2, so port 2
// is used only when port 1 is not ACTIVE (MVAPICH2 2.3.7 rdma_iba_priv.c).
func TestMVAPICH2OnePortPerHCA(t *testing.T) {
	ports := func(state1 string) []*Port {
		ps := []*Port{port("", "mlx5_0", 1, 0xffff, 0x8005), port("", "mlx5_0", 2, 0xffff)}
		ps[0].State = state1
		return ps
	}
	r := Resolve([]*Library{&MVAPICH2}, env("MV2_DEFAULT_PKEY=5"), ports("ACTIVE"))[0]
	if r.Verdict != Works || r.Ports[1].Used || !strings.Contains(r.Ports[1].Why, "MVAPICH2 uses one port of an HCA (MAX_NUM_PORTS 1): the first ACTIVE of 1 and 2, mlx5_0/1") {
		t.Errorf("port 1 ACTIVE: %s, findings %q, port 2 used %v (%s)", r.Verdict, r.Findings, r.Ports[1].Used, r.Ports[1].Why)
	}
	r = Resolve([]*Library{&MVAPICH2}, env("MV2_DEFAULT_PKEY=5"), ports("DOWN"))[0]
	if r.Verdict != DoesNotWork || !r.Ports[1].Used || r.Ports[1].Outcome != Fails {
		t.Errorf("port 1 DOWN: %s, port 2 used %v %s", r.Verdict, r.Ports[1].Used, r.Ports[1].Outcome)
	}
	// The port MV2_DEFAULT_PORT names is the one, whatever port 1 is.
	r = Resolve([]*Library{&MVAPICH2}, env("MV2_DEFAULT_PKEY=5", "MV2_DEFAULT_PORT=2"), ports("ACTIVE"))[0]
	if r.Verdict != DoesNotWork || !r.Ports[1].Used || r.Ports[0].Used {
		t.Errorf("MV2_DEFAULT_PORT=2: %s, findings %q", r.Verdict, r.Findings)
	}
}

// MV2_NUM_HCAS (rdma_get_pm_parameters) makes MVAPICH2 share its rails: every
// process opens the first N usable HCAs (rdma_open_hca; 0 or less: all) and runs
// set_pkey_index on each, so a key missing on one it opens aborts every process of
// the host. Which N of more HCAs it opens (the fastest type first) is not read:
// a failing HCA is then not checked while N others work.
func TestMVAPICH2NumHCAs(t *testing.T) {
	host := func(has ...bool) []*Port {
		var ps []*Port
		for i, h := range has {
			tbl := []int{0xffff}
			if h {
				tbl = append(tbl, 0x8005)
			}
			ps = append(ps, port("h1", "mlx5_"+itoa(i), 1, tbl...))
		}
		return append(ps, port("h2", "mlx5_0", 1, 0xffff, 0x8005))
	}
	for _, c := range []struct {
		name    string
		in      Inputs
		ports   []*Port
		verdict Verdict
		// othersUsed: the working HCAs of h1 stay used (not stopped by the abort).
		othersUsed bool
		text       string
	}{
		{"binding: one HCA a process", env("MV2_DEFAULT_PKEY=5"), host(true, false, true), DoesNotWork, true, "Can't find PKEY INDEX"},
		{"two of three, two work", env("MV2_DEFAULT_PKEY=5", "MV2_NUM_HCAS=2"), host(true, false, true), Incomplete, true, "if MVAPICH2 opens it: 2 of this host's 3 HCAs it selects, the fastest HCA type first"},
		{"two of three, one works", env("MV2_DEFAULT_PKEY=5", "MV2_NUM_HCAS=2"), host(true, false, false), DoesNotWork, false, "Can't find PKEY INDEX"},
		{"three of three", env("MV2_DEFAULT_PKEY=5", "MV2_NUM_HCAS=3"), host(true, false, true), DoesNotWork, false, "Can't find PKEY INDEX"},
		{"0 is all", env("MV2_DEFAULT_PKEY=5", "MV2_NUM_HCAS=0"), host(true, false, true), DoesNotWork, false, "each process opens every usable HCA"},
		{"cut to MAX_NUM_HCAS", env("MV2_DEFAULT_PKEY=5", "MV2_NUM_HCAS=12"), host(true, false, true), DoesNotWork, false, "MV2_NUM_HCAS=12 is cut to 10"},
		{"a rail sharing policy", env("MV2_DEFAULT_PKEY=5", "MV2_RAIL_SHARING_POLICY=ROUND_ROBIN"), host(true, false, true), DoesNotWork, false, "Can't find PKEY INDEX"},
		{"MV2_IBA_HCA replaces it", env("MV2_DEFAULT_PKEY=5", "MV2_NUM_HCAS=1", "MV2_IBA_HCA=mlx5_0:mlx5_1"), host(true, false, true), DoesNotWork, false, "MV2_NUM_HCAS=1 is not used: MV2_IBA_HCA names the HCAs"},
		{"all work", env("MV2_DEFAULT_PKEY=5", "MV2_NUM_HCAS=2"), host(true, true, true), Works, true, "each process opens the first 2 usable HCAs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Resolve([]*Library{&MVAPICH2}, c.in, c.ports)[0]
			all := strings.Join(slices.Concat([]string{r.Setting}, r.Findings, r.Unchecked, r.Notes), "\n")
			if r.Verdict != c.verdict || !strings.Contains(all, c.text) {
				t.Errorf("%s, want %s and %q:\n%s", r.Verdict, c.verdict, c.text, all)
			}
			for _, pr := range r.Ports {
				if pr.Port.Host == "h1" && pr.Port.Device != "mlx5_1" && pr.Port.Table[len(pr.Port.Table)-1].PKey == 0x8005 && pr.Used != c.othersUsed {
					t.Errorf("%s used %v (%s), want %v", pr.Port.Label(), pr.Used, pr.Why, c.othersUsed)
				}
			}
		})
	}
	// --want: the HCA it may not open is not checked either (a gate waits on it,
	// never a definite no).
	w := WantPartition([]*Library{&MVAPICH2}, env("MV2_NUM_HCAS=2"), check.PKey(0x8005), host(true, false, true))[0]
	if w.Verdict != Incomplete || !slices.ContainsFunc(Gate([]*Result{w}, check.PKey(0x8005), false), func(p Pending) bool { return p.Kind == PendingUnread }) {
		t.Errorf("want: %s, findings %q, unchecked %q", w.Verdict, w.Findings, w.Unchecked)
	}
}

// MVAPICH 3.0 names the setting MVP_DEFAULT_PKEY (its MPI_T cvars): ibkey does not
// interpret it, so MVAPICH2 is checked and not checked (never "index 0, works").
func TestMVAPICH3PKeyNotInterpreted(t *testing.T) {
	in := env("MVP_DEFAULT_PKEY=0x0005")
	if !MVAPICH2.Mentioned(in) {
		t.Error("MVP_DEFAULT_PKEY does not select MVAPICH2")
	}
	r := Resolve([]*Library{&MVAPICH2}, in, []*Port{port("", "mlx5_0", 1, 0xffff, 0x8005)})[0]
	if r.Verdict != Incomplete || !slices.ContainsFunc(r.Unchecked, func(u string) bool { return strings.Contains(u, "MVAPICH 3's name of the setting") }) {
		t.Errorf("%s, unchecked %q", r.Verdict, r.Unchecked)
	}
}

// testPerftestMaxPKeys: max_pkeys as read through verbs (Port.MaxPKeys) decides
// perftest's "Changing to 0" on every link layer, and on RoCE what mlx5 does with an
// index beyond the table; not read, the answer that needs it is not checked, naming
// why. perftest -R on RoCE takes rdma_cm's 0xffff.
func testPerftestMaxPKeys(t *testing.T, pf func(string) Inputs) {
	t.Helper()
	roce := func(driver string, maxPKeys int, read bool, entries ...int) *Port {
		p := port("", "dev0", 1, entries...)
		p.LinkLayer, p.Driver = "Ethernet", driver
		p.MaxPKeys, p.MaxPKeysRead = maxPKeys, read
		if !read {
			p.MaxPKeysMissing = "max_pkeys not read: verbs unavailable: the static flavour"
		}
		return p
	}
	ib := port("", "mlx5_0", 1, 0xffff, 0x8001)
	ib.MaxPKeys, ib.MaxPKeysRead = 4, true // larger than the table: the read value counts
	for _, c := range []struct {
		name    string
		line    string
		p       *Port
		outcome Outcome
		index   int
		text    string // in the problem or the notes
	}{
		{"rxe, unread", "ib_send_bw --pkey_index=1", roce("rdma_rxe", 0, false, 0xffff), NotChecked, -1, "the static flavour"},
		{"rxe, unread, 65535 is 0", "ib_send_bw --pkey_index=65535", roce("rdma_rxe", 0, false, 0xffff), Uses, 0, "above 65534"},
		{"mlx5 RoCE, below max_pkeys", "ib_send_bw --pkey_index=5", roce("mlx5_core", 128, true, 0xffff), NotChecked, 5, "which P_Key the adapter then sends is not known"},
		{"mlx5 RoCE, at max_pkeys", "ib_send_bw --pkey_index=128", roce("mlx5_core", 128, true, 0xffff), Uses, 0, "above mlx5_core's max_pkeys-1 (127)"},
		{"mlx5 RoCE, negative", "ib_send_bw --pkey_index=-1", roce("mlx5_core", 128, true, 0xffff), Fails, 65535, "EINVAL"},
		{"mlx5 RoCE, negative, unread", "ib_send_bw --pkey_index=-1", roce("mlx5_core", 0, false, 0xffff), NotChecked, 65535, "the static flavour"},
		{"other RoCE driver, read", "ib_send_bw --pkey_index=3", roce("bnxt_re", 64, true, 0xffff), NotChecked, 3, "on RoCE the driver decides"},
		{"other RoCE driver, above read max", "ib_send_bw --pkey_index=64", roce("bnxt_re", 64, true, 0xffff), Uses, 0, "Changing to 0"},
		{"InfiniBand, read max beyond the table", "ib_send_bw --pkey_index=3", ib, Fails, 3, "outside"},
		{"InfiniBand, above read max", "ib_send_bw --pkey_index=4", ib, Uses, 0, "above mlx5_0's max_pkeys-1 (3)"},
		{"-R on RoCE: 0xffff", "ib_send_bw -R --pkey_index=7", roce("bnxt_re", 0, false, 0x8001, 0xffff), Uses, 1, "rdma_cm uses P_Key 0xffff"},
		{"-R on RoCE: the limited 0x7fff", "ib_send_bw -R", roce("rdma_rxe", 0, false, 0x7fff, 0x8001), Uses, 0, "rdma_cm uses P_Key 0xffff"},
		{"-R on RoCE: no 0xffff", "ib_send_bw -R", roce("rdma_rxe", 0, false, 0x8001), Fails, -1, "EINVAL"},
		{"-R on RoCE: unreadable entry first", "ib_send_bw -R", roce("rdma_rxe", 0, false, unread, 0xffff), NotChecked, -1, "could not be read"},
		{"-R on InfiniBand", "ib_send_bw -R", ib, NotChecked, -1, "IPoIB"},
	} {
		pk, _ := pickOn(t, &Perftest, pf(c.line), c.p)
		if pk.Outcome != c.outcome || pk.Index != c.index || !strings.Contains(pk.Problem+strings.Join(pk.Notes, "; "), c.text) {
			t.Errorf("%s, %s: %s index %d %q %q, want %s index %d (%s)", c.name, c.line, pk.Outcome, pk.Index, pk.Problem, pk.Notes, c.outcome, c.index, c.text)
		}
	}
	// The summary line names the index a negative value becomes, as the problem does.
	r := Resolve([]*Library{&Perftest}, pf("ib_send_bw --pkey_index=-1"), []*Port{port("", "mlx5_0", 1, 0xffff)})[0]
	if !strings.Contains(r.Setting, "index 65535") || strings.Contains(r.Setting, "index -1") {
		t.Errorf("--pkey_index=-1: setting %q, want index 65535", r.Setting)
	}
}

// perftest -R on RoCE takes rdma_cm's entry for 0xffff (cma_ib_init_qp_attr,
// ib_find_cached_pkey: the first full entry, else the last limited one); an entry
// not read before a full one may be it.
func TestPerftestRDMACMEntry(t *testing.T) {
	roce := func(entries ...int) *Port {
		p := port("", "rxe0", 1, entries...)
		p.LinkLayer = "Ethernet"
		return p
	}
	for _, c := range []struct {
		p       *Port
		outcome Outcome
		index   int
	}{
		{roce(0xffff), Uses, 0},
		{roce(0x8001, 0xffff), Uses, 1},
		{roce(0x7fff, 0x8001, 0x7fff), Uses, 2},
		{roce(0x7fff, 0xffff), Uses, 1},
		{roce(0x8001), Fails, -1},
		{roce(unread, 0xffff), NotChecked, -1},
		{roce(0x7fff, unread), NotChecked, -1},
	} {
		pk, ok := perftestRDMACM(c.p)
		if !ok || pk.Outcome != c.outcome || pk.Index != c.index {
			t.Errorf("%v: %v %s index %d, want %s index %d", c.p.Table, ok, pk.Outcome, pk.Index, c.outcome, c.index)
		}
	}
	if _, ok := perftestRDMACM(port("", "mlx5_0", 1, 0xffff)); ok {
		t.Error("InfiniBand: decided, want left to the route's IPoIB interface")
	}
}

// TestPerftestOptionsAgainstPerftest runs generated command lines through the real
// ib_send_bw (Debian 12's perftest 4.5+0.17), which parses them with glibc's
// getopt_long before it looks for a device: "Did not detect devices" means the line
// was taken, "Invalid Command or flag" that getopt refused it. ibkey must refuse the
// same lines (abbreviations shared by several options, names perftest does not know,
// a value given to a flag, a missing value, an unknown letter), except where perftest
// versions read an option differently, which it must leave not checked.
func TestPerftestOptionsAgainstPerftest(t *testing.T) {
	bin := needTool(t, "ib_send_bw", "perftest")
	rng := rand.New(rand.NewPCG(17, 2026))
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	// Options whose values perftest takes before it looks for a device.
	safe := map[string]string{"size": "65536", "iters": "1000", "tx-depth": "128", "port": "18515", "mtu": "1024", "sl": "1",
		"pkey_index": "1", "ib-dev": "mlx5_0", "ib-port": "1", "report_gbits": "", "report-both": "", "noPeak": "", "ipv6": "",
		"cpu_util": "", "dualport": "", "rdma_cm": "", "odp": "", "reversed": "", "run_infinitely": ""}
	names := slices.Sorted(maps.Keys(safe))
	var lines []string
	for len(lines) < 300 {
		words := []string{"ib_send_bw"}
		for range 1 + rng.IntN(4) {
			switch rng.IntN(9) {
			case 0, 1, 2: // a safe option, maybe abbreviated
				n := names[rng.IntN(len(names))]
				w := "--" + n[:1+rng.IntN(len(n))]
				switch v := safe[n]; {
				case v != "" && rng.IntN(2) == 0:
					w += "=" + v
				case v != "":
					w += " " + v
				case rng.IntN(6) == 0:
					w += "=1" // a value for a flag
				}
				words = append(words, strings.Fields(w)...)
			case 3: // names no version has, and prefixes of many
				words = append(words, pick("--bogus", "--pkey", "--pkeyindex", "--ib_dev", "--p", "--r", "--use", "--report", "--ib", "--i", "--d", "--numa_node=0", "--inline_recv=64", "--ph=1", "--no_l", "--cq"))
			case 4: // short options, clusters, unknown letters
				words = append(words, pick("-a", "-F", "-R", "-O", "-x 3", "-d mlx5_0", "-i1", "-FR", "-Y", "-1", "-Fd mlx5_0", "-q 1"))
			case 5:
				words = append(words, pick("--pkey_index", "--pkey_index=2x", "-i 0"))
			default:
				words = append(words, pick("--size=65536", "--report_gbits", "-F"))
			}
		}
		lines = append(lines, strings.Join(words, " "))
	}
	refusedBoth, decided := 0, 0
	for _, line := range lines {
		a := ParsePerftestArgs(line)
		f := strings.Fields(line)
		out, _ := exec.Command(bin, f[1:]...).CombinedOutput()
		took, refused := strings.Contains(string(out), "Did not detect devices"), strings.Contains(string(out), "Invalid Command or flag") || strings.Contains(string(out), "should be")
		switch {
		case len(a.Unsure) > 0:
			continue // 4.5-0.17 and master differ: not checked, as it must be
		case took == refused:
			t.Logf("%q: neither taken nor refused by getopt:\n%s", line, out)
			continue
		}
		decided++
		if refused {
			refusedBoth++
		}
		if refused != (a.BadValue != "") {
			t.Errorf("%q: perftest refuses it: %v; ibkey: %q\n%s", line, refused, a.BadValue, out)
		}
	}
	t.Logf("%d of %d lines decided by getopt, %d refused", decided, len(lines), refusedBoth)
	if decided < 200 || refusedBoth == 0 || refusedBoth == decided {
		t.Errorf("%d lines decided, %d refused: the generator must give both", decided, refusedBoth)
	}
}
