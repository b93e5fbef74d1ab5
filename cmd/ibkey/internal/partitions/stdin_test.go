package partitions

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

// runStdin runs `ibkey ARGS` in-process with stdin (a terminal when tty).
func runStdin(t *testing.T, stdin string, tty bool, args ...string) cmdtest.Result {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := &cmdutil.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut, InTTY: tty}
	f := cmdutil.NewFactory(streams, func(string) string { return "" }, time.Now)
	code := cmdutil.Execute(context.Background(), cmdtest.WithCommands(NewCmdPartitions)(f), args, streams)
	return cmdtest.Result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// TestPartitionsFromStdin: FILE (and --previous) may be - for standard input or a pipe
// (issue 25 item 5: ssh sm01 cat /etc/opensm/partitions.conf | ibkey partitions check -).
func TestPartitionsFromStdin(t *testing.T) {
	conf, err := os.ReadFile(mistakesConf)
	if err != nil {
		t.Fatal(err)
	}
	file := runIbkey(t, false, nil, "partitions", "check", mistakesConf)
	r := runStdin(t, string(conf), false, "partitions", "check", "-")
	if r.Code != file.Code || r.Stdout != strings.ReplaceAll(file.Stdout, mistakesConf, "<stdin>") || r.Stderr != "" {
		t.Errorf("check -: exit %d\n%s%s\nwant the file's findings named <stdin>:\n%s", r.Code, r.Stdout, r.Stderr, file.Stdout)
	}
	if r := runStdin(t, string(conf), true, "partitions", "check", "-"); !strings.Contains(r.Stderr, "end it with Ctrl-D") {
		t.Errorf("check - on a terminal: stderr %q", r.Stderr)
	}
	prev, err := os.ReadFile(reconfAConf)
	if err != nil {
		t.Fatal(err)
	}
	want := runIbkey(t, false, nil, "partitions", "show", reconfBConf, "--previous", reconfAConf)
	r = runStdin(t, string(prev), false, "partitions", "show", reconfBConf, "--previous", "-")
	if r.Code != 0 || r.Stdout != strings.ReplaceAll(want.Stdout, reconfAConf, "<stdin>") {
		t.Errorf("show --previous -: exit %d\n%s%s\nwant\n%s", r.Code, r.Stdout, r.Stderr, want.Stdout)
	}
	if r := runStdin(t, string(prev), false, "partitions", "show", "-", "--previous", "-"); r.Code != 2 || !strings.Contains(r.Stderr, "- (standard input) 2 times") {
		t.Errorf("show - --previous -: exit %d, %s", r.Code, r.Stderr)
	}
	fifo := filepath.Join(t.TempDir(), "partitions.conf")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Write(conf)
			f.Close()
		}
	}()
	if r := runStdin(t, "", false, "partitions", "check", fifo); r.Code != file.Code || r.Stdout != strings.ReplaceAll(file.Stdout, mistakesConf, fifo) {
		t.Errorf("check FIFO: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
