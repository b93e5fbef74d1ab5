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
	"strings"
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
	// Conf is its partitions.conf, Log its log file.
	Conf, Log string

	cmd    *exec.Cmd
	exited chan struct{}
	err    error
	out    bytes.Buffer
	lab    *Lab
}

var smdSeq atomic.Uint64

// StartOpenSMDaemon starts OpenSM as a daemon at the lab's SM node with
// partitionsConf, with periodic sweeps off (-s 0: only a SIGHUP sweeps again) and the
// log flushed at every line (force_log_flush), and waits for its first "SUBNET UP".
// conf are more opensm.conf lines ("log_flags 0x07", "log_prefix NAME",
// "allow_both_pkeys TRUE"). It fails the test when OpenSM does not come up.
func (l *Lab) StartOpenSMDaemon(t testing.TB, partitionsConf string, conf ...string) *OpenSMDaemon {
	t.Helper()
	d, err := l.OpenSMDaemon(t, partitionsConf, conf...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// OpenSMDaemon is StartOpenSMDaemon returning the error (an OpenSM that crashes on
// the file) instead of failing the test. The daemon is stopped in the test's cleanup.
func (l *Lab) OpenSMDaemon(t testing.TB, partitionsConf string, conf ...string) (*OpenSMDaemon, error) {
	t.Helper()
	node, err := l.smNode()
	if err != nil {
		return nil, err
	}
	return l.OpenSMDaemonAt(t, node, "SUBNET UP", partitionsConf, conf...)
}

// OpenSMDaemonAt is OpenSMDaemon attached at node, ready once its log has ready (a
// second SM on the fabric, left standby by a lower "sm_priority", never logs SUBNET
// UP: "Entering STANDBY state").
func (l *Lab) OpenSMDaemonAt(t testing.TB, node, ready, partitionsConf string, conf ...string) (*OpenSMDaemon, error) {
	t.Helper()
	var err error
	dir := filepath.Join(l.Dir, fmt.Sprintf("opensmd%d", smdSeq.Add(1)))
	d := &OpenSMDaemon{Conf: filepath.Join(dir, "partitions.conf"), Log: filepath.Join(dir, "opensm.log"), exited: make(chan struct{}), lab: l}
	osmConf := filepath.Join(dir, "opensm.conf")
	if d.cmd, err = opensmCmd(context.Background(), dir, l.Env(node), partitionsConf, "-F", osmConf); err != nil {
		return nil, err
	}
	if err := os.WriteFile(osmConf, []byte(strings.Join(append([]string{"force_log_flush TRUE"}, conf...), "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.out
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("lab: start opensm: %v", err)
	}
	go func() {
		d.err = d.cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(d.Stop)
	if _, err := d.WaitLog(ready, 0, 60*time.Second); err != nil {
		return nil, fmt.Errorf("lab: opensm daemon in %s: %v\noutput:\n%s\nlog:\n%s", dir, err, tail(d.out.String(), 2000), tail(d.LogText(), 4000))
	}
	return d, nil
}

// opensmCmd writes partitionsConf to dir/partitions.conf and returns the command that
// runs OpenSM in dir, attached with env, on that file, with periodic sweeps off (-s 0:
// only a SIGHUP sweeps again), its log in dir/opensm.log and args.
func opensmCmd(ctx context.Context, dir string, env []string, partitionsConf string, args ...string) (*exec.Cmd, error) {
	bin, err := lookPath("opensm")
	if err != nil {
		return nil, fmt.Errorf("lab: %v; install with: %s", err, installHint)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "partitions.conf")
	if err := os.WriteFile(conf, []byte(partitionsConf), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"-s", "0", "-P", conf, "-f", filepath.Join(dir, "opensm.log")}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(env, "OSM_CACHE_DIR="+dir, "OSM_TMP_DIR="+dir)
	return cmd, nil
}

// Stop ends exactly the process StartOpenSMDaemon started: SIGTERM (OpenSM exits
// cleanly and detaches from ibsim), SIGKILL after 5 s; after a crash it frees the
// ibsim slot the process left attached.
func (d *OpenSMDaemon) Stop() {
	select {
	case <-d.exited:
		d.lab.detach(d.cmd.Process.Pid) // it crashed: its ibsim slot stays attached
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
// after every heavy sweep), with osm_log's time stamp: "Nov 27 09:32:01 123456 [...]",
// and opensm.conf's log_prefix when it has one.
var subnetUpRE = regexp.MustCompile(`(?m)^([A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d) (\d{6}) \[[^]]*\] 0x[0-9a-f]+ -> (?:[^ :]+: )?SUBNET UP$`)

// Reprogram writes partitionsConf and sends SIGHUP; it returns when OpenSM has
// finished the heavy sweep that applied it, with the time the signal was sent and the
// time stamp of that sweep's "SUBNET UP" (the tables were programmed before it).
func (d *OpenSMDaemon) Reprogram(ctx context.Context, partitionsConf string) (hup, up time.Time, err error) {
	tmp := d.Conf + ".new"
	if err := os.WriteFile(tmp, []byte(partitionsConf), 0o644); err != nil {
		return hup, up, err
	}
	if err := os.Rename(tmp, d.Conf); err != nil {
		return hup, up, err
	}
	timeout := 60 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	return d.sweep(timeout)
}

// Resweep asks OpenSM for a heavy sweep (SIGHUP, opensm(8)): it reads
// partitions.conf again and reprograms the tables. It waits for the next SUBNET UP.
func (d *OpenSMDaemon) Resweep(timeout time.Duration) error {
	_, _, err := d.sweep(timeout)
	return err
}

// sweep sends SIGHUP and waits for the next "SUBNET UP"; it returns when the signal
// was sent and that line's time stamp (OpenSM's own: local time, microseconds).
func (d *OpenSMDaemon) sweep(timeout time.Duration) (hup, up time.Time, err error) {
	from := d.LogSize()
	hup = time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		return hup, up, err
	}
	seg, err := d.WaitLog("SUBNET UP", from, timeout)
	if err != nil {
		return hup, up, fmt.Errorf("lab: %v\nlog:\n%s", err, tail(d.LogText(), 4000))
	}
	m := subnetUpRE.FindStringSubmatch(seg)
	if m == nil {
		return hup, up, fmt.Errorf("lab: no time-stamped SUBNET UP line in %q", tail(seg, 400))
	}
	ts, err := time.ParseInLocation("Jan _2 15:04:05", m[1], time.Local)
	if err != nil {
		return hup, up, fmt.Errorf("lab: OpenSM log time %q: %v", m[1], err)
	}
	us, _ := strconv.Atoi(m[2])
	up = time.Date(hup.Year(), ts.Month(), ts.Day(), ts.Hour(), ts.Minute(), ts.Second(), us*1000, time.Local)
	return hup, up, nil
}

// LogText is the log so far.
func (d *OpenSMDaemon) LogText() string {
	b, _ := os.ReadFile(d.Log)
	return string(b)
}

// LogSize is the log's length now: an offset for WaitLog.
func (d *OpenSMDaemon) LogSize() int64 {
	st, err := os.Stat(d.Log)
	if err != nil {
		return 0
	}
	return st.Size()
}

// WaitLog waits until text appears in the log after byte offset from and returns the
// log's lines from there up to and including the one holding it.
func (d *OpenSMDaemon) WaitLog(text string, from int64, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		b, _ := os.ReadFile(d.Log)
		if int64(len(b)) > from {
			if i := bytes.Index(b[from:], []byte(text)); i >= 0 {
				end := int(from) + i
				if j := bytes.IndexByte(b[end:], '\n'); j >= 0 {
					end += j + 1
				} else {
					end = len(b)
				}
				return string(b[from:end]), nil
			}
		}
		select {
		case <-d.exited:
			return "", fmt.Errorf("opensm exited (%v) before logging %q", d.err, text)
		default:
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no %q in the log within %v", text, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ReopenLog asks OpenSM to close and reopen its log file (SIGUSR1, opensm(8)), as
// logrotate's postrotate does after moving the file away.
func (d *OpenSMDaemon) ReopenLog() error { return d.cmd.Process.Signal(syscall.SIGUSR1) }

// LFTRoute is a line of an LFT dump: LID LID leaves the switch by Port, toward the
// port with GUID GUID, of node Desc, a switch or not (osm_ucast_file.c remap_lid moves
// the line to the LID OpenSM gave that port, whatever LID it says).
type LFTRoute struct {
	LID      uint16
	Port     int
	GUID     uint64
	Desc     string
	ToSwitch bool
}

// LFTDump is the routes of switch sw, at LID lid, in the format of OpenSM's own dump
// (osm_dump.c dump_ucast_lfts), which routing_engine file reads from lfts_file
// (osm_ucast_file.c do_ucast_file_load: it finds the switch by its GUID and passes
// over the LID; the switch starts with no port for any LID, then gets one per line).
// Dumps of several switches are joined one after another.
func LFTDump(sw uint64, lid uint16, desc string, routes []LFTRoute) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Unicast lids [0-%d] of switch Lid %d guid 0x%016x ('%s'):\n", len(routes), lid, sw, desc)
	for _, r := range routes {
		typ := "Channel Adapter"
		if r.ToSwitch {
			typ = "Switch"
		}
		fmt.Fprintf(&b, "0x%04x %03d # %s portguid 0x%016x: '%s'\n", r.LID, r.Port, typ, r.GUID, r.Desc)
	}
	fmt.Fprintf(&b, "%d lids dumped\n", len(routes))
	return b.String()
}
