package main

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/earlysig"
)

// TestFrontStubsMatch: the front's placeholders carry the real commands' names,
// aliases and one-line help, so `ibkey --help` and name completion are the same in
// both builds.
func TestFrontStubsMatch(t *testing.T) {
	full := newRootCmd(testFactory())
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		if c.Annotations[delegateAnnotation] == "" {
			return
		}
		n++
		path := strings.Fields(c.CommandPath())[1:]
		r, _, err := full.Find(path)
		if err != nil || r.CommandPath() != c.CommandPath() {
			t.Errorf("placeholder %q: no such command (%v)", c.CommandPath(), err)
			return
		}
		if r.Use != c.Use || r.Short != c.Short || strings.Join(r.Aliases, ",") != strings.Join(c.Aliases, ",") {
			t.Errorf("placeholder %q %q %v, command %q %q %v", c.Use, c.Short, c.Aliases, r.Use, r.Short, r.Aliases)
		}
	}
	walk(frontTree())
	if n != 2 {
		t.Errorf("%d placeholders, want 2 (exporter, watch counters)", n)
	}
}

func testFactory() *cmdutil.Factory {
	return cmdutil.NewFactory(&cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, func(string) string { return "" }, nil)
}

// frontTree is the front's command tree: the full tree with the placeholders the
// front build puts in.
func frontTree() *cobra.Command {
	root := newRootCmd(testFactory())
	for _, c := range root.Commands() {
		switch c.Name() {
		case "exporter":
			root.RemoveCommand(c)
			root.AddCommand(delegateStub(exporterUse, exporterShort, nil))
		case "watch":
			stubCounters(c)
		}
	}
	return root
}

// delegated says whether cobra, in the front's tree, runs (or shows help for, or
// completes) a placeholder for args: the command lines that must reach ibkey-full.
func delegated(root *cobra.Command, args []string) bool {
	c, _, err := root.Find(commandWords(args))
	if err != nil {
		return false
	}
	for ; c != nil; c = c.Parent() {
		if c.Annotations[delegateAnnotation] != "" {
			return true
		}
	}
	return false
}

// TestDelegated: every command line cobra would route to a placeholder of the front is
// one earlysig.Delegates hands to ibkey-full; the others stay in the front unless they
// name "exporter" or "counters" in another role.
func TestDelegated(t *testing.T) {
	root := frontTree()
	for _, tc := range []struct {
		args      string
		want      bool
		otherRole bool // names exporter or counters, not as the command
	}{
		{args: "exporter", want: true},
		{args: "exporter --once", want: true},
		{args: "--sysfs /x exporter --listen :9893", want: true},
		{args: "-o json exporter --help", want: true},
		{args: "help exporter", want: true},
		{args: "__complete exporter --l", want: true},
		{args: "__completeNoDesc exporter ", want: true},
		{args: "--demo __complete exporter --", want: true},
		{args: "watch counters", want: true},
		{args: "watch counters mlx5_0/1 --interval 1s", want: true},
		{args: "--demo watch counters --once", want: true},
		{args: "help watch counters", want: true},
		{args: "__complete watch counters --i", want: true},
		{args: "watch counters --help", want: true},
		{args: "", want: false},
		{args: "--help", want: false},
		{args: "help", want: false},
		{args: "watch", want: false},
		{args: "watch pkeys", want: false},
		{args: "help watch", want: false},
		{args: "__complete watch c", want: false},
		{args: "__complete ex", want: false},
		{args: "decode pkey 0x8001", want: false},
		{args: "--sysfs exporter decode pkey 0x8001", otherRole: true},
		{args: "pkeys --all", want: false},
		{args: "completion bash", want: false},
		{args: "frobnicate", want: false},
		{args: "pkeys counters", otherRole: true},
		{args: "--sysfs exporter devices", otherRole: true},
		{args: "watch pkeys counters", otherRole: true},
	} {
		args := strings.Fields(tc.args)
		if got := delegated(root, args); got != tc.want {
			t.Errorf("cobra routes %q to a placeholder: %v, want %v", tc.args, got, tc.want)
		}
		if got := earlysig.Delegates(args); got != tc.want && !tc.otherRole {
			t.Errorf("earlysig.Delegates(%q) = %v, want %v", tc.args, got, tc.want)
		}
		if tc.want && !earlysig.Delegates(args) {
			t.Errorf("%q reaches a placeholder but earlysig does not exec ibkey-full", tc.args)
		}
	}
}

