package partconf

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// diff reports want and got when they differ (go-cmp would need a module dependency).
func diff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return fmt.Sprintf("want %v\n got %v", want, got)
}

// labTables are the tables OpenSM 3.3.23 programmed on the four HCA ports and the
// switch's port 0 of testdata/lab/net (HcaA running OpenSM), as checked by
// TestLabOpenSM. They pin the model when the lab is not installed.
var labTables = []struct {
	lc     labCase
	tables [5]string // HcaA..HcaD, then the switch's port 0
}{
	{labCase{conf: ""}, [5]string{"0xffff", "0xffff", "0xffff", "0xffff", "0xffff"}},
	{labCase{conf: "multiline"}, [5]string{"0xffff 0x8010", "0xffff 0x0010", "0xffff 0x0010 0x8020", "0xffff 0x0020", "0xffff"}},
	{labCase{conf: "prefix"}, [5]string{"0xffff 0x8010 0x8020 0x8030", "0xffff 0x0010 0x0020 0x0030", "0xffff 0x8010 0x0020 0x0030", "0xffff 0x8010 0x0020 0x8030", "0xffff"}},
	{labCase{conf: "defmember"}, [5]string{"0xffff 0x8010", "0xffff 0x0020", "0xffff 0x8030 0x0040", "0xffff 0x8040 0x8050", "0xffff"}},
	{labCase{conf: "both"}, [5]string{"0xffff 0x8010", "0xffff 0x8010", "0xffff 0x0010 0x8020 0x0030", "0xffff 0x0020 0x8030", "0xffff"}},
	{labCase{conf: "both", allowBoth: true}, [5]string{"0xffff 0x0010 0x8010", "0xffff 0x8010", "0xffff 0x0010 0x0020 0x8020 0x0030", "0xffff 0x0020 0x8030", "0xffff"}},
	{labCase{conf: "rejected"}, [5]string{"0xffff", "0xffff", "0xffff", "0xffff", "0xffff"}},
	{labCase{conf: "dupkeys"}, [5]string{"0xffff 0x8001", "0xffff 0x8001 0x8004", "0xffff 0x8002 0x0003 0x0010", "0x7fff 0x8003", "0xffff"}},
	{labCase{conf: "keywords"}, [5]string{"0xffff 0x8010 0x0020 0x8040", "0xffff 0x0010 0x0020", "0xffff 0x0010 0x0020", "0xffff 0x0010 0x0020 0x0040", "0x7fff 0x0010 0x8030"}},
	{labCase{conf: "nodefault"}, [5]string{"0xffff", "0x7fff 0x8010", "0x7fff 0x0010", "0x7fff", "0x7fff"}},
	{labCase{conf: "order"}, [5]string{"0xffff 0x8100 0x8005", "0xffff 0x8100 0x8201 0x0002 0x8005", "0xffff 0x8100 0x8001 0x0101 0x8005", "0x0040 0x8100 0x8005 0x0050 0xffff", "0xffff 0x8100 0x8005"}},
	{labCase{conf: "order", allowBoth: true}, [5]string{"0xffff 0x8100 0x8005", "0xffff 0x8100 0x8201 0x0002 0x8005", "0xffff 0x8100 0x8001 0x0101 0x8005", "0x0040 0x8100 0x8005 0x0050 0xffff", "0xffff 0x8100 0x8005"}},
	{labCase{conf: "mgid"}, [5]string{"0xffff", "0xffff 0x8010", "0xffff 0x8020", "0xffff 0x0020", "0xffff"}},
	{labCase{conf: "smlimited"}, [5]string{"0x7fff 0x0010", "0x7fff 0x0010", "0x7fff 0x0010", "0x7fff 0x0010", "0x7fff 0x0010"}},
	{labCase{conf: "crlf"}, [5]string{"0xffff", "0xffff", "0xffff", "0xffff", "0xffff"}},
	{labCase{conf: "semicolon"}, [5]string{"0xffff", "0xffff", "0xffff", "0xffff", "0xffff"}},
	{labCase{conf: "overflow"}, [5]string{"0xffff", "0xffff 0x0003 0x0006 0x0009 0x000c 0x000f 0x0012 0x0015 0x0018 0x001b 0x001e", "0xffff", "0xffff", "0xffff 0x8003 0x8006 0x8009 0x800c 0x800f 0x8012 0x8015"}},
	{labCase{conf: "samename"}, [5]string{"0xffff", "0xffff 0x0002 0x8150", "0xffff 0x0002 0x8106", "0xffff 0x8106", "0xffff"}},
}

func TestModelMatchesRecordedLab(t *testing.T) {
	if len(labTables) != len(labCases) {
		t.Fatalf("labTables has %d cases, labCases %d: record the new case", len(labTables), len(labCases))
	}
	for _, tc := range labTables {
		t.Run(tc.lc.String(), func(t *testing.T) {
			m := NewModel(loadLabConfig(t, tc.lc.conf), labFabric, Options{AllowBoth: tc.lc.allowBoth, SMGUID: labSM, TableSize: 64})
			for i, want := range tc.tables {
				got := strings.Trim(fmt.Sprint(m.PKeys(labFabric[i].GUID)), "[]")
				if got != want {
					t.Errorf("port %s: got %s, OpenSM programmed %s", labFabric[i].GUID, got, want)
				}
			}
		})
	}
}

