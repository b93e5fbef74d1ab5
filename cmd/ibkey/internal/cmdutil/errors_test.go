package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// exitRoot is a small tree with ibkey's root flags: a leaf whose RunE returns the
// error it is given, with an argument count, a required flag and a flag group.
func exitRoot(runErr error) (*cobra.Command, *IOStreams, *bytes.Buffer) {
	var stderr bytes.Buffer
	streams := &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &stderr}
	f := NewFactory(streams, func(string) string { return "" }, nil)
	root := &cobra.Command{Use: "ibkey"}
	AddRootFlags(root, f)
	leaf := &cobra.Command{Use: "leaf [ARG]", Args: cobra.MaximumNArgs(1),
		RunE: func(*cobra.Command, []string) error { return runErr }}
	leaf.Flags().String("a", "", "")
	leaf.Flags().String("b", "", "")
	leaf.MarkFlagsMutuallyExclusive("a", "b")
	need := &cobra.Command{Use: "need", RunE: func(*cobra.Command, []string) error { return nil }}
	need.Flags().String("must", "", "")
	_ = need.MarkFlagRequired("must")
	group := &cobra.Command{Use: "group"}
	group.AddCommand(leaf, need)
	root.AddCommand(group)
	return root, streams, &stderr
}

// TestExitCodeUntyped: an error no layer typed is no "bad input" (exit 2), while
// every error of cobra's own parsing (flags, arguments, unknown commands, required
// flags, flag groups, the completion commands' arguments) still is, in one line.
func TestExitCodeUntyped(t *testing.T) {
	root, streams, stderr := exitRoot(errors.New("write /dev/stdout: broken pipe"))
	if code := Execute(context.Background(), root, []string{"group", "leaf"}, streams); code != ExitIncomplete {
		t.Errorf("an untyped error from RunE: exit %d, want %d (%s)", code, ExitIncomplete, stderr)
	}
	for _, args := range [][]string{
		{"group", "leaf", "--nosuch"},
		{"group", "leaf", "-x"},
		{"group", "leaf", "--a"},
		{"group", "leaf", "1", "2"},
		{"group", "leaf", "--a=1", "--b=2"},
		{"group", "need"},
		{"group", "nosuch"},
		{"nosuch"},
		{"help", "nosuch"},
		{"completion", "bash", "extra"},
		{"completion", "nosuch"},
		{"--no-color=x", "group", "leaf"},
	} {
		root, streams, stderr := exitRoot(nil)
		code := Execute(context.Background(), root, args, streams)
		if lines := strings.Count(strings.TrimSpace(stderr.String()), "\n") + 1; code != ExitUsage || lines != 1 {
			t.Errorf("ibkey %s: exit %d in %d lines, want %d in 1: %q", strings.Join(args, " "), code, lines, ExitUsage, stderr)
		}
	}
}
