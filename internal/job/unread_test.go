package job

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/query"
)

// Tables with entries not read, generated: whatever an answer states as known (a
// port's pick, a library's verdict, one setting for the job, what a gate waits for)
// must be what every completion of the entries not read gives (each entry not read
// replaced by a full or limited entry of the key, another key or an empty entry); an
// answer that depends on them says it is not checked, and a gate waits for it.

// unreadKey is the partition the generated tables are asked about.
const unreadKey = check.PKey(0x8002)

// completionValues are what an entry not read may hold, as far as the libraries'
// lookups can tell apart: the key full or limited, another key, an empty entry.
var completionValues = []check.PKey{0x8002, 0x0002, 0x8003, 0x0000}

// randomTable is a table of 1-5 entries, some not read.
func randomTable(r *rand.Rand) []int {
	vals := []int{0xffff, 0x7fff, 0x8002, 0x0002, 0x8003, 0x0000, unread, unread}
	t := make([]int, 1+r.IntN(5))
	for i := range t {
		t[i] = vals[r.IntN(len(vals))]
	}
	return t
}

// completions calls f with every completion of the ports' entries not read.
func completions(ports []*Port, f func([]*Port)) {
	type slot struct{ port, entry int }
	var holes []slot
	for i, p := range ports {
		for j, e := range p.Table {
			if !e.Readable {
				holes = append(holes, slot{i, j})
			}
		}
	}
	n := 1
	for range holes {
		n *= len(completionValues)
	}
	for c := range n {
		out := make([]*Port, len(ports))
		for i, p := range ports {
			q := *p
			q.Table = append([]check.TableEntry(nil), p.Table...)
			out[i] = &q
		}
		for _, h := range holes {
			out[h.port].Table[h.entry] = check.TableEntry{Index: h.entry, PKey: completionValues[c%len(completionValues)], Readable: true}
			c /= len(completionValues)
		}
		f(out)
	}
}

func tableString(ps []*Port) string {
	var s []string
	for _, p := range ps {
		var t []string
		for _, e := range p.Table {
			if e.Readable {
				t = append(t, e.PKey.String())
			} else {
				t = append(t, "?")
			}
		}
		s = append(s, p.Host+"["+strings.Join(t, " ")+"]")
	}
	return strings.Join(s, " ")
}

// libraryInputs are the inputs each library is checked with: perftest needs its
// command line.
func libraryInputs(l *Library, e Env) Inputs {
	in := Inputs{Env: e}
	if l.ID == OpenMPI.ID {
		// Open MPI 4.x's openib BTL uses InfiniBand ports only with allow_ib.
		in.Env = maps.Clone(e)
		if in.Env == nil {
			in.Env = Env{}
		}
		in.Env["OMPI_MCA_btl_openib_allow_ib"] = "1"
	}
	if l.ID == Perftest.ID {
		a := ParsePerftestArgs("ib_send_bw -d mlx5_0")
		if v, ok := e["--pkey_index"]; ok {
			a = ParsePerftestArgs("ib_send_bw -d mlx5_0 --pkey_index=" + v)
		}
		in.Perftest = &a
	}
	return in
}

// pickKnown is what a pick states as known on a port: its outcome, and for a port
// it uses, the P_Key and (when said) the index.
func pickKnown(pk Pick) string {
	if pk.Outcome != Uses {
		return pk.Outcome.String()
	}
	if pk.Index < 0 {
		return fmt.Sprintf("uses %s", pk.PKey)
	}
	return fmt.Sprintf("uses %s at %d", pk.PKey, pk.Index)
}

func TestWantUnreadGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 2026))
	for n := 0; n < 400; n++ {
		var ports []*Port
		for h := range 1 + r.IntN(2) {
			ports = append(ports, port(fmt.Sprintf("h%d", h), "mlx5_0", 1, randomTable(r)...))
		}
		checkWantUnread(t, ports)
	}
	// Short tables on two or three hosts, mostly the key: where one index for every
	// host does or may exist.
	vals := []int{0x8002, 0x8002, 0x0002, 0xffff, unread}
	for n := 0; n < 300; n++ {
		var ports []*Port
		for h := range 2 + r.IntN(2) {
			t := make([]int, 1+r.IntN(3))
			for i := range t {
				t[i] = vals[r.IntN(len(vals))]
			}
			ports = append(ports, port(fmt.Sprintf("h%d", h), "mlx5_0", 1, t...))
		}
		checkWantUnread(t, ports)
	}
}

