package fabric

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/lab"
	"github.com/ibkey/ibkey/internal/partconf"
)

// openSMDaemon is OpenSM running as a daemon at the lab's first CA (not -o): what keeps
// a fabric's tables between sweeps.
type openSMDaemon struct {
	cmd *exec.Cmd
	log string
}

func startOpenSMDaemon(t *testing.T, l *fabricLab, partitions string) *openSMDaemon {
	t.Helper()
	dir := t.TempDir()
	conf, parts := filepath.Join(dir, "opensm.conf"), filepath.Join(dir, "partitions.conf")
	if err := os.WriteFile(conf, []byte("force_log_flush TRUE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(parts, []byte(partitions), 0o644); err != nil {
		t.Fatal(err)
	}
	d := &openSMDaemon{log: filepath.Join(dir, "opensm.log")}
	d.cmd = exec.Command("opensm", "-F", conf, "-e", "-s", "0", "-P", parts, "-f", d.log)
	if p, err := exec.LookPath("opensm"); err != nil {
		d.cmd.Path = "/usr/sbin/opensm"
	} else {
		d.cmd.Path = p
	}
	d.cmd.Dir = dir
	d.cmd.Env = append(l.Env(l.from), "OSM_CACHE_DIR="+dir, "OSM_TMP_DIR="+dir)
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.stop)
	d.waitUp(t, 1)
	return d
}

// waitUp waits until OpenSM has logged SUBNET UP n times (one per completed sweep).
func (d *openSMDaemon) waitUp(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(d.log); strings.Count(string(b), "SUBNET UP") >= n {
			return
		}
	}
	b, _ := os.ReadFile(d.log)
	t.Fatalf("OpenSM logged SUBNET UP fewer than %d times:\n%s", n, b)
}

// hup sends SIGHUP (OpenSM re-reads its files and sweeps heavily) and waits for the sweep.
func (d *openSMDaemon) hup(t *testing.T) {
	t.Helper()
	b, _ := os.ReadFile(d.log)
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	d.waitUp(t, strings.Count(string(b), "SUBNET UP")+1)
}

// stop ends exactly the OpenSM this test started.
func (d *openSMDaemon) stop() {
	if d.cmd.ProcessState != nil {
		return
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		d.cmd.Process.Kill()
		<-done
	}
}

// TestLabReorderedTable (issue 24 item 3): HcaB[1]'s table rewritten behind the SM's back
// with the same keys in another order. What OpenSM 3.3.23 did: a running OpenSM left the
// table as it was, also after kill -HUP (it does not re-read a table it programmed); a
// restarted one kept every key where it found it except index 0, which it gave back to
// 0xffff, moving the key it found there after the last index it used. fabric check
// --partitions says nothing about a reorder away from index 0, and for one through index
// 0 warns (exit 0) that OpenSM will move those keys when it next reads the table, names
// the new indexes only as a fresh OpenSM's, and calls no membership wrong.
func TestLabReorderedTable(t *testing.T) {
	l := startFabricLab(t, "small.net")
	const conf = "Default=0x7fff : ALL=full ;\na=0x0001 : ALL=full ;\nb=0x0002 : ALL=full ;\nc=0x0003 : ALL=limited, SELF=full ;\nd=0x0004 : ALL=full ;\n"
	osm := startOpenSMDaemon(t, l, conf)
	parts := writeTemp(t, "partitions.conf", conf)
	hcaB := check.PortID{Node: 0x100003, Port: 1}

	f, _ := l.discoverFile(t)
	if got := f.Port(hcaB).PKeys[:5]; fmtKeys(got) != "0xffff 0x8001 0x8002 0x0003 0x8004" {
		t.Fatalf("OpenSM programmed HcaB[1] = %s; this test expects the order OpenSM 3.3.23 gave", fmtKeys(got))
	}
	lid := f.Port(hcaB).LID
	set := func(keys ...uint16) {
		t.Helper()
		var blk [mad.PKeysPerBlock]uint16
		copy(blk[:], keys)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := lab.SetPKeyBlock(ctx, l.SockName, l.from, mad.LIDAddress(lid), 0, 0, blk); err != nil {
			t.Fatal(err)
		}
	}
	table := func() string {
		t.Helper()
		f, _ := l.discoverFile(t)
		return fmtKeys(f.Port(hcaB).PKeys[:6])
	}

	// Away from index 0: OpenSM keeps every index, so nothing to say.
	set(0xffff, 0x8004, 0x0003, 0x8002, 0x8001)
	d := l.checkJSON(t, 0, "--partitions", parts, "--ignore", "enforcement-off")
	if d.Errors != 0 || d.Warnings != 0 {
		t.Errorf("reordered away from index 0: %d errors, %d warnings: %v", d.Errors, d.Warnings, d.rules())
	}
	osm.hup(t)
	if got := table(); got != "0xffff 0x8004 0x0003 0x8002 0x8001 0x0000" {
		t.Errorf("after kill -HUP HcaB[1] = %s, OpenSM kept the reorder before", got)
	}

	// Through index 0.
	set(0x8001, 0xffff, 0x8002, 0x0003, 0x8004)
	r := l.run(t, "fabric", "check", "--partitions", parts, "--ignore", "enforcement-off")
	if r.code != 0 {
		t.Errorf("fabric check --partitions: exit %d, want 0 (warnings only)\n%s%s", r.code, r.stdout, r.stderr)
	}
	d = l.checkJSON(t, 0, "--partitions", parts, "--ignore", "enforcement-off")
	if d.Errors != 0 || d.Warnings != 1 || !d.has(partconf.RuleIndexMoved, "HcaB", 1, "0x7fff") || !d.has(partconf.RuleIndexMoved, "HcaB", 1, "0x0001") {
		t.Errorf("reordered through index 0: %d errors, %d warnings, want one %s naming 0xffff and 0x8001 on HcaB[1]: %v", d.Errors, d.Warnings, partconf.RuleIndexMoved, d.rules())
	}
	for _, want := range []string{"0xffff from index 1 to index 0", "0x8001 from index 0 to another index (5 when OpenSM starts afresh)", "pinned to an index (NCCL_IB_PKEY", "kill -HUP, leaves it as it is"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("fabric check --partitions lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, wrong := range []string{"OpenSM programs it at index", "wrong-membership", "missing-key", "extra-key", fabric.RuleDefaultNotIndex0} {
		if strings.Contains(r.stdout, wrong) {
			t.Errorf("fabric check --partitions says %q:\n%s", wrong, r.stdout)
		}
	}
	// Without the file the audit still warns about index 0.
	if d := l.checkJSON(t, 0, "--ignore", "enforcement-off"); !d.has(fabric.RuleDefaultNotIndex0, "HcaB", 1, "0x0001") {
		t.Errorf("without --partitions: %v, want %s", d.rules(), fabric.RuleDefaultNotIndex0)
	}
	// The running OpenSM leaves it; a restarted one moves the keys as said.
	osm.hup(t)
	if got := table(); got != "0x8001 0xffff 0x8002 0x0003 0x8004 0x0000" {
		t.Errorf("after kill -HUP HcaB[1] = %s, want the table left as it was", got)
	}
	osm.stop()
	if err := l.RunOpenSM(conf, false); err != nil {
		t.Fatal(err)
	}
	if got := table(); got != "0xffff 0x0000 0x8002 0x0003 0x8004 0x8001" {
		t.Errorf("after OpenSM restarted HcaB[1] = %s, want 0xffff at index 0 and 0x8001 at 5, as fabric check said", got)
	}
}

func fmtKeys(ks []check.PKey) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = k.String()
	}
	return strings.Join(s, " ")
}
