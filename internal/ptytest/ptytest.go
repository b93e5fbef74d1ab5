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
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ibkey/ibkey/internal/lab"
)

// open returns a new pseudo-terminal pair sized cols x rows: the master (the test's
// side) and the slave (the process's terminal). See pty(7), posix_openpt(3).
func open(cols, rows int) (master, slave *os.File, err error) {
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

	out  *lab.Buffer   // what the process wrote
	done chan struct{} // the reader stopped

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
	master, slave, err := open(cols, rows)
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
	s := &Session{Cmd: cmd, master: master, slave: slave, name: slave.Name(), out: lab.NewBuffer(), done: make(chan struct{})}
	go s.read()
	return s, nil
}

// read drains the master so the process never blocks writing; it never answers.
func (s *Session) read() {
	defer close(s.done)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.master.Read(buf)
		s.out.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

// Output is everything the process wrote so far.
func (s *Session) Output() []byte { return []byte(s.out.String()) }

// Len is how many bytes the process wrote so far: a mark for WaitFor and
// Output()[mark:].
func (s *Session) Len() int { return s.out.Len() }

// WaitFor waits until what the process wrote after its first from bytes (0: all of
// it) contains want, or the limit passes (an error naming what was awaited and the
// output so far). The limit is a hang detector, not a speed assertion: make it
// generous.
func (s *Session) WaitFor(from int, want string, limit time.Duration) error {
	if _, err := s.out.WaitFor(want, from, limit, s.done); err != nil {
		return fmt.Errorf("ptytest: %w; output: %q", err, tail(s.Output()))
	}
	return nil
}

// Drain waits until the test has read everything the process wrote so far: the pty
// holds nothing unread (TIOCINQ, tty_ioctl(4)) and Output stopped growing. Call it
// once the process has stopped (state T in /proc/PID/stat), before looking at what
// it wrote last; limit is a hang detector.
func (s *Session) Drain(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	prev := -1
	for time.Now().Before(deadline) {
		var unread int
		var ierr error
		rc, err := s.master.SyscallConn()
		if err != nil {
			return err
		}
		if err := rc.Control(func(fd uintptr) { unread, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil {
			return err
		}
		if ierr != nil {
			return fmt.Errorf("ptytest: TIOCINQ: %w", ierr)
		}
		n := s.Len()
		if unread == 0 && n == prev {
			return nil
		}
		prev = n
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("ptytest: the output did not settle within %s", limit)
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
	for _, m := range []string{"icanon", "echo", "isig", "icrnl", "opost"} {
		if !slices.Contains(fields, m) {
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

// modes are the modes bubbletea v2 sets, each with the sequence that sets it and the
// one that unsets it: the alternate screen, the hidden cursor,
// bracketed paste (xterm's DEC private mode 2004), xterm's modifyOtherKeys level 2
// (CSI > 4 ; 2 m, reset by CSI > 4 m) and the kitty keyboard protocol's flags
// (pushed by CSI > 1 u, popped by CSI < 1 u). One left on breaks the shell that
// reads the terminal next: its keys arrive encoded.
var modes = []struct{ name, on, off string }{
	{"the alternate screen", AltScreenOn, AltScreenOff},
	{"the cursor hidden", CursorHide, CursorShow},
	{"bracketed paste", "\x1b[?2004h", "\x1b[?2004l"},
	{"modifyOtherKeys", "\x1b[>4;2m", "\x1b[>4m"},
	{"kitty keyboard flags", "\x1b[>1u", "\x1b[<1u"},
}

// LeftModes names the modes out set and did not unset (the last "on" comes after
// the last "off").
func LeftModes(out []byte) []string {
	var left []string
	for _, m := range modes {
		if bytes.LastIndex(out, []byte(m.on)) > bytes.LastIndex(out, []byte(m.off)) {
			left = append(left, m.name)
		}
	}
	return left
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