// checkWantUnread checks WantPartition, Gate and EnvExports on ports against every
// completion of their entries not read, and on each completion (every entry read) that
// an index setting is one value for the job whenever one index holds a best entry on
// every port.
func checkWantUnread(t *testing.T, ports []*Port) {
	t.Helper()
	for _, l := range Libraries() {
		in := libraryInputs(l, Env{})
		w := WantPartition([]*Library{l}, in, unreadKey, ports)[0]
		pending := Gate([]*Result{w}, unreadKey, true)
		ex := EnvExports([]*Result{w}, unreadKey, ports)
		name := l.ID + " " + tableString(ports)
		if w.Verdict == Incomplete && len(pending) == 0 {
			t.Errorf("%s: not checked (%q), and the gate has nothing to wait for", name, w.Unchecked)
		}
		if len(pending) == 0 && w.Verdict != Works {
			t.Errorf("%s: the gate passes with verdict %s", name, w.Verdict)
		}
		completions(ports, func(full []*Port) {
			c := WantPartition([]*Library{l}, in, unreadKey, full)[0]
			cname := name + " completed as " + tableString(full)
			if w.Verdict != Incomplete && c.Verdict != w.Verdict {
				t.Errorf("%s: verdict %s, but %s (%q %q)", cname, w.Verdict, c.Verdict, c.Findings, w.Unchecked)
			}
			for i, pw := range w.Ports {
				cw := c.Ports[i]
				switch {
				case pw.Outcome == NotChecked:
				case l.Kind == ByIndex && pw.Outcome == Uses && cw.PKey != pw.PKey:
					// An index setting names the best entry: a full one when one exists.
					t.Errorf("%s: %s suggests %s (%s), the best entry is %s (%s)", cname, pw.Port.Label(), pw.Setting, pw.PKey, cw.Setting, cw.PKey)
				case l.Kind == ByValue && pickKnown(pw.Pick) != pickKnown(cw.Pick) && !(pw.Index < 0 && cw.Outcome == Uses && cw.PKey == pw.PKey):
					t.Errorf("%s: %s: %s with %s, but the library's lookup gives %s", cname, pw.Port.Label(), pickKnown(pw.Pick), pw.Setting, pickKnown(cw.Pick))
				}
			}
			if w.Verdict == Works && w.Same == "" && w.sameUnknown == "" && c.Same != "" {
				t.Errorf("%s: no single value (%s), but %s", cname, w.Summary(), c.Same)
			}
			if w.Verdict == Works && w.Same != "" && c.Same == "" {
				t.Errorf("%s: %s everywhere, but no single value on the completion (%s)", cname, w.Same, c.Summary())
			}
			if l.Kind == ByIndex && c.Verdict == Works && c.Same == "" {
				if i := oneBestIndex(full); i >= 0 {
					t.Errorf("%s: no single value (%s), but index %d holds a best entry on every port", cname, c.Summary(), i)
				}
			}
			cex := EnvExports([]*Result{c}, unreadKey, full)
			if len(ex.Problems) > 0 && len(cex.Problems) == 0 {
				t.Errorf("%s: export problems %q, but none on the completion", cname, ex.Problems)
			}
			for _, p := range pending {
				if p.Definite() && len(Gate([]*Result{c}, unreadKey, true)) == 0 {
					t.Errorf("%s: the gate waits for %s, but the completion is ready", cname, p)
				}
			}
		})
	}
}

// oneBestIndex is, by brute force over tables read whole, an index holding on every
// port the key with the best membership that port has; -1 when there is none.
func oneBestIndex(ports []*Port) int {
	for i := 0; ; i++ {
		all, any := true, false
		for _, p := range ports {
			best := check.Limited
			for _, e := range p.Table {
				if e.PKey.Valid() && e.PKey.Partition() == unreadKey.Partition() && e.PKey.IsFull() {
					best = check.Full
				}
			}
			if i < len(p.Table) {
				any = true
			}
			e := check.PKey(0)
			if i < len(p.Table) {
				e = p.Table[i].PKey
			}
			all = all && e.Valid() && e.Partition() == unreadKey.Partition() && e.IsFull() == (best == check.Full)
		}
		if all {
			return i
		}
		if !any {
			return -1
		}
	}
}

