package cmdutil

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// ExitCodeDoc is one row of the exit-code table.
type ExitCodeDoc struct {
	Code    string // "0", ..., "128+N"
	Meaning string
}

// ExitCodes is ibkey's one table of exit codes, for every command. `ibkey --help`,
// the man pages' EXIT STATUS and the README's table are generated from it (tests keep
// them fresh); ExitCode is the mapping from errors to these codes.
var ExitCodes = []ExitCodeDoc{
	{fmt.Sprint(ExitOK), "success; for a question (can-talk, pkeys --find, a check, a job's settings), yes"},
	{fmt.Sprint(ExitNo), "a definite no: the endpoints cannot talk, no port read holds the key, a check found errors (also in a partial read: what was found is definite), fabric diff found changes, a job's library does not work or its wait timed out"},
	{fmt.Sprint(ExitUsage), "bad input: an unknown command, flag, value or argument, or a file given that cannot be read or parsed; one line names it and what is accepted"},
	{fmt.Sprint(ExitEnv), "environment: no such device, port or node (the message lists what exists), no RDMA devices or sysfs, a MAD transport (/dev/infiniband/umad*: also permission denied) or simulator that cannot be reached"},
	{fmt.Sprint(ExitIncomplete), "incomplete: the answer depends on something that could not be read or checked (an entry, device, table or node, a sysfs file refused or broken, a partial sweep), listed on stderr, or a failure ibkey did not foresee (named on stderr); never a yes or no"},
	{ExitCodeName(ExitSignal), "ended by signal N (SIGINT 130, SIGTERM 143, SIGHUP 129, SIGQUIT 131), after restoring the terminal; a command whose exit codes say otherwise (ibkey exporter, a daemon) stops cleanly and exits 0"},
}

// ExitMeaning is one exit code a command can return and what it means for that command.
type ExitMeaning struct {
	Code    int // ExitOK ... ExitIncomplete, or ExitSignal for 128+N
	Meaning string
}

// exitPrefix starts the cobra annotations SetExits keeps a command's codes in, one
// per code: "ibkey.exit.4" holds what 4 means for the command, "ibkey.exit.128+N"
// what a signal does (ExitCodeName).
const exitPrefix = "ibkey.exit."

// signalExit is the 128+N row of a command that declares its codes but not this one:
// any command can be ended by a signal (Execute, SignalExitCode).
var signalExit = ExitMeaning{ExitSignal, "ended by signal N (SIGINT 130, SIGTERM 143)"}

// SetExits declares the exit codes c can return, each with its meaning for c. c's
// --help ends with them ("Exit codes:") and its man page's EXIT STATUS lists them, in
// place of the table of every code (ExitCodes); 128+N is added when not declared. The
// command tests (cmdtest) fail on an exit code a command returns but does not declare.
func SetExits(c *cobra.Command, exits ...ExitMeaning) {
	if c.Annotations == nil {
		c.Annotations = make(map[string]string, len(exits))
	}
	for _, e := range exits {
		c.Annotations[exitPrefix+ExitCodeName(e.Code)] = e.Meaning
	}
}

// CommandExits is the exit-code table of c: the codes it declares (SetExits), in
// order, or ExitCodes when it declares none. Declared reports which.
func CommandExits(c *cobra.Command) (rows []ExitCodeDoc, declared bool) {
	var codes []int
	for k := range c.Annotations {
		if name, ok := strings.CutPrefix(k, exitPrefix); ok {
			n, err := strconv.Atoi(name)
			if err != nil { // 128+N
				n = ExitSignal
			}
			codes = append(codes, n)
		}
	}
	if len(codes) == 0 {
		return ExitCodes, false
	}
	slices.Sort(codes)
	for _, n := range codes {
		rows = append(rows, ExitCodeDoc{ExitCodeName(n), c.Annotations[exitPrefix+ExitCodeName(n)]})
	}
	if codes[len(codes)-1] != ExitSignal {
		rows = append(rows, ExitCodeDoc{ExitCodeName(signalExit.Code), signalExit.Meaning})
	}
	return rows, true
}

// ExitCodeName is code as the tables name it: "0" ... "4", "128+N" for any signal's.
func ExitCodeName(code int) string {
	if code >= ExitSignal {
		return fmt.Sprintf("%d+N", ExitSignal)
	}
	return fmt.Sprint(code)
}

// ExitCodesText is an exit-code table (ExitCodes, or a command's: CommandExits) as
// --help shows it, the one format of every command's: one code per entry, its
// meaning filled to HelpWidth.
func ExitCodesText(rows []ExitCodeDoc) string {
	var b strings.Builder
	b.WriteString("Exit codes:\n")
	for _, e := range rows {
		for _, l := range fill(fmt.Sprintf("  %-6s ", e.Code), "         ", e.Meaning, HelpWidth) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
