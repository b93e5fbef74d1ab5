package job

import (
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// ibPort is an ACTIVE InfiniBand port of host with the given table.

// pendingNames name the pending kinds in the cases below.
var pendingNames = [...]string{"missing", "limited", "index-differs", "not-read", "not-active"}

func ibPort(host string, table ...check.PKey) *Port {
	p := &Port{Host: host, Device: "mlx5_0", Num: 1, LinkLayer: "InfiniBand", State: "ACTIVE", LID: 5, InterfacesRead: true}
	for i, k := range table {
		p.Table = append(p.Table, check.TableEntry{Index: i, PKey: k, Readable: true})
	}
	return p
}

func libsByID(ids ...string) []*Library {
	var out []*Library
	for _, id := range ids {
		l, _ := LookupLibrary(id)
		out = append(out, l)
	}
	return out
}

func TestGate(t *testing.T) {
	const key = check.PKey(0x0042)
	unread := ibPort("c", 0xffff, 0x8042)
	unread.Table[0].Readable = false
	unread.Table[1].Readable = false
	down := ibPort("d", 0xffff, 0x8042)
	down.State = "INIT"
	down.Fabric = true
	for _, tc := range []struct {
		name     string
		libs     []string
		ports    []*Port
		oneIndex bool
		want     []string // "host kind"
	}{
		{"ready", []string{"nccl", "ucx"}, []*Port{ibPort("a", 0xffff, 0x8042), ibPort("b", 0xffff, 0x8042)}, true, nil},
		{"missing on one host", []string{"nccl", "ucx"}, []*Port{ibPort("a", 0xffff, 0x8042), ibPort("b", 0xffff)}, false, []string{"b missing"}},
		// One limited host talks to the full ones; two limited hosts do not.
		{"one limited", []string{"ucx"}, []*Port{ibPort("a", 0xffff, 0x0042), ibPort("b", 0xffff, 0x8042)}, false, nil},
		{"two limited", []string{"ucx"}, []*Port{ibPort("a", 0xffff, 0x0042), ibPort("b", 0xffff, 0x0042), ibPort("c", 0xffff, 0x8042)}, false, []string{"a limited", "b limited"}},
		// GASNet takes the first entry of the key, limited, although a full one follows.
		{"gasnet first entry", []string{"gasnet"}, []*Port{ibPort("a", 0xffff, 0x0042, 0x8042), ibPort("b", 0xffff, 0x0042)}, false, []string{"a limited", "b limited"}},
		{"index differs, one environment", []string{"nccl"}, []*Port{ibPort("a", 0xffff, 0x8042), ibPort("b", 0xffff, 0x8042), ibPort("c", 0xffff, 0x8001, 0x8042)}, true, []string{"c index-differs"}},
		{"index differs, per host", []string{"nccl"}, []*Port{ibPort("a", 0xffff, 0x8042), ibPort("c", 0xffff, 0x8001, 0x8042)}, false, nil},
		{"index differs, a value library", []string{"ucx"}, []*Port{ibPort("a", 0xffff, 0x8042), ibPort("c", 0xffff, 0x8001, 0x8042)}, true, nil},
		{"unread", []string{"nccl"}, []*Port{ibPort("a", 0xffff, 0x8042), unread}, false, []string{"c not-read"}},
		{"not active over the fabric", []string{"nccl"}, []*Port{ibPort("a", 0xffff, 0x8042), down}, false, []string{"d not-active"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := WantPartition(libsByID(tc.libs...), Inputs{Env: Env{}}, key, tc.ports)
			var got []string
			for _, p := range Gate(ws, key, tc.oneIndex) {
				got = append(got, p.Host+" "+pendingNames[p.Kind])
				if p.Why == "" || !strings.HasPrefix(p.String(), p.Port+": ") {
					t.Errorf("%+v: no reason", p)
				}
			}
			if strings.Join(got, ", ") != strings.Join(tc.want, ", ") {
				t.Errorf("pending %v, want %v", got, tc.want)
			}
		})
	}
	// An InfiniBand port whose table was not read: not checked (not a "no"), and the
	// gate waits for it.
	noTable := ibPort("e")
	noTable.Table, noTable.NoTable = nil, "P_Key table not read"
	for _, l := range []string{"nccl", "ucx", "gasnet"} {
		ws := WantPartition(libsByID(l), Inputs{Env: Env{}}, key, []*Port{ibPort("a", 0xffff, 0x8042), noTable})
		if ws[0].Verdict != Incomplete || len(ws[0].Findings) != 0 {
			t.Errorf("%s, a table not read: verdict %s, findings %q", l, ws[0].Verdict, ws[0].Findings)
		}
		if ps := Gate(ws, key, false); len(ps) != 1 || ps[0].Kind != PendingUnread {
			t.Errorf("%s, a table not read: pending %v", l, ps)
		}
	}
	// Limited ports of one host reach the full members of the others: not a finding,
	// nothing to wait for (as Resolve says of the same ports).
	a2 := ibPort("a", 0xffff, 0x0042)
	a2.Device = "mlx5_1"
	ws := WantPartition(libsByID("ucx"), Inputs{Env: Env{}}, key, []*Port{ibPort("a", 0xffff, 0x0042), a2, ibPort("b", 0xffff, 0x8042)})
	if ws[0].Verdict != Works || len(ws[0].Findings) != 0 || len(Gate(ws, key, false)) != 0 {
		t.Errorf("two limited ports of one host: %s %q, pending %v", ws[0].Verdict, ws[0].Findings, Gate(ws, key, false))
	}
	if r := Resolve(libsByID("ucx"), Inputs{Env: Env{"UCX_IB_PKEY": "0x42"}}, []*Port{ibPort("a", 0xffff, 0x0042), a2, ibPort("b", 0xffff, 0x8042)})[0]; r.Verdict != Works {
		t.Errorf("resolve, two limited ports of one host: %s %q", r.Verdict, r.Findings)
	}
	// A key the library refuses (GASNet: 0x0002-0x7fff) is a finding, and no port is
	// a limited member of it: nothing the SM does changes it.
	ws = WantPartition(libsByID("gasnet"), Inputs{Env: Env{}}, 0x0001, []*Port{ibPort("a", 0xffff, 0x8001), ibPort("b", 0xffff, 0x8001)})
	if ps := Gate(ws, 0x0001, false); ws[0].Verdict != DoesNotWork || len(ps) != 0 {
		t.Errorf("gasnet, partition 0x0001: %s, pending %v", ws[0].Verdict, ps)
	}
	// A local host whose only InfiniBand port is not ACTIVE yet: the libraries use
	// none of its ports, and the gate waits for it to come up.
	init := ibPort("", 0xffff)
	init.State = "INIT"
	ws = WantPartition(libsByID("nccl"), Inputs{Env: Env{}}, key, []*Port{init})
	if ps := Gate(ws, key, false); len(ps) != 1 || ps[0].Kind != PendingNotActive {
		t.Errorf("INIT port: %v", ps)
	}
}

func TestEnvExports(t *testing.T) {
	const key = check.PKey(0x0042)
	a := ibPort("a", 0xffff, 0x8001, 0x8042)
	a.Interfaces = []query.IPoIB{ipoibUp("ib0.8042", 0x8042), ipoibUp("ib0", 0xffff)}
	all := WantPartition(libsByID("nccl", "ucx", "nvshmem", "gasnet", "mvapich2", "openmpi"), Inputs{Env: Env{"OMPI_MCA_btl_openib_allow_ib": "1"}}, key, []*Port{a})
	ex := EnvExports(all, key, []*Port{a})
	var lines []string
	for _, v := range ex.Vars {
		lines = append(lines, v.Line())
	}
	want := "export NCCL_IB_PKEY=2|export UCX_IB_PKEY=0x0042|export NVSHMEM_IB_PKEY_INDEX=2|export GASNET_IBV_PKEY=0x0042|export MV2_DEFAULT_PKEY=0x0042|export OMPI_MCA_btl_openib_pkey=0x0042|export IBKEY_IPOIB_INTERFACE=ib0.8042"
	if strings.Join(lines, "|") != want || len(ex.Problems) != 0 || len(ex.Warnings) != 0 {
		t.Errorf("exports %v problems %v warnings %v", lines, ex.Problems, ex.Warnings)
	}
	// Open MPI over UCX: the openib setting is not applicable and not exported (nor
	// an interface: no library uses a port).
	ws := WantPartition(libsByID("openmpi"), Inputs{Env: Env{"OMPI_MCA_pml": "ucx"}}, key, []*Port{a})
	ex = EnvExports(ws, key, []*Port{a})
	if len(ex.Vars) != 0 || len(ex.Warnings) != 1 || !strings.Contains(ex.Warnings[0], "nothing to export") {
		t.Errorf("pml ucx: %+v", ex)
	}
	// A btl list Open MPI refuses stops MPI_Init whatever btl_openib_pkey says: no
	// export, a problem. A partition value UCX cannot parse is what the export
	// replaces: exported.
	ws = WantPartition(libsByID("openmpi", "ucx"), Inputs{Env: Env{"OMPI_MCA_btl_openib_allow_ib": "1", "OMPI_MCA_btl": "self, openib", "UCX_IB_PKEY": "8042"}}, key, []*Port{a})
	ex = EnvExports(ws, key, []*Port{a})
	if ws[0].Verdict != DoesNotWork || ws[1].Verdict != Works || len(ex.Problems) != 1 || !strings.Contains(ex.Problems[0], "refuses OMPI_MCA_btl=self, openib") {
		t.Errorf("refused btl list: %s, %s; %+v", ws[0].Verdict, ws[1].Verdict, ex)
	}
	// A host without the key: the library has no setting: a problem, nothing to set.
	b := ibPort("b", 0xffff)
	ws = WantPartition(libsByID("ucx"), Inputs{Env: Env{}}, key, []*Port{a, b})
	ex = EnvExports(ws, key, []*Port{a, b})
	if len(ex.Problems) != 1 || !strings.Contains(ex.Problems[0], "UCX: no setting puts it in partition 0x0042") {
		t.Errorf("missing key: %+v", ex)
	}
	// The interface of the partition is down on a host: still the interface to
	// use, said with a warning.
	d := ibPort("d", 0xffff, 0x8001, 0x8042)
	d.Interfaces = []query.IPoIB{{Name: "ib0.8042", PKey: 0x8042, OperState: "down", AdminUp: ibverbs.Opt[bool]{Value: false}}}
	ws = WantPartition(libsByID("ucx"), Inputs{Env: Env{}}, key, []*Port{a, d})
	ex = EnvExports(ws, key, []*Port{a, d})
	if len(ex.Vars) != 2 || ex.Vars[1].Value != "ib0.8042" || len(ex.Warnings) != 1 || ex.Warnings[0] != "d: IPoIB interface ib0.8042 of partition 0x0042 is down" {
		t.Errorf("interface down: %+v", ex)
	}
	// Up without carrier (not joined to the broadcast group), and a state not read:
	// each said, the interface still the one to use.
	for _, tc := range []struct {
		nif  query.IPoIB
		want string
	}{
		{query.IPoIB{Name: "ib0.8042", PKey: 0x8042, OperState: "down", AdminUp: ibverbs.Opt[bool]{Value: true}},
			"d: IPoIB interface ib0.8042 of partition 0x0042 is up without carrier: it has not joined the partition's broadcast group ('ibkey pkeys' on that host says why)"},
		{query.IPoIB{Name: "ib0.8042", PKey: 0x8042, OperState: "unknown", AdminUp: ibverbs.Opt[bool]{Value: true}, Carrier: ibverbs.Opt[bool]{Value: true}}, ""},
		{query.IPoIB{Name: "ib0.8042", PKey: 0x8042, AdminUp: ibverbs.Opt[bool]{Missing: "flags: permission denied"}},
			"d: IPoIB interface ib0.8042 of partition 0x0042: whether it is up was not read (flags: permission denied)"},
		{query.IPoIB{Name: "ib0.8042", PKey: 0x8042, AdminUp: ibverbs.Opt[bool]{Value: true}, Carrier: ibverbs.Opt[bool]{Missing: "carrier: I/O error"}},
			"d: IPoIB interface ib0.8042 of partition 0x0042: whether it has carrier was not read (carrier: I/O error)"},
	} {
		d.Interfaces = []query.IPoIB{tc.nif}
		ws = WantPartition(libsByID("ucx"), Inputs{Env: Env{}}, key, []*Port{a, d})
		ex = EnvExports(ws, key, []*Port{a, d})
		if len(ex.Vars) != 2 || ex.Vars[1].Value != "ib0.8042" || (tc.want == "") != (len(ex.Warnings) == 0) || (tc.want != "" && ex.Warnings[0] != tc.want) {
			t.Errorf("%+v: %+v, want warning %q", tc.nif, ex, tc.want)
		}
	}
	// Different interface names on two hosts: not set, said why.
	c := ibPort("c", 0xffff, 0x8001, 0x8042)
	c.Interfaces = []query.IPoIB{ipoibUp("ib1.8042", 0x8042)}
	ws = WantPartition(libsByID("ucx"), Inputs{Env: Env{}}, key, []*Port{a, c})
	ex = EnvExports(ws, key, []*Port{a, c})
	if len(ex.Vars) != 1 || len(ex.Warnings) != 1 || !strings.Contains(ex.Warnings[0], "different names (ib0.8042, ib1.8042)") {
		t.Errorf("two names: %+v", ex)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"0x0042": "0x0042", "ib0.8042": "ib0.8042", "": "''", "a b": "'a b'", "it's": `'it'\''s'`, "$(x)": "'$(x)'"} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestLookAlikes(t *testing.T) {
	got := LookAlikes(Env{
		"NCCL_IB_PKEYS": "1", "NCCL_IB_PKEY": "1", "nccl_ib_pkey": "2", "UCX_IB_PKEYS": "0x2", "UCX_RC_PKEY": "0x2",
		"GASNET_PKEY": "2", "MV2_PKEY": "0x2", "NVSHMEM_IB_PKEY": "1", "OMPI_MCA_btl_openib_pkey_val": "2",
		"NCCL_IB_TC": "41", "PATH": "/bin", "MY_PKEY": "1",
	})
	want := []string{
		"GASNET_PKEY=2 is read by no library ibkey knows: did you mean GASNET_IBV_PKEY?",
		"MV2_PKEY=0x2 is read by no library ibkey knows: did you mean MV2_DEFAULT_PKEY?",
		"NCCL_IB_PKEYS=1 is read by no library ibkey knows: did you mean NCCL_IB_PKEY?",
		"NVSHMEM_IB_PKEY=1 is read by no library ibkey knows: did you mean NVSHMEM_IB_PKEY_INDEX?",
		"OMPI_MCA_btl_openib_pkey_val=2 is read by no library ibkey knows: did you mean OMPI_MCA_btl_openib_ib_pkey_val?",
		"UCX_IB_PKEYS=0x2 is read by no library ibkey knows: did you mean UCX_IB_PKEY?",
		"nccl_ib_pkey=2 is read by no library ibkey knows: did you mean NCCL_IB_PKEY?",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestMatchHost(t *testing.T) {
	f := &fabric.Fabric{Nodes: []*fabric.Node{
		{GUID: 1, Type: check.NodeCA, Description: "node01 mlx5_0"},
		{GUID: 2, Type: check.NodeCA, Description: "node01 mlx5_1"},
		{GUID: 3, Type: check.NodeCA, Description: "node02.cluster.local mlx5_0"},
		{GUID: 4, Type: check.NodeCA, Description: "HcaB"},
		{GUID: 5, Type: check.NodeSwitch, Description: "node01 switch"},
		{GUID: 6, Type: check.NodeCA, Description: "node010 mlx5_0"},
	}}
	for name, want := range map[string][]check.GUID{"node01": {1, 2}, "node02": {3}, "HcaB": {4}, "node0": nil, "0x0000000000000006": {6}, "node01 mlx5_1": {2}} {
		var got []check.GUID
		for _, n := range MatchHost(f, name) {
			got = append(got, n.GUID)
		}
		if len(got) != len(want) || (len(got) > 0 && got[0] != want[0]) || (len(got) > 1 && got[1] != want[1]) {
			t.Errorf("MatchHost(%q) = %v, want %v", name, got, want)
		}
	}
	if dev, ok := HostDevice("node02.cluster.local mlx5_0", "node02"); dev != "mlx5_0" || !ok {
		t.Errorf("HostDevice: %q %v", dev, ok)
	}
}

// ipoibUp is an IPoIB interface that is up with carrier.
func ipoibUp(name string, key check.PKey) query.IPoIB {
	return query.IPoIB{Name: name, PKey: key, OperState: "up", AdminUp: ibverbs.Opt[bool]{Value: true}, Carrier: ibverbs.Opt[bool]{Value: true}}
}
