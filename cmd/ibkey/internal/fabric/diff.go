package fabric

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// DiffOptions are `ibkey fabric diff`'s inputs.
type DiffOptions struct {
	cmdutil.Deps
	// Source sweeps B now when it is not given (the MAD flags and --timeout).
	Source *cmdutil.FabricSweep
	A, B   string
}

// NewCmdDiff is `ibkey fabric diff A [B]`; runF replaces the run in tests.
func NewCmdDiff(f *cmdutil.Factory, runF func(*DiffOptions) error) *cobra.Command {
	o := &DiffOptions{}
	c := &cobra.Command{
		Use:   "diff A.json [B.json]",
		Short: "What changed between two sweeps: nodes, links, ports, P_Keys",
		Long: `Compare two saved sweeps (ibkey fabric discover -o json), or a saved sweep with one run
now when B is not given: nodes added or gone, links added or gone, port changes (state,
physical state, LID, LMC, port GUID, GID prefix, enforcement), P_Key entries added,
removed or moved to another index (a QP holding the old index then uses another entry),
tables resized or no longer readable, memberships changed. Nodes are matched by node
GUID, ports by number; P_Key violation counters, the SM's LID and the sweeps' own times
are not compared. With --node-name-map, both sides are named from the map, so the
NodeDescription of a node the map names is not compared.

One line per change: KIND: MESSAGE, in node GUID and port order; kinds: node-added,
node-removed, node-changed, link-added, link-removed, port-changed, pkey-added,
pkey-removed, pkey-moved, pkey-membership (a key replaced by its partition's other
membership, full <-> limited: one change), table-readable, table-resized. Ports are
named by NodeDescription, with the node GUID where several nodes (on either side)
share one.

A partial sweep is named on stderr: what it did not read is not compared (a node or
link it lacks is not reported gone or new), so changes there are not seen.

JSON (-o json), schema schemas/fabric-diff.schema.json: {"schema_version":1,"a","b","same",
"changes":[{"kind","ports":[{"node_guid","port","node_desc"}],
"field"?,"before"?,"after"?,"pkeys"?,"message"}],"incomplete"?:[{"kind","message"}]}
(incomplete: what a partial side did not read, so was not compared, each message
starting with that side's name; present whenever a side is partial: on exit 4, and
on exit 1 beside the changes found; kind partial-sweep, unread-node or
unread-table).`,
		Example: `  ibkey fabric diff monday.json tuesday.json
  ibkey fabric diff fabric.json --ibsim
  ibkey fabric diff a.json b.json -o json`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: cobra.FixedCompletions([]string{"json"}, cobra.ShellCompDirectiveFilterFileExt),
		RunE: cmdutil.RunE(f, o, &o.Deps, func(_ *cobra.Command, args []string) error {
			o.A, o.B = args[0], ""
			if len(args) == 2 {
				o.B = args[1]
			}
			return nil
		}, runF, runDiff),
	}
	o.Source = &cmdutil.FabricSweep{MAD: cmdutil.AddMADFlags(c, f)}
	o.Source.MAD.NoMADs = func() string { // checked before RunE reads the arguments
		if len(c.Flags().Args()) < 2 {
			return ""
		}
		return "'ibkey fabric diff A B' compares two saved sweeps (give A alone to sweep B now)"
	}
	o.Source.AddTimeoutFlag(c, "with one file: stop sweeping this long after the command started and compare what was read (a partial sweep, exit 4)")
	cmdutil.AddNodeNameMapFlag(c, &o.Source.NodeNameMap)
	cmdutil.SetExits(c,
		cmdutil.ExitMeaning{Code: cmdutil.ExitOK, Meaning: "no differences (as diff(1))"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitNo, Meaning: "differences, also when a side is a partial sweep: what was compared is definite (a table read on one side only, table-readable, is no difference)"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitUsage, Meaning: "bad usage or a file that is not a fabric file (named)"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitEnv, Meaning: "(B swept now) no fabric access"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitIncomplete, Meaning: "a partial sweep on either side (a saved one, or B swept now) and no difference in what both read"},
	)
	return c
}

