package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil/cmdtest"
)

const mlx5 = "../../testdata/sysfs/mlx5"

// result is a command line's outcome (cmdtest.Result with the names the tests use).
type result struct {
	stdout, stderr string
	code           int
}

// runIbkey runs one command line through the whole command tree in-process with fake
// streams; tty makes stdout a terminal (table output by default).
func runIbkey(t *testing.T, tty bool, env map[string]string, args ...string) result {
	t.Helper()
	r := cmdtest.Run(t, newRootCmd, tty, env, args...)
	return result{r.Stdout, r.Stderr, r.Code}
}

func TestDefaultFormatFollowsTerminal(t *testing.T) {
	tty := runIbkey(t, true, nil, "decode", "pkey", "0x8001")
	pipe := runIbkey(t, false, nil, "decode", "pkey", "0x8001")
	if !strings.HasPrefix(tty.stdout, "P_Key 0x8001") || !strings.HasPrefix(pipe.stdout, "VALUE") {
		t.Errorf("terminal:\n%s\npipe:\n%s", tty.stdout, pipe.stdout)
	}
}

func TestEnvironment(t *testing.T) {
	r := runIbkey(t, false, map[string]string{"IBKEY_SYSFS": mlx5}, "pkeys", "mlx5_1", "2")
	if r.code != 0 || !strings.Contains(r.stdout, "mlx5_1/2") {
		t.Errorf("IBKEY_SYSFS: %+v", r)
	}
	r = runIbkey(t, false, map[string]string{"IBKEY_DEMO": "1"}, "devices")
	if r.code != 0 || !strings.Contains(r.stderr, "demo host") {
		t.Errorf("IBKEY_DEMO: %+v", r)
	}
	// --sysfs wins over IBKEY_SYSFS (exit 4: the fixture's entry mlx5_1/1[3] is not
	// read; /nonexistent would be 3).
	r = runIbkey(t, false, map[string]string{"IBKEY_SYSFS": "/nonexistent"}, "--sysfs", mlx5, "devices")
	if r.code != 4 || !strings.Contains(r.stdout, "mlx5_1") {
		t.Errorf("--sysfs over IBKEY_SYSFS: %+v", r)
	}
	// IBKEY_DEMO is a boolean as strconv.ParseBool reads one; anything else is refused,
	// never read as "no" (the real /sys was read for IBKEY_DEMO=true).
	for v, demo := range map[string]bool{"true": true, "TRUE": true, "1": true, "0": false, "false": false} {
		r = runIbkey(t, false, map[string]string{"IBKEY_DEMO": v, "IBKEY_SYSFS": mlx5}, "devices")
		code := 4 // the mlx5 fixture's entry mlx5_1/1[3] is not read
		if demo {
			code = 0
		}
		if r.code != code || strings.Contains(r.stderr, "demo host") != demo {
			t.Errorf("IBKEY_DEMO=%s: demo host %v? %+v", v, demo, r)
		}
	}
	r = runIbkey(t, false, map[string]string{"IBKEY_DEMO": "yes"}, "devices")
	if r.code != 2 || r.stderr != "ibkey: invalid IBKEY_DEMO=\"yes\" (accepted: 1 or true for the demo host; 0, false or unset for this host's sysfs)\n" {
		t.Errorf("IBKEY_DEMO=yes: %+v", r)
	}
	// A flag wins over the environment: --sysfs over IBKEY_DEMO; --demo with --sysfs
	// names two hosts, refused rather than one read silently.
	r = runIbkey(t, false, map[string]string{"IBKEY_DEMO": "1"}, "--sysfs", mlx5, "devices")
	if r.code != 4 || strings.Contains(r.stderr, "demo host") || !strings.Contains(r.stdout, "mlx5_2") {
		t.Errorf("--sysfs over IBKEY_DEMO: %+v", r)
	}
	r = runIbkey(t, false, nil, "--demo", "--sysfs", mlx5, "devices")
	if r.code != 2 || !strings.Contains(r.stderr, "--demo and --sysfs") || !strings.Contains(r.stderr, "both choose the host to read: give one") {
		t.Errorf("--demo --sysfs: %+v", r)
	}
}

