package main

import (
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether f is a terminal (golang.org/x/term works on every
// platform Go builds for; the TCGETS ioctl did not build on darwin).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
