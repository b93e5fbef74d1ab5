package cmdutil

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are a command's input and outputs: data on Out, warnings and errors on
// ErrOut. Whether each is a terminal is decided once, when the streams are made.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	InTTY  bool
	OutTTY bool
	ErrTTY bool
}

// SystemIOStreams are the process's stdin, stdout and stderr.
func SystemIOStreams() *IOStreams {
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		InTTY: isTerminal(os.Stdin), OutTTY: isTerminal(os.Stdout), ErrTTY: isTerminal(os.Stderr)}
}

// isTerminal reports whether f is a terminal (golang.org/x/term: every platform Go
// builds for, where an ioctl number is not portable).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