// A small partitions.conf in the style of opensm(8)'s PARTITION CONFIGURATION
// examples, and its verdicts.
const factsExample = `Default=0x7fff, ipoib : ALL=full;
storage=0x0001 : 0x0002c90300000201=full, 0x0002c90300000204, 0x0002c90300000207;
compute=0x0002, defmember=full : 0x0002c90300000204, 0x0002c9030000020a=limited;
`

var factsPorts = []Port{
	{GUID: 0x0002c90300000201, Type: check.NodeCA}, {GUID: 0x0002c90300000204, Type: check.NodeCA},
	{GUID: 0x0002c90300000207, Type: check.NodeCA}, {GUID: 0x0002c9030000020a, Type: check.NodeCA},
}

func TestFactsExample(t *testing.T) {
	m := NewModel(Parse("p.conf", []byte(factsExample)), factsPorts, Options{SMGUID: 0x0002c90300000201})
	want := map[check.GUID]string{
		0x0002c90300000201: "[0xffff 0x8001]",
		0x0002c90300000204: "[0xffff 0x0001 0x8002]",
		0x0002c90300000207: "[0xffff 0x0001]",
		0x0002c9030000020a: "[0xffff 0x0002]",
	}
	for g, w := range want {
		if got := fmt.Sprint(m.PKeys(g)); got != w {
			t.Errorf("%s: %s, want %s", g, got, w)
		}
	}
	v := canTalk(m, 0x0002c90300000204, 0x0002c90300000207)
	if !v.CanTalk() { // via the default partition, both full
		t.Errorf("204-207 should talk through the default partition: %+v", v)
	}
	var storage *check.SharedPartition
	for i := range v.Shared {
		if v.Shared[i].Key == 1 {
			storage = &v.Shared[i]
		}
	}
	if storage == nil || storage.Works {
		t.Errorf("storage verdict for 204-207 (both limited): %+v", storage)
	}
	for _, e := range m.Table(0x0002c90300000204) {
		if e.PKey.Partition() == 1 && e.DecidedBy.Pos().Line != 2 {
			t.Errorf("204's storage entry decided at %s, want line 2", e.DecidedBy.Pos())
		}
	}
	// Without the default partition in play:
	c := Parse("p.conf", []byte(strings.Replace(factsExample, "ALL=full", "ALL=limited, SELF=full", 1)))
	m = NewModel(c, factsPorts, Options{SMGUID: 0x0002c90300000201})
	if v := canTalk(m, 0x0002c90300000204, 0x0002c90300000207); v.CanTalk() {
		t.Errorf("204-207 both limited everywhere: %+v", v)
	}
	if v := canTalk(m, 0x0002c90300000201, 0x0002c90300000207); !v.CanTalk() {
		t.Errorf("201-207: %+v", v)
	}
	if v := canTalk(m, 0x0002c90300000201, 0x0002c9030000020a); !v.CanTalk() { // default: SELF full
		t.Errorf("201-20a: %+v", v)
	}
	if v := canTalk(m, 0x0002c90300000207, 0x0002c9030000020a); v.CanTalk() || len(v.Shared) != 1 {
		t.Errorf("207-20a share only the default partition, both limited: %+v", v)
	}
	if v := canTalk(m, 0x0002c90300000207, 0x1234); v.CanTalk() || len(v.Shared) != 0 {
		t.Errorf("unknown port: %+v", v)
	}
}

func TestRejectedModelIsFallback(t *testing.T) {
	c := Parse("p.conf", []byte("Default=0x7fff : ALL=limited;\np=0x10 : 0x1=full;\nbroken\n"))
	m := NewModel(c, []Port{{GUID: 1, Type: check.NodeCA}, {GUID: 2, Type: check.NodeCA}}, Options{SMGUID: 1})
	if got := fmt.Sprint(m.PKeys(1), m.PKeys(2)); got != "[0xffff] [0xffff]" {
		t.Errorf("fallback tables: %s", got)
	}
	v := canTalk(m, 1, 2)
	if !v.CanTalk() || len(v.Shared) != 1 || v.Shared[0].Key != check.DefaultPartition {
		t.Errorf("verdict: %+v", v)
	}
}

func TestTableOverflow(t *testing.T) {
	var b strings.Builder
	b.WriteString("Default=0x7fff : ALL=full;\n")
	for k := 1; k <= 70; k++ {
		fmt.Fprintf(&b, "p%d=0x%04x : 0x1=full;\n", k, k)
	}
	m := NewModel(Parse("p.conf", []byte(b.String())), []Port{{GUID: 1, Type: check.NodeCA}, {GUID: 2, Type: check.NodeCA, TableSize: 128}}, Options{TableSize: 64})
	if n := len(m.Table(1)); n != 64 || m.Dropped(1) != 7 {
		t.Errorf("table of 64: %d entries, %d dropped", n, m.Dropped(1))
	}
}