// Resolve with each library's setting naming partition 0x0002 (or index 1): what it
// states as known holds on every completion.
func TestResolveUnreadGenerated(t *testing.T) {
	settings := map[string]Env{
		"nccl": {"NCCL_IB_PKEY": "1"}, "nvshmem": {"NVSHMEM_IB_PKEY_INDEX": "1"}, "perftest": {"--pkey_index": "1"},
		"ucx": {"UCX_IB_PKEY": "0x2"}, "gasnet": {"GASNET_IBV_PKEY": "0x2"}, "mvapich2": {"MV2_DEFAULT_PKEY": "0x2"},
		"openmpi": {"OMPI_MCA_btl_openib_pkey": "0x2"},
	}
	r := rand.New(rand.NewPCG(4, 2026))
	for n := 0; n < 400; n++ {
		var ports []*Port
		for h := range 1 + r.IntN(2) {
			ports = append(ports, port(fmt.Sprintf("h%d", h), "mlx5_0", 1, randomTable(r)...))
		}
		for _, l := range Libraries() {
			for _, e := range []Env{{}, settings[l.ID], {"UCX_IB_PKEY": "auto"}} {
				in := libraryInputs(l, e)
				w := Resolve([]*Library{l}, in, ports)[0]
				completions(ports, func(full []*Port) {
					c := Resolve([]*Library{l}, in, full)[0]
					cname := fmt.Sprintf("%s %v %s completed as %s", l.ID, e, tableString(ports), tableString(full))
					if w.Verdict != Incomplete && c.Verdict != w.Verdict {
						t.Errorf("%s: verdict %s, but %s (%q)", cname, w.Verdict, c.Verdict, c.Findings)
					}
					for i, pw := range w.Ports {
						cw := c.Ports[i]
						if pw.Used && pw.Outcome != NotChecked && pickKnown(pw.Pick) != pickKnown(cw.Pick) && !(pw.Index < 0 && cw.Outcome == Uses && cw.PKey == pw.PKey) {
							t.Errorf("%s: %s: %s, but %s", cname, pw.Port.Label(), pickKnown(pw.Pick), pickKnown(cw.Pick))
						}
					}
				})
			}
		}
	}
}

// One index for every host: read whole, the index every host holds a full entry at
// (not each host's lowest); where an entry not read may give one, not a "no" (the
// gate waits, --emit env exits 4), and the index a host holds the key at elsewhere
// is still named.
func TestWantOneIndexUnread(t *testing.T) {
	a, b := port("a", "mlx5_0", 1, 0x8002, 0x8002), port("b", "mlx5_0", 1, 0xffff, 0x8002)
	w := WantPartition([]*Library{&NCCL}, env(), unreadKey, []*Port{a, b})[0]
	if w.Verdict != Works || w.Same != "NCCL_IB_PKEY=1" {
		t.Errorf("duplicate full entries: %s, %q", w.Verdict, w.Summary())
	}
	a = port("a", "mlx5_0", 1, 0x8002, unread)
	for _, l := range []*Library{&NCCL, &NVSHMEM} {
		ws := WantPartition([]*Library{l}, env(), unreadKey, []*Port{a, b})
		w = ws[0]
		if w.Verdict != Works || w.Same != "" || !strings.Contains(w.sameUnknown, "index 1 may hold partition 0x0002 on every port") {
			t.Errorf("%s, entry 1 of a not read: %s, %q, %q", l.Name, w.Verdict, w.Summary(), w.sameUnknown)
		}
		ps := Gate(ws, unreadKey, true)
		if len(ps) != 1 || ps[0].Kind != PendingUnread || ps[0].Host != "b" && ps[0].Host != "a" {
			t.Errorf("%s: pending %v", l.Name, ps)
		}
		ex := EnvExports(ws, unreadKey, []*Port{a, b})
		if len(ex.Problems) != 0 || len(ex.Unchecked) != 1 || !strings.Contains(ex.Unchecked[0], "one value for every host of the job is not known") {
			t.Errorf("%s: exports %+v", l.Name, ex)
		}
	}
	// Read whole, no index is common: a definite "no" for one environment.
	a = port("a", "mlx5_0", 1, 0x8002, 0xffff)
	ws := WantPartition([]*Library{&NCCL}, env(), unreadKey, []*Port{a, b})
	if ps := Gate(ws, unreadKey, true); len(ps) != 1 || ps[0].Kind != PendingIndex {
		t.Errorf("no common index: pending %v", ps)
	}
	if ex := EnvExports(ws, unreadKey, []*Port{a, b}); len(ex.Problems) != 1 || len(ex.Unchecked) != 0 {
		t.Errorf("no common index: exports %+v", ex)
	}
}