// TestCompletion: completion through the whole tree (root flags, the completion
// command, watch's intervals; each command's own are in its package).
func TestCompletion(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "--demo", "watch", "counters", "--interval", ""}, []string{"5s\n", ":36\n"}},
		{[]string{"__complete", "devices", "-o", ""}, []string{"table", "plain", "json"}},
		{[]string{"__complete", "completion", ""}, []string{"bash", "zsh", "fish", "powershell"}},
		{[]string{"__complete", ""}, []string{"devices", "pkeys", "decode"}},
	}
	for _, tc := range cases {
		r := runIbkey(t, false, nil, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("ibkey %s: want %q in\n%s", strings.Join(tc.args, " "), w, r.stdout)
			}
		}
		if !strings.Contains(r.stdout, ":4\n") && !strings.Contains(r.stdout, ":0\n") && !strings.Contains(r.stdout, ":36\n") {
			t.Errorf("ibkey %s: no completion directive in %q", strings.Join(tc.args, " "), r.stdout)
		}
	}
}

// TestMADFlagsOnlyWhereSent: the MAD transport flags are on the commands that send
// MADs and on no other (decode's help and man page do not list them); --ibsim before a
// command that sends none is refused, before one that does it is that command's.
// madFlagNames are the flags cmdutil.AddMADFlags adds.
var madFlagNames = []string{"ibsim", "sim-node", "ca", "ca-port", "mad-timeout", "mad-retries"}

