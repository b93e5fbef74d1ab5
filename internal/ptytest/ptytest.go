//go:build linux

// Package ptytest runs a process on a pseudo-terminal for tests: the process sees a
// terminal on stdin, stdout and stderr (its controlling terminal), and the test reads
// everything it writes. The terminal never answers a query (a colour or cursor
// position request), like `script`, a serial console or a CI pty, so a program that
// waits for an answer stalls and the test sees the query bytes.
//
// Linux only (the /dev/ptmx ioctls of pty(7)); tests using it skip elsewhere.
package ptytest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Open returns a new pseudo-terminal pair sized cols x rows: the master (the test's
// side) and the slave (the process's terminal). See pty(7), posix_openpt(3).
func Open(cols, rows int) (master, slave *os.File, err error) {
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	master = os.NewFile(uintptr(mfd), "/dev/ptmx")
	// unlockpt(3) is TIOCSPTLCK with 0; ptsname(3) is TIOCGPTN.
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlockpt: %w", err)
	}
	n, err := unix.IoctlGetInt(mfd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("ptsname: %w", err)
	}
	name := fmt.Sprintf("/dev/pts/%d", n)
	sfd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("open %s: %w", name, err)
	}
	slave = os.NewFile(uintptr(sfd), name)
	if err := unix.IoctlSetWinsize(mfd, unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)}); err != nil {
		master.Close()
		slave.Close()
		return nil, nil, fmt.Errorf("set window size: %w", err)
	}
	return master, slave, nil
}

// Session is a process running on a pty.
type Session struct {
	Cmd    *exec.Cmd
	master *os.File
	slave  *os.File // the process's terminal; closed by Wait so the reader sees the end
	name   string   // /dev/pts/N, reopened to read the terminal's modes after the exit

	mu     sync.Mutex
	out    bytes.Buffer
	change chan struct{} // closed and replaced whenever out grows
	done   chan struct{} // the reader stopped

	waitOnce sync.Once
	waitErr  error
}

// Start runs cmd on a new cols x rows pty as its controlling terminal, in a new
// session (so signals the test sends reach only it). cmd's Stdin, Stdout and Stderr
// must be nil.
func Start(cmd *exec.Cmd, cols, rows int) (*Session, error) {
	if cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, errors.New("ptytest: cmd's streams must be nil (they are the pty)")
	}
	master, slave, err := Open(cols, rows)
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Setctty = true
	cmd.SysProcAttr.Ctty = 0 // the child's fd 0
	if err := cmd.Start(); err != nil {
		master.Close()
		slave.Close()
		return nil, err
	}
	s := &Session{Cmd: cmd, master: master, slave: slave, name: slave.Name(), change: make(chan struct{}), done: make(chan struct{})}
	go s.read()
	return s, nil
}

// read drains the master so the process never blocks writing; it never answers.
func (s *Session) read() {
	defer close(s.done)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.master.Read(buf)
		if n > 0 {
			s.mu.Lock()
			s.out.Write(buf[:n])
			close(s.change)
			s.change = make(chan struct{})
			s.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// Output is everything the process wrote so far.
func (s *Session) Output() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.out.Bytes())
}

// WaitFor waits until the output contains want, or the limit passes (an error naming
// what was awaited and the output so far). The limit is a hang detector, not a speed
// assertion: make it generous.
func (s *Session) WaitFor(want string, limit time.Duration) error {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		found := bytes.Contains(s.out.Bytes(), []byte(want))
		ch := s.change
		s.mu.Unlock()
		if found {
			return nil
		}
		select {
		case <-ch:
		case <-s.done:
			if bytes.Contains(s.Output(), []byte(want)) {
				return nil
			}
			return fmt.Errorf("ptytest: the pty closed before %q appeared; output: %q", want, tail(s.Output()))
		case <-deadline.C:
			return fmt.Errorf("ptytest: no %q after %s; output: %q", want, limit, tail(s.Output()))
		}
	}
}