// perftest -R: rdma_cm takes the P_Key from the route, not --pkey_index: no index
// setting is suggested as if it decided the partition.
// A bad --pkey_index is what the proposed --pkey_index replaces; a bad -i is not.
func TestWantPerftestBadValue(t *testing.T) {
	ports := []*Port{port("", "mlx5_0", 1, 0xffff, 0x8002)}
	for line, want := range map[string]Verdict{
		"ib_send_bw -d mlx5_0 --pkey_index=1x": Works,
		"ib_send_bw -d mlx5_0 --pkey_index":    Works,
		"ib_send_bw -d mlx5_0 -i 1x":           DoesNotWork,
	} {
		a := ParsePerftestArgs(line)
		if w := WantPartition([]*Library{&Perftest}, Inputs{Env: Env{}, Perftest: &a}, 0x8002, ports)[0]; w.Verdict != want {
			t.Errorf("%s: %s (%q), want %s", line, w.Verdict, w.Findings, want)
		}
	}
}

func TestWantPerftestRDMACM(t *testing.T) {
	a := ParsePerftestArgs("ib_send_bw -d mlx5_0 -R")
	w := WantPartition([]*Library{&Perftest}, Inputs{Env: Env{}, Perftest: &a}, unreadKey, []*Port{port("", "mlx5_0", 1, 0xffff, 0x8002)})[0]
	if w.Verdict != Incomplete || w.Ports[0].Setting != "" || len(w.Unchecked) != 1 || !strings.Contains(w.Unchecked[0], "perftest -R") {
		t.Errorf("perftest -R: %s %q %q", w.Verdict, w.Summary(), w.Unchecked)
	}
}

// Not checked only where the entries not read could change the answer: on one
// host, a port a library's pick leaves not checked has two completions on which it
// picks differently (an outcome or a P_Key; an index alone is said as not known).
func TestUnreadNotCheckedOnlyWhereItMatters(t *testing.T) {
	values := Env{"UCX_IB_PKEY": "0x2", "GASNET_IBV_PKEY": "0x2", "MV2_DEFAULT_PKEY": "0x2", "OMPI_MCA_btl_openib_pkey": "0x2", "NCCL_IB_PKEY": "1", "NVSHMEM_IB_PKEY_INDEX": "1", "--pkey_index": "1"}
	r := rand.New(rand.NewPCG(5, 2026))
	for n := 0; n < 600; n++ {
		ports := []*Port{port("h0", "mlx5_0", 1, randomTable(r)...)}
		for _, l := range Libraries() {
			for _, e := range []Env{{}, values} {
				in := libraryInputs(l, e)
				for _, want := range []bool{false, true} {
					answer := func(ps []*Port) Pick {
						if want {
							return WantPartition([]*Library{l}, in, unreadKey, ps)[0].Ports[0].Pick
						}
						return Resolve([]*Library{l}, in, ps)[0].Ports[0].Pick
					}
					if answer(ports).Outcome != NotChecked {
						continue
					}
					picks := map[string]bool{}
					completions(ports, func(full []*Port) {
						pk := answer(full)
						picks[pk.Outcome.String()+" "+pk.PKey.String()] = true
					})
					if len(picks) < 2 {
						t.Errorf("%s %v (want %v) %s: not checked, but every completion gives %v", l.ID, e, want, tableString(ports), picks)
					}
				}
			}
		}
	}
}

