package partitions

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/jsonschematest"
)

type result struct {
	stdout, stderr string
	code           int
}

// runIbkey runs `ibkey ARGS` in-process on a root that has the real root's persistent
// flags and only the partitions commands, with fake streams; tty makes stdout a
// terminal. Errors are printed and mapped to exit codes as main does.
func runIbkey(t *testing.T, tty bool, env map[string]string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{
		IOStreams: &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, OutTTY: tty},
		Getenv:    func(k string) string { return env[k] },
		Now:       time.Now,
	}
	root := &cobra.Command{Use: "ibkey", SilenceUsage: true, SilenceErrors: true}
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetFlagErrorFunc(cmdutil.FlagError)
	pf := root.PersistentFlags()
	pf.StringVar(&f.SysfsDir, "sysfs", "", "")
	pf.BoolVar(&f.Demo, "demo", false, "")
	pf.StringVarP(&f.Output, "output", "o", "", "")
	pf.BoolVar(&f.NoColor, "no-color", false, "")
	root.AddCommand(NewCmdPartitions(f))
	root.SetArgs(args)
	err := root.Execute()
	if err != nil && !cmdutil.Reported(err) {
		fmt.Fprintf(&errOut, "ibkey: %s\n", err)
	}
	jsonschematest.Output(t, args, out.String(), schemaFor)
	return result{out.String(), errOut.String(), cmdutil.ExitCode(err)}
}
