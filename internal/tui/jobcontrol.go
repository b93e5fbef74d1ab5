package tui

import (
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/sys/unix"
)

// jobControl makes the screen stop and continue as a shell's job control expects.
//
// The terminal is raw while the screen runs, so ctrl+z arrives as a key (it
// becomes bubbletea's Suspend) and a SIGTSTP only comes from outside (kill -TSTP,
// a job-control shell or a supervisor). Its default action stopped the process
// with the terminal raw and in the alternate screen, and after `fg` the shell had
// put its own modes back (canonical, echo): the screen ignored keys until Enter.
// So SIGTSTP is caught and handed to bubbletea's suspend, which gives the terminal
// back (alternate screen left, cursor shown, the modes it found), stops the
// process group with SIGTSTP and waits for SIGCONT, then takes the terminal again,
// repaints and sends ResumeMsg.
//
// Nobody resumes an orphaned process group (POSIX: the kernel discards the
// terminal's stop signals for one), e.g. when the screen is the command of a tmux
// pane or of `ssh -t host ibkey ...`: stopping would freeze the terminal for good.
// There a SIGTSTP and ctrl+z are ignored, as the kernel ignores them (canStop).
//
// One catch: once a Go program has asked for SIGTSTP (signal.Notify), the runtime
// keeps its handler even after signal.Stop, and a SIGTSTP nobody asks for is
// dropped (runtime/signal_unix.go, sigdisable: SIGTSTP has no default the runtime
// restores). So the SIGTSTP bubbletea raises to suspend comes back here: the
// terminal is given back by then, and the process stops itself with SIGSTOP, which
// cannot be caught. bubbletea's wait for SIGCONT ends when the shell continues it.
type jobControl struct {
	sig        chan os.Signal
	suspending atomic.Bool // between bubbletea's SuspendMsg and ResumeMsg
}

func newJobControl() *jobControl { return &jobControl{sig: make(chan os.Signal, 1)} }

// filter runs in bubbletea's event loop, before it handles each message.
func (j *jobControl) filter(_ tea.Model, msg tea.Msg) tea.Msg {
	switch msg.(type) {
	case tea.SuspendMsg:
		if !canStop() {
			return nil
		}
		j.suspending.Store(true)
	case tea.ResumeMsg:
		j.suspending.Store(false)
	}
	return msg
}

// start catches SIGTSTP for p until stop is called (after p.Run returned).
func (j *jobControl) start(p *tea.Program) (stop func()) {
	signal.Notify(j.sig, syscall.SIGTSTP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-j.sig:
			}
			if j.suspending.Load() {
				// bubbletea's own SIGTSTP: the terminal is given back; stop.
				_ = syscall.Kill(syscall.Getpid(), syscall.SIGSTOP)
				continue
			}
			p.Send(tea.SuspendMsg{}) // returns at once once p has ended
		}
	}()
	return func() {
		signal.Stop(j.sig)
		close(done)
	}
}

// canStop reports whether a stopped screen would be continued: a job-control shell
// is its parent, in the same session but another process group (the shell runs each
// job in a group of its own and resumes it with fg or bg). Otherwise the process
// group is orphaned, or nearly: POSIX.1 "orphaned process group", and Linux's
// is_current_pgrp_orphaned (kernel/exit.c), which discards SIGTSTP then. Only the
// parent is checked: the screen runs alone in its job (its stdin and stdout are the
// terminal, so it is not in a pipeline).
func canStop() bool {
	ppid := os.Getppid()
	sid, err := unix.Getsid(0)
	if err != nil {
		return false
	}
	psid, err := unix.Getsid(ppid)
	if err != nil || psid != sid {
		return false
	}
	ppgid, err := unix.Getpgid(ppid)
	return err == nil && ppgid != unix.Getpgrp()
}
