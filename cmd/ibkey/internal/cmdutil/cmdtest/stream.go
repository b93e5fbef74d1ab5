package cmdtest

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
)

// Start runs a command line in-process and hands its stdout lines (and stderr) to the
// test as they come, for commands that stream (watch). code receives the exit code.
func Start(t testing.TB, root Root, args ...string) (stdout <-chan string, stderr *bufio.Reader, code <-chan int) {
	t.Helper()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	lines := make(chan string, 100)
	done := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	go func() {
		streams := &cmdutil.IOStreams{In: strings.NewReader(""), Out: outW, ErrOut: errW}
		f := cmdutil.NewFactory(streams, func(string) string { return "" }, time.Now)
		c := cmdutil.Execute(context.Background(), root(f), args, streams)
		outW.Close()
		errW.Close()
		done <- c
	}()
	return lines, bufio.NewReader(errR), done
}

// Next is the next line from Start's stdout; the test fails when the output ends or
// nothing comes for 10 s (a hang, not a slow machine).
func Next(t testing.TB, lines <-chan string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("output ended early")
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no output in 10s")
	}
	return ""
}
