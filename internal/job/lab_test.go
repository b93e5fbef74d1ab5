package job_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/job"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// small.net port GUIDs: HcaA 0x100001, HcaB 0x100004, HcaC 0x100007, HcaD 0x10000a
// (port 1) and 0x10000b (port 2).
const (
	// Before: storage (0x0001) on HcaA, HcaB, HcaC; compute (0x0002) on HcaB, HcaC, HcaD.
	labConfBefore = `Default=0x7fff, ipoib : ALL=full ;
storage=0x0001 : 0x100001=full, 0x100004=full, 0x100007=full ;
compute=0x0002, defmember=full : 0x100004, 0x100007, 0x10000a ;
`
	// After: storage removed, a new partition ai (0x0003) on every CA port 1.
	labConfAfter = `Default=0x7fff, ipoib : ALL=full ;
compute=0x0002, defmember=full : 0x100004, 0x100007, 0x10000a ;
ai=0x0003, defmember=full : 0x100001, 0x100004, 0x100007, 0x10000a ;
`
)

func labSweep(t *testing.T, l *lab.Lab) *fabric.Fabric {
	t.Helper()
	tr := l.Dial(t, "", mad.Options{Timeout: 300 * time.Millisecond, Retries: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f, err := query.Sweep(ctx, tr, query.SweepOptions{})
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	return f
}

// labPorts are port 1 of HcaA-HcaD in a sweep, as the job's hosts.
func labPorts(t *testing.T, f *fabric.Fabric) []*job.Port {
	t.Helper()
	var out []*job.Port
	for _, name := range []string{"HcaA", "HcaB", "HcaC", "HcaD"} {
		ns := f.FindNodes(name)
		if len(ns) != 1 || ns[0].Port(1) == nil {
			t.Fatalf("%s port 1 not in the sweep", name)
		}
		out = append(out, job.PortFromFabric(f, ns[0], ns[0].Port(1), ""))
	}
	return out
}

func tables(ports []*job.Port) string {
	var b strings.Builder
	for _, p := range ports {
		fmt.Fprintf(&b, "%s:", p.Host)
		last := 0
		for i, e := range p.Table {
			if e.PKey.Valid() {
				last = i
			}
		}
		for _, e := range p.Table[:last+1] {
			fmt.Fprintf(&b, " %s", e.PKey)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// OpenSM reprograms the partitions: it keeps every remaining key at its index (the
// removed partition leaves a hole) and gives the new key an index of its own on each
// port, so the same index now holds different partitions on different hosts. The
// index-based libraries then break; the value-based ones do not.
func TestLabReconfiguredPartition(t *testing.T) {
	l := lab.Start(t, "../lab/testdata/small.net", nil)
	if err := l.RunOpenSM(labConfBefore, false); err != nil {
		t.Fatal(err)
	}
	before := labPorts(t, labSweep(t, l))
	t.Logf("tables before:\n%s", tables(before))
	if err := l.RunOpenSM(labConfAfter, false); err != nil {
		t.Fatal(err)
	}
	f := labSweep(t, l)
	after := labPorts(t, f)
	t.Logf("tables after:\n%s", tables(after))

	// What OpenSM 3.3 did (checked here, not assumed): every partition still
	// configured stays at its index; the new key goes right after the highest index
	// still in use on each port. So storage's slot stays a hole (0x0000) where a kept
	// key sits above it, and is reused by the new key where nothing does.
	for i, p := range after {
		highest := 0
		for _, e := range before[i].Table {
			if !e.PKey.Valid() {
				continue
			}
			got := p.Table[e.Index].PKey
			if uint16(e.PKey.Partition()) == 0x0001 {
				continue
			}
			highest = max(highest, e.Index)
			if got != e.PKey {
				t.Errorf("%s index %d: %s, want %s kept at its index", p.Host, e.Index, got, e.PKey)
			}
		}
		for _, e := range before[i].Table {
			if uint16(e.PKey.Partition()) == 0x0001 && e.Index < highest && p.Table[e.Index].PKey.Valid() {
				t.Errorf("%s index %d: %s, want the hole storage left (a kept key sits above it)", p.Host, e.Index, p.Table[e.Index].PKey)
			}
		}
		if idx, _, ok := check.FindPKeyIndex(p.Table, 0x8003); !ok || idx != highest+1 {
			t.Errorf("%s: the new key 0x8003 at index %d (found %v), want %d, right after the highest kept index", p.Host, idx, ok, highest+1)
		}
	}
	aiIndex := map[string]int{}
	for _, p := range after {
		idx, _, ok := check.FindPKeyIndex(p.Table, 0x8003)
		if !ok {
			t.Fatalf("%s has no entry for the new partition 0x0003:\n%s", p.Host, tables(after))
		}
		aiIndex[p.Host] = idx
	}
	distinct := map[int]bool{}
	for _, i := range aiIndex {
		distinct[i] = true
	}
	if len(distinct) < 2 {
		t.Fatalf("the new partition sits at the same index everywhere (%v): the test needs hosts where it differs\n%s", aiIndex, tables(after))
	}

	nccl, _ := job.LookupLibrary("nccl")
	ucx, _ := job.LookupLibrary("ucx")
	// NCCL_IB_PKEY set to the index ai has on HcaA: wrong elsewhere.
	in := job.Inputs{Env: job.Env{"NCCL_IB_PKEY": fmt.Sprint(aiIndex["HcaA"]), "UCX_IB_PKEY": "0x0003"}}
	rs := job.Resolve([]*job.Library{nccl, ucx}, in, after)
	if rs[0].Verdict != job.DoesNotWork {
		t.Errorf("NCCL_IB_PKEY=%d after the reconfiguration: %s, want does-not-work\n%s", aiIndex["HcaA"], rs[0].Verdict, strings.Join(rs[0].Findings, "\n"))
	}
	t.Logf("NCCL findings:\n%s\nfixes:\n%s", strings.Join(rs[0].Findings, "\n"), strings.Join(rs[0].Fixes, "\n"))
	if rs[1].Verdict != job.Works {
		t.Errorf("UCX_IB_PKEY=0x0003: %s, want works\n%s", rs[1].Verdict, strings.Join(rs[1].Findings, "\n"))
	}
	// The inverse gives each host ai's own index.
	w := job.WantPartition([]*job.Library{nccl}, job.Inputs{Env: job.Env{}}, 0x0003, after)[0]
	if w.Verdict != job.Works || w.Same != "" {
		t.Fatalf("want 0x0003: %s, same %q", w.Verdict, w.Same)
	}
	for _, pw := range w.Ports {
		if want := fmt.Sprintf("NCCL_IB_PKEY=%d", aiIndex[pw.Port.Host]); pw.Setting != want {
			t.Errorf("%s: %s, want %s", pw.Port.Host, pw.Setting, want)
		}
	}
	// Who the partition reaches, from the same sweep.
	if full, limited := job.Reach(f, 0x0003); full != 4 || limited != 0 {
		t.Errorf("partition 0x0003 reaches %d full and %d limited end ports, want 4 and 0", full, limited)
	}
}
