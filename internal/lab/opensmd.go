package lab

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// OpenSMDaemon is OpenSM running as a daemon on the lab's fabric (no -o), started by
// StartOpenSMDaemon and stopped in the test's cleanup. Give it a new partitions.conf
// with Reprogram: OpenSM re-reads the file on every heavy sweep
// (osm_prtn_make_partitions, called by the P_Key manager) and a SIGHUP forces one
// (opensm/main.c: "a HUP signal should only start a new heavy sweep").
type OpenSMDaemon struct {
	// Dir holds its files: partitions.conf, opensm.conf, opensm.log.
	Dir, Conf, Log string

	cmd    *exec.Cmd
	exited chan struct{}
	out    bytes.Buffer
}

var smdSeq atomic.Uint64

// StartOpenSMDaemon starts OpenSM as a daemon at the lab's SM node with
// partitionsConf, with periodic sweeps off (-s 0: only a SIGHUP sweeps again) and the
// log flushed at every line (force_log_flush), and waits for its first "SUBNET UP".
// extra are more opensm arguments (-W, -g GUID, -Z off).
func (l *Lab) StartOpenSMDaemon(t testing.TB, partitionsConf string, extra ...string) *OpenSMDaemon {
	t.Helper()
	node, err := l.smNode()
	if err != nil {
		t.Fatal(err)
	}
	d, err := StartOpenSMDaemonAt(t, filepath.Join(l.Dir, fmt.Sprintf("opensmd%d", smdSeq.Add(1))), l.Env(node), partitionsConf, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// StartOpenSMDaemonAt is StartOpenSMDaemon for a simulator this package did not start:
// OpenSM runs in dir, attached with env (the LD_PRELOAD, IBSIM_SOCKNAME and SIM_HOST a
// libumad2sim client needs). It is stopped in the test's cleanup.
func StartOpenSMDaemonAt(t testing.TB, dir string, env []string, partitionsConf string, extra ...string) (*OpenSMDaemon, error) {
	t.Helper()
	bin, err := lookPath("opensm")
	if err != nil {
		return nil, fmt.Errorf("lab: %v; install with: %s", err, InstallHint)
	}
	d := &OpenSMDaemon{Dir: dir, exited: make(chan struct{})}
	if err := os.MkdirAll(d.Dir, 0o755); err != nil {
		return nil, err
	}
	d.Conf = filepath.Join(d.Dir, "partitions.conf")
	d.Log = filepath.Join(d.Dir, "opensm.log")
	if err := os.WriteFile(d.Conf, []byte(partitionsConf), 0o644); err != nil {
		return nil, err
	}
	osmConf := filepath.Join(d.Dir, "opensm.conf")
	if err := os.WriteFile(osmConf, []byte("force_log_flush TRUE\n"), 0o644); err != nil {
		return nil, err
	}
	d.cmd = exec.Command(bin, append([]string{"-F", osmConf, "-s", "0", "-P", d.Conf, "-f", d.Log}, extra...)...)
	d.cmd.Dir = d.Dir
	d.cmd.Env = append(env, "OSM_CACHE_DIR="+d.Dir, "OSM_TMP_DIR="+d.Dir)
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.out
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("lab: start opensm: %v", err)
	}
	go func() {
		d.cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(d.stop)
	if _, err := d.WaitSubnetUp(1, 60*time.Second); err != nil {
		return nil, err
	}
	return d, nil
}

// Stop ends OpenSM now (as stop does at the end of the test): for a test that runs
// OpenSM again, as a restart would.
func (d *OpenSMDaemon) Stop() { d.stop() }

// stop ends exactly the process StartOpenSMDaemon started: SIGTERM (OpenSM exits
// cleanly and detaches from ibsim), SIGKILL after 5 s.
func (d *OpenSMDaemon) stop() {
	select {
	case <-d.exited:
		return
	default:
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(5 * time.Second):
		d.cmd.Process.Kill()
		<-d.exited
	}
}

// subnetUpRE is OpenSM's "SUBNET UP" log line (state_mgr_up_msg, osm_state_mgr.c,
// after every heavy sweep), with osm_log's time stamp: "Nov 27 09:32:01 123456 [...]".
var subnetUpRE = regexp.MustCompile(`(?m)^([A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d) (\d{6}) \[[^]]*\] 0x[0-9a-f]+ -> SUBNET UP$`)

// SubnetUps are the times of the "SUBNET UP" lines of the log so far, from OpenSM's
// own time stamps (local time, microseconds).
func (d *OpenSMDaemon) SubnetUps() ([]time.Time, error) {
	b, err := os.ReadFile(d.Log)
	if err != nil {
		return nil, err
	}
	var out []time.Time
	now := time.Now()
	for _, m := range subnetUpRE.FindAllSubmatch(b, -1) {
		ts, err := time.ParseInLocation("Jan _2 15:04:05", string(m[1]), time.Local)
		if err != nil {
			return nil, fmt.Errorf("lab: OpenSM log time %q: %v", m[1], err)
		}
		us, _ := strconv.Atoi(string(m[2]))
		ts = time.Date(now.Year(), ts.Month(), ts.Day(), ts.Hour(), ts.Minute(), ts.Second(), us*1000, time.Local)
		out = append(out, ts)
	}
	return out, nil
}

// WaitSubnetUp waits until the log holds n "SUBNET UP" lines and returns the time
// stamp of the n-th.
func (d *OpenSMDaemon) WaitSubnetUp(n int, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		ups, err := d.SubnetUps()
		if err == nil && len(ups) >= n {
			return ups[n-1], nil
		}
		select {
		case <-d.exited:
			log, _ := os.ReadFile(d.Log)
			return time.Time{}, fmt.Errorf("lab: opensm exited before SUBNET UP #%d: %s\nlog:\n%s", n, d.out.String(), tail(string(log), 4000))
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(d.Log)
			return time.Time{}, fmt.Errorf("lab: no SUBNET UP #%d in the OpenSM log within %v\nlog:\n%s", n, timeout, tail(string(log), 4000))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Reprogram writes partitionsConf and sends SIGHUP; it returns when OpenSM has
// finished the heavy sweep that applied it, with the time the signal was sent and the
// time stamp of that sweep's "SUBNET UP" (the tables were programmed before it).
func (d *OpenSMDaemon) Reprogram(ctx context.Context, partitionsConf string) (hup, up time.Time, err error) {
	ups, err := d.SubnetUps()
	if err != nil {
		return hup, up, err
	}
	tmp := d.Conf + ".new"
	if err := os.WriteFile(tmp, []byte(partitionsConf), 0o644); err != nil {
		return hup, up, err
	}
	if err := os.Rename(tmp, d.Conf); err != nil {
		return hup, up, err
	}
	hup = time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		return hup, up, err
	}
	timeout := 60 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	up, err = d.WaitSubnetUp(len(ups)+1, timeout)
	return hup, up, err
}
