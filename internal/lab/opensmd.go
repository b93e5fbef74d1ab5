package lab

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// OpenSM as a daemon in the lab: the SA answers queries only while OpenSM runs, and
// its log (-f) records traps, SA refusals and partitions.conf errors as they happen.
// The daemon runs in the foreground of its own process (no -B), reads opensm.conf
// from its directory (-F) with force_log_flush TRUE, so every line is in the file
// when it is logged, and is stopped with SIGTERM (then SIGKILL) when the test ends:
// exactly the process this lab started.

// DaemonOptions tune StartOpenSMDaemon.
type DaemonOptions struct {
	// Partitions is the text of partitions.conf.
	Partitions string
	// Node is where OpenSM attaches; empty means Options.SMNode, else the first CA.
	Node string
	// Conf are extra opensm.conf lines ("allow_both_pkeys TRUE", "log_flags 0x07").
	Conf []string
	// StartTimeout bounds the wait for SUBNET UP (default 30s).
	StartTimeout time.Duration
}

// SMDaemon is a running OpenSM.
type SMDaemon struct {
	// Dir holds opensm.conf, partitions.conf, the log and OpenSM's cache files.
	Dir string
	// Log is the log file (-f).
	Log string
	// Partitions is the partitions.conf OpenSM reads (rewrite it, then Resweep).
	Partitions string
	// Node is where OpenSM is attached.
	Node string

	l      *Lab
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
	err    error
}

// StartOpenSMDaemon starts OpenSM on this lab, waits for SUBNET UP in its log and
// stops it when the test ends.
func (l *Lab) StartOpenSMDaemon(t testing.TB, o DaemonOptions) *SMDaemon {
	t.Helper()
	node := o.Node
	if node == "" {
		var err error
		if node, err = l.smNode(); err != nil {
			t.Fatal(err)
		}
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	dir, err := os.MkdirTemp(l.Dir, "opensmd")
	if err != nil {
		t.Fatal(err)
	}
	d := &SMDaemon{Dir: dir, Log: filepath.Join(dir, "opensm.log"), Partitions: filepath.Join(dir, "partitions.conf"),
		Node: node, l: l, out: newSyncBuffer(), exited: make(chan struct{})}
	if err := os.WriteFile(d.Partitions, []byte(o.Partitions), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := append([]string{"force_log_flush TRUE", "partition_config_file " + d.Partitions}, o.Conf...)
	confFile := filepath.Join(dir, "opensm.conf")
	if err := os.WriteFile(confFile, []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, err := lookPath("opensm")
	if err != nil {
		t.Fatal(err)
	}
	d.cmd = exec.Command(bin, "-F", confFile, "-f", d.Log)
	d.cmd.Dir = dir
	d.cmd.Env = append(l.Env(node), "OSM_CACHE_DIR="+dir, "OSM_TMP_DIR="+dir)
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("lab: start opensm: %v", err)
	}
	go func() {
		d.err = d.cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(d.Stop)
	if _, err := d.WaitLog("SUBNET UP", 0, o.StartTimeout); err != nil {
		t.Fatalf("lab: opensm daemon at %s: %v\noutput:\n%s\nlog:\n%s", node, err, tail(d.out.String(), 2000), tail(d.LogText(), 4000))
	}
	return d
}

// LogText is the log so far.
func (d *SMDaemon) LogText() string {
	b, _ := os.ReadFile(d.Log)
	return string(b)
}

// LogSize is the log's length now: an offset for WaitLog.
func (d *SMDaemon) LogSize() int64 {
	st, err := os.Stat(d.Log)
	if err != nil {
		return 0
	}
	return st.Size()
}

// WaitLog waits until text appears in the log after byte offset from and returns the
// log's lines from there up to and including the one holding it.
func (d *SMDaemon) WaitLog(text string, from int64, timeout time.Duration) (string, error) {
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

// Resweep asks OpenSM for a heavy sweep (SIGHUP, opensm(8)): it reads
// partitions.conf again and reprograms the tables. It waits for the next SUBNET UP.
func (d *SMDaemon) Resweep(timeout time.Duration) error {
	from := d.LogSize()
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		return err
	}
	_, err := d.WaitLog("SUBNET UP", from, timeout)
	return err
}

// ReopenLog asks OpenSM to close and reopen its log file (SIGUSR1, opensm(8)), as
// logrotate's postrotate does after moving the file away.
func (d *SMDaemon) ReopenLog() error { return d.cmd.Process.Signal(syscall.SIGUSR1) }

// Stop ends OpenSM: SIGTERM, and SIGKILL after 5 seconds.
func (d *SMDaemon) Stop() {
	select {
	case <-d.exited:
		return
	default:
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(5 * time.Second):
		d.cmd.Process.Kill() // exactly the process this lab started
		<-d.exited
	}
}

// Exited reports whether OpenSM has stopped, and how.
func (d *SMDaemon) Exited() (bool, error) {
	select {
	case <-d.exited:
		var ee *exec.ExitError
		if errors.As(d.err, &ee) {
			return true, ee
		}
		return true, d.err
	default:
		return false, nil
	}
}
