// Package earlysig registers ibkey's signal handler as early in the process as Go
// allows: in its package init, which the runtime runs before the heavier packages the
// binary links (client_golang, protobuf, cobra: Go initialises ready packages in
// import-path order, and this one imports only the standard library). A SIGQUIT or
// SIGTERM that arrives while those initialise is then held for main instead of killing
// the process with the default action (a goroutine dump for SIGQUIT).
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

func init() { signal.Notify(C, Signals...) }