// TestFrontBinary builds the front and ibkey-full the way `make build` does and runs
// them like a user: the front is statically linked and links neither client_golang
// nor purego; the delegated commands give byte-identical output, help, completions
// and exit codes through it; without ibkey-full beside it, they exit 3 saying so.
func TestFrontBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the front's static link is checked on Linux")
	}
	dir := t.TempDir()
	front, full := filepath.Join(dir, "ibkey"), filepath.Join(dir, companionName)
	for _, b := range []struct {
		out  string
		tags string
	}{{front, "ibkey_front ibkey_static"}, {full, ""}} {
		cmd := exec.Command("go", "build", "-tags", b.tags, "-o", b.out, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build -tags %q: %v\n%s", b.tags, err, out)
		}
	}
	ef, err := elf.Open(front)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the front is dynamically linked (it has an interpreter)")
		}
	}
	syms, _ := ef.Symbols()
	ef.Close()
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "github.com/prometheus/") || strings.HasPrefix(s.Name, "github.com/ebitengine/purego") {
			t.Errorf("the front links %s", s.Name)
			break
		}
	}

	fixture, _ := filepath.Abs(mlx5)
	runBin := func(bin string, args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "IBKEY_SYSFS=" + fixture}
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var ee *exec.ExitError
		code := 0
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String(), errOut.String(), code
	}
	for _, args := range []string{
		"exporter --help",
		"help exporter",
		"exporter --bogus",
		"watch counters --help",
		"watch counters --interval 0",
		"watch counters mlx5_9",
		"__complete exporter --l",
		"__complete watch counters m",
		"--help",
		"watch --help",
		"completion bash",
		"decode pkey 0x8001",
	} {
		o1, e1, c1 := runBin(front, strings.Fields(args)...)
		o2, e2, c2 := runBin(full, strings.Fields(args)...)
		if o1 != o2 || e1 != e2 || c1 != c2 {
			t.Errorf("%s: front and %s differ:\nfront exit %d\n%s%s\nfull exit %d\n%s%s", args, companionName, c1, o1, e1, c2, o2, e2)
		}
	}
	// The exporter's text, but its age gauge, is the same through the front.
	o1, _, c1 := runBin(front, "exporter", "--once")
	o2, _, c2 := runBin(full, "exporter", "--once")
	if c1 != 0 || c2 != 0 || dropAge(o1) != dropAge(o2) || !strings.Contains(o1, "ibkey_") {
		t.Errorf("exporter --once through the front (exit %d) differs from %s (exit %d):\n%s\n---\n%s", c1, companionName, c2, o1, o2)
	}

	if err := os.Remove(full); err != nil {
		t.Fatal(err)
	}
	_, e, c := runBin(front, "exporter", "--once")
	if c != cmdutil.ExitEnv || !strings.Contains(e, companionName) || !strings.Contains(e, "make install") {
		t.Errorf("front without %s: exit %d, stderr %q; want exit 3 naming it", companionName, c, e)
	}
	if o, _, c := runBin(front, "decode", "pkey", "0x8001"); c != 0 || !strings.Contains(o, "full") {
		t.Errorf("front without %s: decode exit %d:\n%s", companionName, c, o)
	}
}

// dropAge removes the age gauges (seconds since the tables were read) from exporter
// text.
func dropAge(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.Contains(l, "_age_seconds ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestNounNames: the names newRootCmdFor finds commands by are the commands' own.
func TestNounNames(t *testing.T) {
	cmds := newRootCmd(testFactory()).Commands()
	var got, want []string
	for _, c := range cmds {
		if c.Name() != "completion" && c.Name() != "help" {
			got = append(got, c.Name())
		}
	}
	for _, n := range nouns {
		want = append(want, n.name)
	}
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("commands %v, nouns %v", got, want)
	}
}

// TestPartialTree: a command line runs the same on the tree built for it (only the
// top-level command it names) as on the whole tree: output, errors, help, completions
// and exit code.
func TestPartialTree(t *testing.T) {
	for _, line := range []string{
		"decode pkey 0x8001",
		"-o json decode pkey 0x8001 0x7fff",
		"decode pkey",
		"decode",
		"decode bogus",
		"help decode pkey",
		"--sysfs " + mlx5 + " pkeys --all",
		"--sysfs " + mlx5 + " devices",
		"--sysfs " + mlx5 + " watch pkeys --count 1",
		"watch counters --interval 0",
		"watch help counters",
		"help",
		"--help",
		"",
		"frob",
		"decod",
		"help frob",
		"__complete ",
		"__complete d",
		"__complete decode ",
		"__complete --sysfs " + mlx5 + " pkeys ",
		"__complete watch counters --i",
		"fabric",
		"fabric bogus",
		"can-talk 0x8001 0x0001",
		"completion bash",
		"exporter --bogus",
	} {
		args := strings.Fields(line)
		if strings.HasSuffix(line, " ") {
			args = append(args, "")
		}
		whole := cmdtest.Run(t, newRootCmd, false, nil, args...)
		part := cmdtest.Run(t, func(f *cmdutil.Factory) *cobra.Command { return newRootCmdFor(f, args) }, false, nil, args...)
		if whole != part {
			t.Errorf("%q: whole tree exit %d\n%s%s\npartial tree exit %d\n%s%s", line, whole.Code, whole.Stdout, whole.Stderr, part.Code, part.Stdout, part.Stderr)
		}
	}
}

// BenchmarkRootCmd is building the command tree for `decode pkey 0x8001`: the whole
// tree (newRootCmd) and the tree for that command line (newRootCmdFor), as main does.
func BenchmarkRootCmd(b *testing.B) {
	args := []string{"decode", "pkey", "0x8001"}
	f := testFactory()
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			newRootCmd(f)
		}
	})
	b.Run("for-args", func(b *testing.B) {
		for b.Loop() {
			newRootCmdFor(f, args)
		}
	})
}
