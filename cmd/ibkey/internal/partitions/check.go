package partitions

import (
	"bufio"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/jsondoc"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// CheckOptions are `ibkey partitions check`'s inputs.
type CheckOptions struct {
	// Deps.ColorOut: the rejection headline in red (in a table).
	cmdutil.Deps
	OpenSM cmdutil.OpenSMFlags
	File   string
	Strict bool
}

// NewCmdCheck is `ibkey partitions check FILE`; runF replaces the run in tests.
func NewCmdCheck(f *cmdutil.Factory, runF func(*CheckOptions) error) *cobra.Command {
	o := &CheckOptions{}
	c := &cobra.Command{
		Use:   "check [FILE]",
		Short: "What OpenSM rejects in a partitions.conf, or accepts silently",
		Long: `Lint an OpenSM partitions.conf. Each finding is printed like a compiler message:
FILE:LINE:COL: SEVERITY: MESSAGE [RULE], then the fix.

Errors are what OpenSM rejects. Any error makes OpenSM drop the WHOLE file and apply
Default=0x7fff, ipoib : ALL=full instead (all isolation lost): the first finding
then says so.
Warnings are what OpenSM accepts but probably not as meant: a key reused under
another name (merged; one partition split over definitions with the same name and
key, as OpenSM's partition-config.txt shows, is fine), two names for one key, a
comment after an mgid= value (OpenSM parses it as group flags), a partition where every member is limited (nobody can talk in
it), a port listed twice with different memberships, more partitions than a table holds
(--table-size), 'both' without -W (--allow-both), no Default line, a Default line
without ipoib (OpenSM then makes no IPoIB broadcast group for it and every host's ib0
stays without carrier), the SM's own port a limited member of the default partition,
keys OpenSM generates, a partition without a member (OpenSM deletes it), flag values
OpenSM logs or ignores (mtu=4x, Q_Key=, indx0=no), sl= without QoS, a multicast group
asked for again with other values, a GUID written with '-', GUID= or defmember=
with nothing after '=' (full), an ALL or ALL_CAS item after port items it overrides.

When what OpenSM does with the file cannot be predicted (it reads bytes of its line
buffer no line of the file wrote, or crashes), the first finding says so
[opensm-uncertain], stderr says so, and the exit is 4.

JSON (-o json), schema schemas/partitions-check.schema.json: {"schema_version":1,"file","rejected","uncertain"?,"findings":[{"severity","file","line",
"column","rule","message","action"}],"errors","warnings"}.`,
		Example: `  ibkey partitions check /etc/opensm/partitions.conf
  ibkey partitions check partitions.conf --allow-both --table-size 64 --strict
  ibkey partitions check partitions.conf -o json`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completePartitionsFile(false),
		RunE: cmdutil.RunE(f, o, &o.Deps, func(_ *cobra.Command, args []string) (err error) {
			o.File, err = o.OpenSM.FileArg("partitions check", args)
			return err
		}, runF, runCheck),
	}
	o.OpenSM.AddFlags(c)
	o.OpenSM.AddQoSFlag(c)
	o.OpenSM.AddConfFlag(c, ", qos --qos")
	c.Flags().BoolVar(&o.Strict, "strict", false, "exit 1 on warnings too")
	cmdutil.SetExits(c,
		cmdutil.ExitMeaning{Code: cmdutil.ExitOK, Meaning: "no errors (warnings allowed unless --strict)"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitNo, Meaning: "errors (or warnings with --strict)"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitUsage, Meaning: "bad usage or a file that cannot be read"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitIncomplete, Meaning: "OpenSM's outcome cannot be predicted"},
	)
	return c
}

func runCheck(o *CheckOptions) error {
	p, err := o.OpenSM.LoadFile(&o.File, &o.Deps)
	if err != nil {
		return err
	}
	c := p.Config
	// Each finding is made (its words formatted) only as it is written: a file of a
	// million definitions has millions (issue 28 item 6).
	findings := partconf.LintFindings(c, partconf.LintOptions{AllowBoth: o.OpenSM.AllowBoth, TableSize: o.OpenSM.TableSize})
	errs, warns := findings.Errors(), findings.Warnings()
	if o.Format == cmdutil.FormatJSON {
		if err := writeCheckJSON(o.IO.Out, c, findings, errs, warns); err != nil {
			return err
		}
	} else {
		if err := writeFindings(o.IO.Out, findings, o.Format == cmdutil.FormatTable && o.ColorOut); err != nil {
			return err
		}
		fmt.Fprintln(o.IO.Out, checkSummary(p, errs, warns))
	}
	if err := cmdutil.Uncertain(o.IO.ErrOut, c, "the findings above are"); err != nil {
		return err
	}
	if errs > 0 || (o.Strict && warns > 0) {
		return cmdutil.Exit(cmdutil.ExitNo)
	}
	return nil
}

// findingJSON is one finding of `partitions check -o json` (schema
// schemas/partitions-check.schema.json): {"schema_version", "file", "rejected",
// "uncertain"?, "findings": [findingJSON], "errors", "warnings"}.
type findingJSON struct {
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Rule     string `json:"rule"`
	Message  string `json:"message"`
	Action   string `json:"action"`
}

// writeCheckJSON writes the document, the findings one at a time (jsondoc): a file of a
// million definitions has millions of them.
func writeCheckJSON(out io.Writer, c *partconf.Config, findings *partconf.Findings, errs, warns int) error {
	d := jsondoc.New(out)
	d.Field("schema_version", cmdutil.SchemaVersion{})
	d.Field("file", c.File)
	d.Field("rejected", c.Rejected)
	if c.Uncertain != "" {
		d.Field("uncertain", c.Uncertain)
	}
	d.Array("findings", findings.Len(), func(i int) any {
		fd := findings.At(i)
		return findingJSON{fd.Severity.String(), fd.Pos.File, fd.Pos.Line, fd.Pos.Col, fd.Rule, fd.Message, fd.Action}
	})
	d.Field("errors", errs)
	d.Field("warnings", warns)
	return d.Close()
}

// writeFindings prints compiler-style lines; the rejection headline in red on a
// terminal. The lines go through one buffer (not one write each, not one string of
// all of them).
func writeFindings(w io.Writer, findings *partconf.Findings, color bool) error {
	b := bufio.NewWriterSize(w, 64<<10)
	for fd := range findings.All() {
		line := fmt.Sprintf("%s: %s: %s [%s]", fd.Pos, fd.Severity, fd.Message, fd.Rule)
		if fd.Rule == "file-rejected" || fd.Rule == "opensm-uncertain" {
			line = cmdutil.Paint(line, "1", color)
		}
		b.WriteString(line)
		b.WriteByte('\n')
		if fd.Action != "" {
			b.WriteString("  fix: ")
			b.WriteString(fd.Action)
			b.WriteByte('\n')
		}
	}
	return b.Flush()
}

func checkSummary(p *query.Partitions, errs, warns int) string {
	c := p.Config
	size := fmt.Sprintf("%s, %s", textsafe.Plural(len(c.Partitions), "partition", "partitions"), textsafe.Plural(len(p.FileGUIDs), "port GUID", "port GUIDs"))
	switch {
	case c.Uncertain != "":
		return fmt.Sprintf("%s: %s, %s: WHAT OPENSM DOES WITH THIS FILE CANNOT BE PREDICTED", c.File, textsafe.Plural(errs, "error", "errors"), textsafe.Plural(warns, "warning", "warnings"))
	case c.Rejected:
		return fmt.Sprintf("%s: %s, %s: OPENSM REJECTS THIS FILE and applies Default=0x7fff, ipoib : ALL=full", c.File, textsafe.Plural(errs, "error", "errors"), textsafe.Plural(warns, "warning", "warnings"))
	case errs+warns == 0:
		return fmt.Sprintf("%s: no problems found (%s)", c.File, size)
	}
	return fmt.Sprintf("%s: %s, %s (%s)", c.File, textsafe.Plural(errs, "error", "errors"), textsafe.Plural(warns, "warning", "warnings"), size)
}
