// Package earlysig does what ibkey must do before anything else, in its package init,
// which the runtime runs before the heavier packages the binary links (cobra,
// tablewriter, lipgloss; in ibkey-full also client_golang and protobuf: Go initialises
// ready packages in import-path order, and this one imports only the standard library):
//
//   - In the front build (make build's bin/ibkey), a command line for a command the
//     front does not link (Delegates) replaces the process with ibkey-full at once,
//     before any handler exists, so a signal never falls between two processes'
//     handlers: until ibkey-full's own earlysig runs it takes its default action, and
//     nothing has been acquired by then.
//   - It registers ibkey's signal handler, so a SIGQUIT or SIGTERM that arrives while the
//     heavier packages initialise is held for main instead of killing the process with
//     the default action (a goroutine dump for SIGQUIT).
//
// main builds its one signal context from C (cmdutil.SignalContext); nothing else
// reads it.
package earlysig

import (
	"os"
	"os/signal"
	"syscall"
)

// Signals are the signals that end a command cleanly.
var Signals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// C receives Signals from process start; one signal is held until main reads it.
var C = make(chan os.Signal, 1)

func init() {
	execFull()
	signal.Notify(C, Signals...)
}

// Companion is the complete ibkey the front execs, installed beside it.
const Companion = "ibkey-full"

// Delegates says whether the front hands a command line (without the program name) to
// ibkey-full: whenever a word of it is the name of a command the front does not link
// ("exporter", "counters"). cobra reaches a command only through its name, so this
// covers every way to run one of them, ask for its help or complete it; a line that
// names one in another role (a device called "counters") runs in ibkey-full, which runs
// every command the same way.
func Delegates(args []string) bool {
	for _, a := range args {
		if a == "exporter" || a == "counters" {
			return true
		}
	}
	return false
}
