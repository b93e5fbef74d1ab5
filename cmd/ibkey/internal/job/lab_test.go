package job

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/query"
)

// `ibkey job --lid` and `--node` on the live simulated fabric, after OpenSM removed
// storage (0x0001) and added ai (0x0003): the ports are read over MADs now (--lid)
// or found in a sweep run now (--node).
func TestLabJobCommand(t *testing.T) {
	l := lab.Start(t, "../../../../internal/lab/testdata/small.net", nil)
	for _, conf := range []string{
		"Default=0x7fff, ipoib : ALL=full ;\nstorage=0x0001 : 0x100001=full, 0x100004=full, 0x100007=full ;\ncompute=0x0002, defmember=full : 0x100004, 0x100007, 0x10000a ;\n",
		"Default=0x7fff, ipoib : ALL=full ;\ncompute=0x0002, defmember=full : 0x100004, 0x100007, 0x10000a ;\nai=0x0003, defmember=full : 0x100001, 0x100004, 0x100007, 0x10000a ;\n",
	} {
		if err := l.RunOpenSM(conf, false); err != nil {
			t.Fatal(err)
		}
	}
	tr := l.Dial(t, "", mad.Options{Timeout: 300 * time.Millisecond, Retries: 2})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f, err := query.Sweep(ctx, tr, query.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lid := map[string]uint16{}
	for _, n := range f.Nodes {
		if n.Type == check.NodeCA && n.Port(1) != nil {
			lid[n.Description] = n.Port(1).LID
		}
	}
	run := func(args ...string) result {
		return run(t, ctx, nil, append(attach(l), append(args, "-o", "plain")...)...)
	}
	lids := fmt.Sprintf("%d,%d,%d", lid["HcaA"], lid["HcaB"], lid["HcaD"])
	r := run("--lid", lids, "NCCL_IB_PKEY=1", "UCX_IB_PKEY=0x0003")
	for _, want := range []string{
		"HcaB/1: NCCL_IB_PKEY index 1 holds 0x0000, an empty entry",
		"partition 0x0003 on HcaA/1 index 1; partition 0x0002 on HcaD/1 index 1",
		"fix: for partition 0x0003: no single value works; per port: HcaA/1: NCCL_IB_PKEY=1, HcaB/1: NCCL_IB_PKEY=3, HcaD/1: NCCL_IB_PKEY=2",
		"UCX: works: UCX_IB_PKEY=0x0003",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--lid %s: missing %q in:\n%s", lids, want, r.stdout)
		}
	}
	if r.code != 1 {
		t.Errorf("--lid: exit %d, want 1\n%s", r.code, r.stderr)
	}
	r = run("--node", "HcaB,HcaC", "NCCL_IB_PKEY=2")
	if r.code != 0 || !strings.Contains(r.stdout, "NCCL: works: NCCL_IB_PKEY=2") || !strings.Contains(r.stdout, "partition 0x0002 in the sweep: 3 end ports full members, 0 limited") {
		t.Errorf("--node HcaB,HcaC NCCL_IB_PKEY=2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// small.net's end ports: HcaA 0x100001, HcaB 0x100004, HcaC 0x100007, HcaD 0x10000a.
const (
	gateConfBefore = "Default=0x7fff, ipoib : ALL=full ;\ncompute=0x0002, defmember=full : 0x100004, 0x100007, 0x10000a ;\n"
	// job42 on HcaB and HcaC, as a scheduler plugin adds a job's hosts.
	gateConfAfter = gateConfBefore + "job42=0x0042, ipoib, defmember=full : 0x100004, 0x100007 ;\n"
	// job42 on HcaB only: HcaC never gets the key.
	gateConfHalf = gateConfBefore + "job42=0x0042, ipoib, defmember=full : 0x100004 ;\n"
)

// attach is the flags that read the lab over MADs, as the tests' own transport does.
func attach(l *lab.Lab) []string {
	return []string{"--ibsim=" + l.SockName, "--mad-timeout", "300ms", "--mad-retries", "2"}
}

// labJob runs the job command in-process on the lab, under ctx.
func labJob(t *testing.T, ctx context.Context, l *lab.Lab, format string, args ...string) (result, time.Time) {
	t.Helper()
	r := run(t, ctx, nil, append(attach(l), append(args, "-o", format)...)...)
	return r, time.Now()
}

// smpPKeys is `smpquery pkeys LID` on the lab: the table as smpquery prints it.
func smpPKeys(t *testing.T, l *lab.Lab, lid uint16) lab.PKeyTable {
	t.Helper()
	tab, err := lab.ParsePKeys(l.MustTool("smpquery", "pkeys", fmt.Sprint(lid)))
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestLabGateOpenSMDaemon is issue 27's acceptance: a running OpenSM is given a new
// partitions.conf and SIGHUP while `ibkey job --node HcaB,HcaC --want 0x0042 --wait
// 25s --emit env` waits; the gate answers once OpenSM has programmed the key, and
// every index and value it prints is what smpquery shows on each port. The time from
// the SM's change (its "SUBNET UP" after the SIGHUP) to the answer is logged.
func TestLabGateOpenSMDaemon(t *testing.T) {
	l := lab.Start(t, "../../../../internal/lab/testdata/small.net", nil)
	sm := l.StartOpenSMDaemon(t, gateConfBefore)
	tr := l.Dial(t, "", mad.Options{Timeout: 300 * time.Millisecond, Retries: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	type answer struct {
		r    result
		done time.Time
	}
	ch := make(chan answer, 1)
	start := time.Now()
	go func() {
		r, done := labJob(t, ctx, l, "plain", "--node", "HcaB,HcaC", "--want", "0x0042", "--wait", "25s", "--emit", "env", "OMPI_MCA_btl_openib_allow_ib=1")
		ch <- answer{r, done}
	}()
	time.Sleep(3 * time.Second) // the gate is waiting, backed off
	hup, up, err := sm.Reprogram(ctx, gateConfAfter)
	if err != nil {
		t.Fatal(err)
	}
	a := <-ch
	if a.r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nOpenSM log: %s", a.r.code, a.r.stdout, a.r.stderr, sm.Log)
	}
	t.Logf("SIGHUP at %.3fs, OpenSM's SUBNET UP at %.3fs, ibkey answered at %.3fs: %v after the SM's change, %v after the SIGHUP",
		hup.Sub(start).Seconds(), up.Sub(start).Seconds(), a.done.Sub(start).Seconds(), a.done.Sub(up).Round(time.Millisecond), a.done.Sub(hup).Round(time.Millisecond))
	t.Logf("stderr:\n%s", a.r.stderr)
	// The closing line counts what the wait cost: the MADs of its transport.
	if !strings.Contains(a.r.stderr, " MADs: ") || !strings.Contains(a.r.stderr, " in the first read, ") {
		t.Errorf("the closing line does not count the MADs:\n%s", a.r.stderr)
	}
	if a.done.Before(up) {
		t.Errorf("ibkey answered before OpenSM's sweep ended")
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(a.r.stdout), "\n") {
		kv, ok := strings.CutPrefix(line, "export ")
		k, v, ok2 := strings.Cut(kv, "=")
		if !ok || !ok2 {
			t.Fatalf("not an export line: %q", line)
		}
		exports[k] = v
	}
	if exports["UCX_IB_PKEY"] != "0x0042" || exports["GASNET_IBV_PKEY"] != "0x0042" || exports["MV2_DEFAULT_PKEY"] != "0x0042" || exports["OMPI_MCA_btl_openib_pkey"] != "0x0042" {
		t.Errorf("value settings: %v", exports)
	}
	if exports["NVSHMEM_IB_PKEY_INDEX"] != exports["NCCL_IB_PKEY"] {
		t.Errorf("NCCL and NVSHMEM indexes differ: %v", exports)
	}
	idx, err := strconv.Atoi(exports["NCCL_IB_PKEY"])
	if err != nil {
		t.Fatalf("NCCL_IB_PKEY: %v", err)
	}
	// The oracle: the index NCCL_IB_PKEY names holds 0x8042 on each port, as smpquery
	// reads the table.
	f, err := query.Sweep(ctx, tr, query.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lids := map[string]uint16{}
	for _, name := range []string{"HcaB", "HcaC"} {
		lids[name] = f.FindNodes(name)[0].Port(1).LID
		tab := smpPKeys(t, l, lids[name])
		if idx >= len(tab.Entries) || tab.Entries[idx] != 0x8042 {
			t.Errorf("%s: smpquery pkeys %d shows %v; NCCL_IB_PKEY=%d", name, lids[name], tab.Entries, idx)
		}
	}

	// Every index and value the report prints, against smpquery on each port.
	r, _ := labJob(t, ctx, l, "json", "--node", "HcaB,HcaC", "--want", "0x0042", "OMPI_MCA_btl_openib_allow_ib=1")
	var doc struct {
		Libraries []struct {
			Library string `json:"library"`
			Ports   []struct {
				Host  string `json:"host"`
				Index *int   `json:"index"`
				PKey  string `json:"pkey"`
			} `json:"ports"`
		} `json:"libraries"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	compared := 0
	for _, lib := range doc.Libraries {
		for _, p := range lib.Ports {
			if p.Index == nil {
				t.Errorf("%s %s: no index", lib.Library, p.Host)
				continue
			}
			tab := smpPKeys(t, l, lids[p.Host])
			if got := fmt.Sprintf("0x%04x", tab.Entries[*p.Index]); got != p.PKey {
				t.Errorf("%s %s: index %d holds %s by ibkey, %s by smpquery", lib.Library, p.Host, *p.Index, p.PKey, got)
			}
			compared++
		}
	}
	if compared != 12 {
		t.Errorf("compared %d ports, want 6 libraries x 2 hosts", compared)
	}
}

// A partition the SM never programs on one host: the gate times out with exit 1
// naming that host, and exports nothing.
func TestLabGateNeverProgrammed(t *testing.T) {
	l := lab.Start(t, "../../../../internal/lab/testdata/small.net", nil)
	sm := l.StartOpenSMDaemon(t, gateConfBefore)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, _, err := sm.Reprogram(ctx, gateConfHalf); err != nil {
		t.Fatal(err)
	}
	r, _ := labJob(t, ctx, l, "plain", "--node", "HcaB,HcaC", "--want", "0x0042", "--wait", "3s", "--emit", "env")
	if r.code != 1 || r.stdout != "" {
		t.Fatalf("exit %d stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "HcaC: HcaC/1: no entry for partition 0x0042") || !strings.Contains(r.stderr, "not ready: HcaC\n") || strings.Contains(r.stderr, "HcaB: HcaB/1") {
		t.Errorf("the timeout does not name HcaC alone:\n%s", r.stderr)
	}
}

// TestLabPartialRead: HcaC stops answering. Read over MADs (--lid) or found in a
// sweep run now (--node), the job is judged on the ports that answered: HcaC is
// named as not read, the answer is not checked (exit 4) when it would be a yes, and
// a definite no on HcaB stands (exit 1). Before, the read failed whole (exit 3).
func TestLabPartialRead(t *testing.T) {
	l := lab.Start(t, "../../../../internal/lab/testdata/small.net", nil)
	if err := l.RunOpenSM(gateConfBefore, false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lidB, lidC := smpLID(t, l, "HcaB"), smpLID(t, l, "HcaC")
	l.MustConsole(`Error "HcaC"[1] 100`)
	lids := fmt.Sprintf("%d,%d", lidB, lidC)
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
		out    string
	}{
		// HcaB: 0xffff 0x8002 0x0000 ...; NCCL_IB_PKEY=1 is compute there, 2 an
		// empty entry.
		{[]string{"--lid", lids, "NCCL_IB_PKEY=1"}, 4, fmt.Sprintf("not read: lid %d: no answer via ", lidC), fmt.Sprintf("lid %d: not read: NCCL may use its ports", lidC)},
		{[]string{"--lid", lids, "NCCL_IB_PKEY=2"}, 1, fmt.Sprintf("not read: lid %d: no answer via ", lidC), "HcaB/1: NCCL_IB_PKEY index 2 holds 0x0000, an empty entry"},
		{[]string{"--node", "HcaB,HcaC", "NCCL_IB_PKEY=1"}, 4, `not read: node "HcaC": not in the sweep, and the sweep did not read every link`, "HcaC: no port was read: NCCL may use what could not be read"},
		{[]string{"--node", "HcaB,HcaC", "NCCL_IB_PKEY=2"}, 1, `not read: node "HcaC"`, "HcaB/1: NCCL_IB_PKEY index 2 holds 0x0000, an empty entry"},
	} {
		r, _ := labJob(t, ctx, l, "plain", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.stderr) || !strings.Contains(r.stdout, c.out) {
			t.Errorf("%s: exit %d, want %d, %q on stderr and %q\n%s%s", strings.Join(c.args, " "), r.code, c.code, c.stderr, c.out, r.stdout, r.stderr)
		}
	}
}

// smpLID is the LID of port 1 of node desc, as smpquery reads it (by directed
// route from the SM's node).
func smpLID(t *testing.T, l *lab.Lab, desc string) uint16 {
	t.Helper()
	paths := map[string]string{"HcaB": "0,1,2", "HcaC": "0,1,7,1"}
	lid, err := lab.ParseFields(l.MustTool("smpquery", "-D", "portinfo", paths[desc], "1")).Uint("Lid")
	if err != nil {
		t.Fatal(err)
	}
	return uint16(lid)
}

// TestLabGatePartialSweep: a --wait gate whose sweep missed a host of the job (HcaC
// silent) sweeps again while that host is missing, and answers once it answers; it
// neither fails at once nor waits out its timeout.
func TestLabGatePartialSweep(t *testing.T) {
	l := lab.Start(t, "../../../../internal/lab/testdata/small.net", nil)
	if err := l.RunOpenSM(gateConfBefore, false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l.MustConsole(`Error "HcaC"[1] 100`)
	done := make(chan result, 1)
	go func() {
		r, _ := labJob(t, ctx, l, "plain", "--node", "HcaB,HcaC", "--want", "0x0002", "--wait", "40s", "--lib", "nccl")
		done <- r
	}()
	time.Sleep(3 * time.Second)
	l.MustConsole(`Error "HcaC"[1] 0`)
	start := time.Now()
	r := <-done
	if r.code != 0 || !strings.Contains(r.stdout, "NCCL_IB_PKEY=1 everywhere") || time.Since(start) > 30*time.Second {
		t.Errorf("exit %d after %s, want 0 once HcaC answers\n%s%s", r.code, time.Since(start), r.stdout, r.stderr)
	}
}