// Another adapter of a host, behind a link a sweep did not read (its device name not
// known): a library chooses it unless its device settings admit none of the names
// it could have, which are not those of the host's adapters read.
func TestChoosesAdapterNotNamed(t *testing.T) {
	fab := func(dev string) *Port {
		p := port("node01", dev, 1, 0xffff, 0x8002)
		p.Fabric, p.DeviceKnown = true, true
		return p
	}
	host := []*Port{fab("mlx5_0"), fab("mlx5_1")}
	other := Unread{Host: "node01", Port: -1, Name: "another adapter of node01", Why: "the sweep did not read every link"}
	for _, c := range []struct {
		lib  *Library
		env  []string
		pt   string // perftest command line
		want bool
	}{
		{&NCCL, nil, "", true},
		{&NCCL, []string{"NCCL_IB_HCA==mlx5_0,mlx5_1"}, "", false},
		{&NCCL, []string{"NCCL_IB_HCA=mlx5_0"}, "", true}, // a prefix: mlx5_0x is admitted
		{&NCCL, []string{"NCCL_IB_HCA=^=mlx5_0"}, "", true},
		{&UCX, []string{"UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1"}, "", false},
		{&UCX, []string{"UCX_NET_DEVICES=mlx5_0:1,mlx5_7:1"}, "", true},
		{&MVAPICH2, []string{"MV2_IBA_HCA=mlx5_0"}, "", false},
		{&MVAPICH2, []string{"MV2_IBA_HCA=mlx5_0:mlx5_5"}, "", true},
		{&MVAPICH2, nil, "", true},
		{&OpenMPI, []string{"OMPI_MCA_btl_openib_if_include=mlx5_1", "OMPI_MCA_btl_openib_allow_ib=1"}, "", false},
		{&Perftest, nil, "ib_send_bw -d mlx5_1", false},
		{&Perftest, nil, "ib_send_bw", true}, // the first device by name may be the one not read
	} {
		in := env(c.env...)
		if c.pt != "" || c.lib == &Perftest {
			a := ParsePerftestArgs(c.pt)
			in.Perftest = &a
		}
		if got := c.lib.setup(in).chooses(in, host, other); got != c.want {
			t.Errorf("%s %v %q: chooses %v, want %v", c.lib.ID, c.env, c.pt, got, c.want)
		}
	}
	// What the command asks (Run: exit 4 only when a library checked could use it).
	for _, c := range []struct {
		env  string
		want string
	}{{"UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1", "NCCL"}, {"UCX_NET_DEVICES=all", "UCX,NCCL"}} {
		in := env(c.env)
		in.Unread = []Unread{other}
		if got := strings.Join(Choosers(Resolve([]*Library{&UCX, &NCCL}, in, host), other), ","); got != c.want {
			t.Errorf("%s: choosers %q", c.env, got)
		}
	}
	// Device names not known (a description without rdma-ndd's "HOST DEVICE"): any.
	host[1].DeviceKnown = false
	in := env("NCCL_IB_HCA==mlx5_0,mlx5_1")
	if !NCCL.setup(in).chooses(in, host, other) {
		t.Error("a host whose device names are not known: not chosen")
	}
}

// The IPoIB interface --emit env names: still named when the entry the kernel runs
// it with is not known (entries not read), said in a warning.
func TestEnvExportsInterfaceEntry(t *testing.T) {
	for _, c := range []struct {
		nif  query.IPoIB
		want string
	}{
		{query.IPoIB{Index: 1, Membership: check.Full}, ""},
		{query.IPoIB{Index: 1, Membership: check.Full, Unknown: "entry 1 holds it as a full member, but 1 entry before it could not be read (index 0)"}, ""},
		{query.IPoIB{Index: 1, Membership: check.Limited, Unknown: "only a limited entry was found; 1 P_Key table entry could not be read (index 3)"}, "whether it runs as a full or a limited member is not known: only a limited entry"},
	} {
		nif := ipoibUp("ib0.8002", 0x8002)
		nif.Index, nif.Membership, nif.Unknown = c.nif.Index, c.nif.Membership, c.nif.Unknown
		a := ibPort("a", 0xffff, 0x8002)
		a.Interfaces = []query.IPoIB{nif}
		ex := EnvExports(WantPartition([]*Library{&UCX}, Inputs{Env: Env{}}, unreadKey, []*Port{a}), unreadKey, []*Port{a})
		if len(ex.Vars) != 2 || ex.Vars[1].Value != "ib0.8002" || (c.want == "") != (len(ex.Warnings) == 0) || c.want != "" && !strings.Contains(ex.Warnings[0], c.want) {
			t.Errorf("%+v: %+v, want warning %q", c.nif, ex, c.want)
		}
	}
}