// Write sends keys to the process.
func (s *Session) Write(p string) error {
	_, err := s.master.Write([]byte(p))
	return err
}

// Signal sends sig to the process.
func (s *Session) Signal(sig os.Signal) error { return s.Cmd.Process.Signal(sig) }

// Wait waits for the process to exit, at most limit; past it the process is killed
// (SIGKILL) and Wait returns an error saying it hung, with the tail of its output.
// After Wait, Output holds everything the process wrote: the test's copy of the
// terminal is closed, so the reader gets what is buffered and then the end (EIO).
func (s *Session) Wait(limit time.Duration) error {
	exited := make(chan struct{})
	go func() {
		s.waitOnce.Do(func() { s.waitErr = s.Cmd.Wait() })
		close(exited)
	}()
	var err error
	select {
	case <-exited:
	case <-time.After(limit):
		_ = s.Cmd.Process.Kill()
		<-exited
		err = fmt.Errorf("ptytest: the process did not exit within %s (killed); output: %q", limit, tail(s.Output()))
	}
	s.slave.Close()
	select {
	case <-s.done:
	case <-time.After(limit):
		// A child of the process still holds the terminal; Output may lack its last bytes.
	}
	return err
}

// ExitCode is the exit status after Wait; -1 if a signal killed the process.
func (s *Session) ExitCode() int {
	if s.Cmd.ProcessState == nil {
		return -1
	}
	return s.Cmd.ProcessState.ExitCode()
}

// Stty runs `stty -a` on the terminal (after Wait too: the terminal keeps its modes
// while the test holds the master) and returns what it prints.
func (s *Session) Stty() (string, error) {
	f, err := os.OpenFile(s.name, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	c := exec.Command("stty", "-a")
	c.Stdin = f
	out, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("stty -a: %w", err)
	}
	return string(out), nil
}

// Close releases the pty; call it after Wait.
func (s *Session) Close() error {
	s.slave.Close()
	return s.master.Close()
}

// Cooked reports whether the `stty -a` text shows the modes a shell needs back:
// icanon and echo on (not -icanon, -echo). It names the first mode that is off.
func Cooked(stty string) (ok bool, off string) {
	fields := strings.Fields(strings.ReplaceAll(stty, ";", " "))
	have := map[string]bool{}
	for _, f := range fields {
		have[f] = true
	}
	for _, m := range []string{"icanon", "echo", "isig", "icrnl", "opost"} {
		if !have[m] {
			return false, "-" + m
		}
	}
	return true, ""
}

// Screen modes a full-screen program sets and must unset (xterm control sequences,
// "Set Mode"/"Reset Mode" DEC private modes 1049 and 25).
const (
	AltScreenOn  = "\x1b[?1049h"
	AltScreenOff = "\x1b[?1049l"
	CursorHide   = "\x1b[?25l"
	CursorShow   = "\x1b[?25h"
)

// LeftAltScreen reports whether out switched to the alternate screen and did not
// switch back (the last 1049 sequence is "on").
func LeftAltScreen(out []byte) bool {
	return bytes.LastIndex(out, []byte(AltScreenOn)) > bytes.LastIndex(out, []byte(AltScreenOff))
}

// LeftCursorHidden reports whether out hid the cursor and did not show it again.
func LeftCursorHidden(out []byte) bool {
	return bytes.LastIndex(out, []byte(CursorHide)) > bytes.LastIndex(out, []byte(CursorShow))
}

// Queries are the terminal queries a program can stall on when nothing answers:
// OSC 10/11 (foreground/background colour) and DSR 6 (cursor position report), as
// termenv sends them (termenv's termStatusReport).
var Queries = []string{"\x1b]10;?", "\x1b]11;?", "\x1b[6n"}

// FindQuery returns the first terminal query in out, or "".
func FindQuery(out []byte) string {
	for _, q := range Queries {
		if bytes.Contains(out, []byte(q)) {
			return q
		}
	}
	return ""
}

func tail(b []byte) []byte {
	if len(b) > 600 {
		return b[len(b)-600:]
	}
	return b
}