func TestMADFlagsOnlyWhereSent(t *testing.T) {
	sends := map[string]bool{
		"ibkey devices": true, "ibkey pkeys": true, "ibkey can-talk": true, "ibkey watch counters": true,
		"ibkey job": true, "ibkey exporter": true, "ibkey fabric discover": true, "ibkey fabric pkeys": true,
		"ibkey fabric check": true, "ibkey fabric diff": true, "ibkey sm log": true,
	}
	root := newRootCmd(cmdutil.NewFactory(&cmdutil.IOStreams{}, func(string) string { return "" }, nil))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	seen := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && !c.HasSubCommands() {
			for _, name := range madFlagNames {
				fl := c.Flags().Lookup(name)
				if fl == nil {
					fl = c.InheritedFlags().Lookup(name)
				}
				// The root's hidden --ibsim is inherited everywhere; it is not listed.
				listed := fl != nil && !fl.Hidden
				if listed != sends[c.CommandPath()] {
					t.Errorf("%s: --%s listed %v, want %v", c.CommandPath(), name, listed, sends[c.CommandPath()])
				}
			}
			if sends[c.CommandPath()] {
				seen++
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	if seen != len(sends) {
		t.Errorf("found %d of the %d commands that send MADs", seen, len(sends))
	}
	help := runIbkey(t, false, nil, "decode", "pkey", "--help")
	for _, name := range madFlagNames {
		if strings.Contains(help.stdout, "--"+name) {
			t.Errorf("decode pkey --help lists --%s:\n%s", name, help.stdout)
		}
	}
	if !strings.Contains(runIbkey(t, false, nil, "pkeys", "--help").stdout, "--mad-timeout") {
		t.Error("pkeys --help does not list --mad-timeout")
	}
	cmdtest.Errors(t, newRootCmd, []cmdtest.ErrorCase{
		{Args: []string{"--ibsim", "decode", "pkey", "0x8001"}, Code: 2, Stderr: "ibkey: --ibsim: 'ibkey decode pkey' sends no MADs"},
		{Args: []string{"--ibsim=x", "partitions", "check", "p.conf"}, Code: 2, Stderr: "'ibkey partitions check' sends no MADs"},
		{Args: []string{"decode", "pkey", "--mad-timeout", "1s", "0x8001"}, Code: 2, Stderr: "unknown flag: --mad-timeout"},
		// The root's --ibsim and --sim-node before the command are the command's.
		{Args: []string{"--ibsim=/nonexistent/sock", "--sim-node", "x", "pkeys", "--lid", "1", "--mad-retries", "0"}, Code: 3, Stderr: "/nonexistent/sock"},
		{Args: []string{"--sim-node", "x", "--demo", "pkeys", "--lid", "1"}, Code: 2, Stderr: "--sim-node chooses where to attach to the simulator: it needs --ibsim"},
	})
}

// TestMADFlagsOnRunWithoutMADs: MAD flags given on the command line of a run that
// sends no MAD (a local port, a saved sweep, the exporter's host mode) are refused,
// named as typed, with what would send MADs (they were accepted and ignored: `pkeys
// --sysfs DIR --ibsim /nonexistent` read DIR, exit 0). A run that sends MADs takes
// them, and IBKEY_IBSIM (set for a whole shell) is not refused.
func TestMADFlagsOnRunWithoutMADs(t *testing.T) {
	const sysfs, file = "../../testdata/sysfs/mlx5", "testdata/fabric/small.json"
	cmdtest.Errors(t, newRootCmd, []cmdtest.ErrorCase{
		{Args: []string{"--sysfs", sysfs, "pkeys", "--ibsim=/nonexistent"}, Code: 2, Stderr: `ibkey: --ibsim "/nonexistent": this run sends no MADs: 'ibkey pkeys' sends them only to read --lid, --dr or --guid (give one, or leave out the MAD flags to read this host)`},
		{Args: []string{"--demo", "pkeys", "mlx5_0", "1", "--ibsim", "--sim-node", "HcaZ"}, Code: 2, Stderr: `ibkey: --ibsim --sim-node "HcaZ": this run sends no MADs: 'ibkey pkeys' sends them only`},
		{Args: []string{"--demo", "devices", "-t", "200", "--mad-retries=1"}, Code: 2, Stderr: `ibkey: --mad-timeout "200" --mad-retries "1": this run sends no MADs: 'ibkey devices' sends them only to read --lid, --dr or --guid (give one`},
		{Args: []string{"--sysfs", sysfs, "devices", "--ca=mlx5_0"}, Code: 2, Stderr: `ibkey: --ca "mlx5_0": this run sends no MADs`},
		{Args: []string{"--demo", "watch", "counters", "--once", "--mad-timeout=2s"}, Code: 2, Stderr: `ibkey: --mad-timeout "2s": this run sends no MADs: 'ibkey watch counters' sends them only to read --lid or --dr, or the local ports' PortInfo counters through --ca or --ibsim`},
		{Args: []string{"--demo", "fabric", "pkeys", "--fabric-file", file, "--ibsim=x"}, Code: 2, Stderr: `ibkey: --ibsim "x": this run sends no MADs: with --fabric-file, 'ibkey fabric pkeys' reads the saved sweep`},
		{Args: []string{"--demo", "fabric", "check", "--fabric-file", file, "--mad-retries=0"}, Code: 2, Stderr: `with --fabric-file, 'ibkey fabric check' reads the saved sweep`},
		{Args: []string{"--demo", "fabric", "discover", "--fabric-file", file, "--mad-retries=0"}, Code: 2, Stderr: `with --fabric-file, 'ibkey fabric discover' reads the saved sweep`},
		{Args: []string{"--demo", "fabric", "diff", file, file, "--ibsim=x"}, Code: 2, Stderr: `ibkey: --ibsim "x": this run sends no MADs: 'ibkey fabric diff A B' compares two saved sweeps`},
		{Args: []string{"--demo", "exporter", "--once", "--mad-timeout=1s"}, Code: 2, Stderr: `ibkey: --mad-timeout "1s": this run sends no MADs: 'ibkey exporter' sends them only in fabric mode (--sweep, --lid) or for --portinfo`},
		// --demo and --ibsim both choose the fabric, as --demo and --sysfs both choose
		// the host: refused, never one of them silently.
		{Args: []string{"--demo", "fabric", "discover", "--ibsim=x"}, Code: 2, Stderr: "ibkey: --demo and --ibsim both choose the fabric to read: give one\n"},
		{Args: []string{"--demo", "pkeys", "--lid", "1", "--ibsim"}, Code: 2, Stderr: "ibkey: --demo and --ibsim both choose the fabric to read: give one\n"},
	})
	// Runs that send MADs take them.
	for _, args := range [][]string{
		{"--demo", "pkeys", "--lid", "1", "--mad-timeout", "2s"},
		{"--demo", "devices", "--dr", "0", "-t", "200", "--ca", "mlx5_0"},
		{"--demo", "watch", "counters", "--once", "--ca", "mlx5_0", "--mad-retries", "1", "-o", "json"},
		{"--demo", "fabric", "pkeys", "--mad-retries", "1"},
		{"--demo", "fabric", "diff", file, "--mad-retries", "1"},
		{"--demo", "exporter", "--once", "--lid", "1", "--mad-retries", "1"},
	} {
		if r := runIbkey(t, false, nil, args...); r.code == 2 {
			t.Errorf("ibkey %s: exit 2: %s", strings.Join(args, " "), r.stderr)
		}
	}
	if r := runIbkey(t, false, map[string]string{"IBKEY_IBSIM": "x"}, "--demo", "pkeys"); r.code != 0 {
		t.Errorf("IBKEY_IBSIM=x --demo pkeys: exit %d: %s", r.code, r.stderr)
	}
}

// TestHelpAndFlagErrors (issue 12 item 5): flag errors name the command path's help;
// --ibsim BASE with a space is explained; interval flags take plain seconds;
// -o table on a pipe is refused by the counters screen, not ignored.
func TestHelpAndFlagErrors(t *testing.T) {
	cmdtest.Errors(t, newRootCmd, []cmdtest.ErrorCase{
		{Args: []string{"watch", "counters", "--bogus"}, Code: 2, Stderr: "(see 'ibkey watch counters --help')"},
		{Args: []string{"fabric", "pkeys", "--bogus"}, Code: 2, Stderr: "(see 'ibkey fabric pkeys --help')"},
		{Args: []string{"partitions", "check", "--bogus", "x"}, Code: 2, Stderr: "(see 'ibkey partitions check --help')"},
		// (--demo lid=/--lid used to be refused here; they read the demo fabric now:
		// TestDemoCoversEveryCommand.)
		{Args: []string{"--demo", "can-talk", "--bogus", "lid=3", "0x8001"}, Code: 2, Stderr: "(see 'ibkey can-talk --help')"},
		{Args: []string{"--demo", "pkeys", "--lid", "3", "--bogus"}, Code: 2, Stderr: "(see 'ibkey pkeys --help')"},
		{Args: []string{"--ibsim", "mysim", "pkeys", "--lid", "3"}, Code: 2, Stderr: `ibkey: --ibsim mysim: give the simulator's socket name as --ibsim=mysim (--ibsim alone means $IBSIM_SOCKNAME, else sim; "mysim" was read as a command)`},
		{Args: []string{"pkeys", "--ibsim", "mysim", "--lid", "3"}, Code: 2, Stderr: `"mysim" was read as an argument)`},
		{Args: []string{"--sysfs", mlx5, "pkeys", "--ibsim", "/tmp/sock"}, Code: 2, Stderr: `give the simulator's socket name as --ibsim=/tmp/sock`},
		{Args: []string{"--demo", "watch", "counters", "-o", "table", "--once"}, Code: 2, Stderr: "ibkey: -o table: 'ibkey watch counters' draws its table on a terminal and stdout is not a terminal (accepted here: -o plain, -o json)"},
		{Args: []string{"--demo", "watch", "counters", "--interval", "x"}, Code: 2, Stderr: `invalid argument "x" for "--interval"`},
		// A command that takes no arguments says so, in one wording (cobra's said
		// `unknown command "mlx5_0" for "ibkey devices"`).
		{Args: []string{"--demo", "devices", "mlx5_0"}, Code: 2, Stderr: "ibkey: devices takes no arguments, got \"mlx5_0\" (usage: ibkey devices [flags])\n"},
		{Args: []string{"--demo", "fabric", "discover", "x", "y"}, Code: 2, Stderr: "ibkey: fabric discover takes no arguments, got \"x y\" (usage: ibkey fabric discover [flags])\n"},
		{Args: []string{"--demo", "fabric", "check", "x"}, Code: 2, Stderr: "ibkey: fabric check takes no arguments, got \"x\""},
		{Args: []string{"--demo", "fabric", "pkeys", "x"}, Code: 2, Stderr: "ibkey: fabric pkeys takes no arguments, got \"x\""},
		{Args: []string{"--demo", "exporter", "x"}, Code: 2, Stderr: "ibkey: exporter takes no arguments, got \"x\" (usage: ibkey exporter [flags])\n"},
		// A flag's name typed as a command: the flag is suggested.
		{Args: []string{"version"}, Code: 2, Stderr: `ibkey: unknown command "version" for "ibkey"; did you mean --version? (commands: `},
		{Args: []string{"demo", "pkeys"}, Code: 2, Stderr: `ibkey: unknown command "demo" for "ibkey"; did you mean --demo? (commands: `},
	})
	// --ibsim before a command name, and an endpoint after it, are not a socket name.
	if r := runIbkey(t, false, nil, "--ibsim=/nonexistent/sock", "--demo", "can-talk", "--ibsim", "lid=3", "0x8001", "--mad-retries", "0"); strings.Contains(r.stderr, "give the simulator's socket name") {
		t.Errorf("lid=3 after --ibsim: %+v", r)
	}
	r := runIbkey(t, false, nil, "--demo", "watch", "counters", "--once", "--interval", "5")
	if r.code != 4 { // the demo's PortInfo counters are not read (n/a): exit 4, not 2
		t.Errorf("--interval 5: %+v", r)
	}
	// Flag help is wrapped to 80 columns: compare words.
	if help := runIbkey(t, false, nil, "watch", "counters", "--help").stdout; !strings.Contains(strings.Join(strings.Fields(help), " "), "a plain number is seconds") {
		t.Errorf("watch counters --help does not say --interval takes seconds:\n%s", help)
	}
}

// TestDiagsHabits (issue 12 item 9): the infiniband-diags' short flags are ibkey's
// flags where the command has them, and name ibkey's spelling where it has not; a LID
// typed as a device suggests --lid; -v is not --version.
func TestDiagsHabits(t *testing.T) {
	cmdtest.Errors(t, newRootCmd, []cmdtest.ErrorCase{
		{Args: []string{"--ibsim", "pkeys", "4"}, Code: 2, Stderr: `ibkey: "4" is not a local device: to read the port with LID 4 over MADs use --lid 4 (-L 4)`},
		{Args: []string{"--sysfs", mlx5, "pkeys", "0,1,3"}, Code: 2, Stderr: "use --dr 0,1,3 (-D 0,1,3)"},
		{Args: []string{"--sysfs", mlx5, "pkeys", "0x0002c90300000204"}, Code: 2, Stderr: "use --guid 0x0002c90300000204"},
		{Args: []string{"-v"}, Code: 2, Stderr: "unknown shorthand flag: 'v' in -v (ibkey has no verbose mode: warnings and notes are always on stderr; --version prints the version) (see 'ibkey --help')"},
		{Args: []string{"pkeys", "-v"}, Code: 2, Stderr: "--version prints the version) (see 'ibkey pkeys --help')"},
		{Args: []string{"decode", "pkey", "-C", "mlx5_0", "0x8001"}, Code: 2, Stderr: "infiniband-diags' -C is --ca DEV in ibkey, which 'ibkey decode pkey' does not take"},
		{Args: []string{"fabric", "pkeys", "-D", "0,1"}, Code: 2, Stderr: "infiniband-diags' -D is --dr PATH in ibkey, which 'ibkey fabric pkeys' does not take"},
		{Args: []string{"--demo", "pkeys", "-L", "3", "-G", "0x1"}, Code: 2, Stderr: "[guid lid] were all set"},
	})
	if r := runIbkey(t, false, nil, "--version"); r.code != 0 || !strings.HasPrefix(r.stdout, "ibkey version") {
		t.Errorf("--version: %+v", r)
	}
}

// TestFlagHelpNamesOwnFlags: a flag's help names only flags of ibkey's that its command
// has (--port said "with --lid/--dr/--guid" on devices and watch counters, which have
// no --guid). Other tools' flags in it (perftest's --pkey_index) are not ibkey's.
func TestFlagHelpNamesOwnFlags(t *testing.T) {
	root := newRootCmd(cmdutil.NewFactory(&cmdutil.IOStreams{}, func(string) string { return "" }, nil))
	var all []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		all = append(all, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	ours := map[string]bool{}
	for _, c := range all {
		c.Flags().VisitAll(func(f *pflag.Flag) { ours[f.Name] = true })
	}
	named := regexp.MustCompile(`--([a-z][a-z0-9_.-]*[a-z0-9])`)
	for _, c := range all {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			for _, m := range named.FindAllStringSubmatch(f.Usage, -1) {
				if ours[m[1]] && c.Flags().Lookup(m[1]) == nil && c.InheritedFlags().Lookup(m[1]) == nil {
					t.Errorf("%s --%s: its help names --%s, which the command does not have: %q", c.CommandPath(), f.Name, m[1], f.Usage)
				}
			}
		})
	}
}
