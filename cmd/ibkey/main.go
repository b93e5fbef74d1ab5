// Command ibkey explains InfiniBand partitions: P_Key tables, P_Key and Q_Key values,
// whether two endpoints can talk, and the counters that show dropped packets.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// version is stamped by the Makefile with -ldflags "-X main.version=...".
var version = "dev"

// Exit codes (design.md): 0 success / yes, 1 a definite no, 2 bad input, 3 environment.
const (
	exitOK    = 0
	exitNo    = 1
	exitUsage = 2
	exitEnv   = 3
)

func main() {
	streams := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTTY: isTerminal(os.Stdout), ErrTTY: isTerminal(os.Stderr), InTTY: isTerminal(os.Stdin)}
	os.Exit(run(os.Args[1:], streams, os.Getenv))
}

// run executes one command line and returns the exit code; tests call it in-process.
func run(args []string, streams *IOStreams, getenv func(string) string) int {
	root := newRootCmd(streams, getenv)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	var silent *silentError
	if !errors.As(err, &silent) {
		fmt.Fprintf(streams.ErrOut, "ibkey: %s\n", err)
	}
	return code
}

// silentError carries an exit code for an outcome the command has already reported
// (a "no" from can-talk, a key not found).
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitCode maps typed errors to exit codes in one place.
func exitCode(err error) int {
	var (
		silent   *silentError
		parseErr *check.ParseError
		usage    *query.UsageError
		notFound *query.NotFoundError
		env      *query.EnvError
	)
	switch {
	case errors.As(err, &silent):
		return silent.code
	case errors.As(err, &parseErr), errors.As(err, &usage), errors.Is(err, ibverbs.ErrBadName):
		return exitUsage
	case errors.As(err, &notFound), errors.As(err, &env):
		return exitEnv
	}
	// Anything else comes from cobra's own argument and flag parsing.
	return exitUsage
}

// IOStreams are a command's input and outputs: data on Out, warnings and errors on ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	InTTY  bool
	OutTTY bool
	ErrTTY bool
}