func runDiff(o *DiffOptions) error {
	names, err := cmdutil.ReadNodeNameMap(o.Source.NodeNameMap)
	if err != nil {
		return err
	}
	// The files are arguments: their errors name the command, not --fabric-file.
	a, err := cmdutil.ReadFabricFileAs(o.A, "fabric diff")
	if err != nil {
		return err
	}
	// A side that lacks something (fabric.NotRead, tables included: diff compares
	// them) is named on stderr and the result is exit 4: what it did not read is not
	// compared. A sweep run now is named by PartialResult.
	partial := func(f *fabric.Fabric, name string) bool {
		gaps := fabric.NotCheckedSummary(f.NotRead(true))
		if gaps != "" {
			o.Notices.Warn(fmt.Sprintf("%s is a partial sweep (%s): what it did not read is not compared, so changes there are not seen", name, gaps))
		}
		return gaps != ""
	}
	// definite: a change in what both sides read, which a partial sweep does not
	// make uncertain (exit 1 wins over 4, cmdutil.ExitCodes). A table read on one
	// side only says what was read, not what changed.
	definite := false
	incomplete := func(err error, partial bool) error {
		switch {
		case definite && cmdutil.ExitCode(err) == cmdutil.ExitIncomplete:
			return cmdutil.Exit(cmdutil.ExitNo)
		case partial && !definite && (err == nil || cmdutil.Reported(err)):
			return cmdutil.Exit(cmdutil.ExitIncomplete)
		}
		return err
	}
	compare := func(b *fabric.Fabric, bName string) error {
		n := o.Notices
		// Both sides get the map's names, so a mapped node is not "changed" by it.
		names.Rename(a)
		names.Rename(b)
		changes := fabric.Diff(a, b)
		for _, c := range changes {
			definite = definite || c.Rule != fabric.ChangeTableRead
		}
		if o.Format == cmdutil.FormatJSON {
			js := make([]changeJSON, len(changes))
			for i, c := range changes {
				js[i] = changeJSON{Kind: c.Rule, Ports: c.Ports, Field: c.Field, Before: c.Before, After: c.After, Message: c.Message}
				for _, k := range c.PKeys {
					js[i].PKeys = append(js[i].PKeys, k.String())
				}
			}
			// Incomplete: what either side did not read, so was not compared (exit
			// 4, or 1 beside a definite change), each named by its side.
			var gaps []cmdutil.Incomplete
			for _, side := range []struct {
				f    *fabric.Fabric
				name string
			}{{a, o.A}, {b, bName}} {
				for _, g := range incompleteItems(side.f.NotRead(true)) {
					gaps = append(gaps, cmdutil.Incomplete{Kind: g.Kind, Message: side.name + ": " + g.Message})
				}
			}
			if err := cmdutil.WriteJSON(o.IO.Out, struct {
				Schema     cmdutil.SchemaVersion `json:"schema_version"`
				A          string                `json:"a"`
				B          string                `json:"b"`
				Same       bool                  `json:"same"`
				Changes    []changeJSON          `json:"changes"`
				Incomplete []cmdutil.Incomplete  `json:"incomplete,omitempty"`
			}{cmdutil.SchemaVersion{}, o.A, bName, len(changes) == 0, js, gaps}); err != nil {
				return err
			}
		} else {
			var sb strings.Builder
			for _, c := range changes {
				fmt.Fprintf(&sb, "%s: %s\n", c.Rule, c.Message)
			}
			io.WriteString(o.IO.Out, sb.String())
		}
		if len(changes) == 0 {
			n.Note(fmt.Sprintf("no differences between %s and %s", o.A, bName))
			return nil
		}
		n.Note(fmt.Sprintf("%s between %s and %s", textsafe.Plural(len(changes), "change", "changes"), o.A, bName))
		return cmdutil.Exit(cmdutil.ExitNo)
	}
	if o.B != "" {
		b, err := cmdutil.ReadFabricFileAs(o.B, "fabric diff")
		if err != nil {
			return err
		}
		err = compare(b, o.B)
		pa, pb := partial(a, o.A), partial(b, o.B)
		return incomplete(err, pa || pb)
	}
	return o.Source.Sweep(o.Ctx, o.Notices, false, func(b *fabric.Fabric) error {
		err := compare(b, "the sweep now")
		return incomplete(cmdutil.PartialResult(o.Notices, b, true, incomplete(err, partial(a, o.A))), false)
	})
}

// changeJSON is one change in `fabric diff -o json` (schemas/fabric-diff.schema.json):
// a finding of fabric.Diff, its rule written as "kind".
type changeJSON struct {
	Kind   string              `json:"kind"`
	Ports  []check.FindingPort `json:"ports"`
	Field  string              `json:"field,omitempty"`
	Before string              `json:"before,omitempty"`
	After  string              `json:"after,omitempty"`
	// PKeys: the keys of a pkey-* change (a pkey-moved's before and after are
	// indexes, so only here does JSON name the key that moved).
	PKeys   []string `json:"pkeys,omitempty"`
	Message string   `json:"message"`
}