// A port whose link layer was not read (InfiniBand or RoCE): a library that selects
// ports by link layer may use it, so it is not checked, never "uses none of its
// ports"; a gate waits for it.
func TestLinkLayerNotRead(t *testing.T) {
	p := port("", "mlx5_0", 1, 0xffff, 0x8002)
	p.LinkLayer = ""
	for _, l := range []*Library{&NCCL, &UCX, &NVSHMEM, &MVAPICH2, &OpenMPI} {
		in := libraryInputs(l, Env{})
		r := Resolve([]*Library{l}, in, []*Port{p})[0]
		ws := WantPartition([]*Library{l}, in, unreadKey, []*Port{p})
		if r.Verdict != Incomplete || len(r.Findings) != 0 || ws[0].Verdict != Incomplete || len(ws[0].Findings) != 0 || !strings.Contains(r.Unchecked[0], "the link layer of mlx5_0/1 was not read") {
			t.Errorf("%s: resolve %s %q %q, want %s %q", l.ID, r.Verdict, r.Findings, r.Unchecked, ws[0].Verdict, ws[0].Findings)
		}
		if ps := Gate(ws, unreadKey, false); len(ps) != 1 || ps[0].Kind != PendingUnread {
			t.Errorf("%s: pending %v", l.ID, ps)
		}
	}
}

// The one value of a library some of whose ports are not checked is said for the
// ports checked, not "everywhere".
func TestSummaryPortsNotChecked(t *testing.T) {
	ports := []*Port{port("a", "mlx5_0", 1, 0xffff, 0x8002), port("b", "mlx5_0", 1, 0xffff, 0x0002, unread)}
	w := WantPartition([]*Library{&NCCL}, env(), unreadKey, ports)[0]
	if w.Verdict != Incomplete || w.Summary() != "NCCL_IB_PKEY=1 on every port checked" {
		t.Errorf("%s %q", w.Verdict, w.Summary())
	}
	ports[1] = port("b", "mlx5_0", 1, 0xffff, 0x8002)
	if w = WantPartition([]*Library{&NCCL}, env(), unreadKey, ports)[0]; w.Summary() != "NCCL_IB_PKEY=1 everywhere" {
		t.Errorf("%s %q", w.Verdict, w.Summary())
	}
}

// NCCL_IB_PKEY_VALUE, which newer NCCL reads (2.31.2's variables), is not taken for
// a look-alike nor left out: NCCL's answer is not checked.
func TestNCCLPKeyValueNotInterpreted(t *testing.T) {
	in := env("NCCL_IB_PKEY_VALUE=0x8002")
	if la := LookAlikes(in.Env); len(la) != 0 {
		t.Errorf("look-alikes %q", la)
	}
	if !NCCL.Mentioned(in) {
		t.Error("NCCL_IB_PKEY_VALUE does not make NCCL a library of the job")
	}
	r := Resolve([]*Library{&NCCL}, in, []*Port{port("", "mlx5_0", 1, 0xffff, 0x8002)})[0]
	if r.Verdict != Incomplete || len(r.Unchecked) != 1 || !strings.Contains(r.Unchecked[0], "NCCL_IB_PKEY_VALUE=0x8002") {
		t.Errorf("%s %q", r.Verdict, r.Unchecked)
	}
}

// A host of which no port was read (a LID that did not answer) is not judged for
// the aborts that look at a host's ports: GASNet's "unable to open any HCA ports" and
// MVAPICH2's "No IB device found" would rest only on what was not read. Each library
// says once that it may use the host's ports, in Resolve and in WantPartition.
func TestNoneReadNotJudgedForAborts(t *testing.T) {
	read := port("node01", "mlx5_0", 1, 0xffff, 0x8002)
	silent := Unread{Host: "lid 5", Port: -1, Name: "lid 5", Why: "no answer", Kind: fabric.UnreadNode}
	in := env()
	in.Unread = []Unread{silent}
	libs := []*Library{&GASNet, &MVAPICH2, &NCCL}
	check1 := func(what string, lib *Library, unchecked []string) {
		t.Helper()
		want := "lid 5: not read: " + lib.Name + " may use its ports"
		n := 0
		for _, u := range unchecked {
			if strings.HasPrefix(u, "lid 5:") {
				n++
				if u != want {
					t.Errorf("%s %s: %q, want %q", what, lib.ID, u, want)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s %s: %d lines about lid 5 in %q, want 1", what, lib.ID, n, unchecked)
		}
	}
	for i, r := range Resolve(libs, in, []*Port{read}) {
		check1("Resolve", libs[i], r.Unchecked)
		if r.Verdict != Incomplete {
			t.Errorf("Resolve %s: verdict %v, want incomplete", libs[i].ID, r.Verdict)
		}
	}
	key, _ := check.ParsePKey("0x8002")
	for i, r := range WantPartition(libs, in, key, []*Port{read}) {
		check1("WantPartition", libs[i], r.Unchecked)
	}
}