func TestSummary(t *testing.T) {
	conf := `Default=0x7fff : ALL=limited, SELF=full;
a=0x10 : 0x1=full, 0x2, 0x3;      # 1 full, 2 limited: 2 pairs
b=0x20 : 0x4=full, 0x5=full, 0x6; # 2 full, 1 limited: 1 + 2 = 3 pairs
c=0x30 : 0x7, 0x8;                # nobody full: 0 pairs
`
	var ports []Port
	for g := check.GUID(1); g <= 9; g++ {
		ports = append(ports, Port{GUID: g, Type: check.NodeCA})
	}
	m := NewModel(Parse("p.conf", []byte(conf)), ports, Options{SMGUID: 9})
	s := m.Summary()
	got := map[check.PartitionKey]int64{}
	for _, p := range s.Partitions {
		got[p.Key] = p.Pairs
	}
	want := map[check.PartitionKey]int64{0x7fff: 8, 0x10: 2, 0x20: 3, 0x30: 0}
	if d := diff(want, got); d != "" {
		t.Errorf("pairs :\n%s", d)
	}
	if d := diff([][]check.GUID{{1, 2, 3, 4, 5, 6, 7, 8, 9}}, s.Groups); d != "" {
		t.Errorf("groups with the default partition :\n%s", d)
	}
	if d := diff([][]check.GUID{{1, 2, 3}, {4, 5, 6}}, s.GroupsWithoutDefault); d != "" {
		t.Errorf("groups without the default partition :\n%s", d)
	}
	if d := diff([]check.GUID{7, 8, 9}, s.OnlyDefault); d != "" {
		t.Errorf("only default :\n%s", d)
	}
	if d := diff([]check.PartitionKey{0x10, 0x7fff}, s.Ports[1].Reaches); d != "" { // 0x2 talks to the SM (full) in the default partition
		t.Errorf("port 2 reaches :\n%s", d)
	}
	// Cross-check the arithmetic against enumerating pairs with CanTalk per partition.
	for _, p := range s.Partitions {
		var n int64
		for i := range ports {
			for j := i + 1; j < len(ports); j++ {
				for _, sh := range canTalk(m, ports[i].GUID, ports[j].GUID).Shared {
					if sh.Key == p.Key && sh.Works {
						n++
					}
				}
			}
		}
		if n != p.Pairs {
			t.Errorf("partition %s: %d pairs by formula, %d by enumeration", p.Key, p.Pairs, n)
		}
	}
}

// canTalk is the can-talk verdict between two ports of m as the binary computes it
// over a partitions file (query's guidTable: the predicted entries, index not known).
func canTalk(m *Model, a, b check.GUID) check.Verdict {
	end := func(g check.GUID) check.Endpoint {
		var t []check.TableEntry
		for _, e := range m.Table(g) {
			t = append(t, check.TableEntry{Index: check.NoIndex, PKey: e.PKey, Readable: true})
		}
		return check.Endpoint{Label: g.String(), Port: true, Entries: t}
	}
	return check.CanTalk(end(a), end(b))
}

// keep_pkey_indexes FALSE (Options.ForgetIndexes): osm_pkey_mgr_process clears what
// OpenSM read of each end port's table and what it remembers (keys, accum_pkeys,
// last_pkey_idx) before every pass, so neither the table before nor the memory of a
// running OpenSM decides an index: a=0x0010 c=0x0030 d=0x0040 go to 1, 2, 3 after
// a b c, where a running OpenSM keeping indexes leaves b's hole and puts d at 4 (the lab
// case of Reconfigure), and 0xffff goes back to index 0.
func TestForgetIndexes(t *testing.T) {
	ports := []Port{{GUID: 1, Type: check.NodeCA}}
	first := NewModel(Parse("p.conf", []byte("Default=0x7fff : ALL=full;\na=0x0010 : ALL;\nb=0x0020 : ALL;\nc=0x0030 : ALL;\n")), ports, Options{Remember: true})
	second := Parse("p.conf", []byte("Default=0x7fff : ALL=full;\na=0x0010 : ALL;\nc=0x0030 : ALL;\nd=0x0040 : ALL;\n"))
	if got := slotString(Reconfigure(first, second, true).Slots(1)); got != "[0xffff 0x0010 0x0000 0x0030 0x0040]" {
		t.Fatalf("keep_pkey_indexes TRUE, running: %s", got)
	}
	opt := first.Options
	opt.Before = map[check.GUID][]check.PKey{1: {0x0030, 0x0010, 0xffff}}
	opt.Memory = first.memory
	opt.ForgetIndexes = true
	if got := slotString(NewModel(second, ports, opt).Slots(1)); got != "[0xffff 0x0010 0x0030 0x0040]" {
		t.Errorf("keep_pkey_indexes FALSE: %s, want the keys in pending order from index 1", got)
	}
}
