package cmdutil

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
)

// Source says where port views came from, for a JSON document's top level.
type Source struct {
	Demo bool
	Via  string // the MAD transport, for fabric views
	// Incomplete: what of the host was not read (the JSON's "incomplete").
	Incomplete []Incomplete
}

// AddressFlags are a command's fabric address flags: --lid LIDS or --dr PATH, and
// --port. Commands that read a port either locally (DEV PORT) or over the fabric
// embed them; Set reports whether the fabric was asked for.
type AddressFlags struct {
	LID  string
	DR   string
	GUID string
	Port string

	guid check.GUID // GUID parsed by Selectors
}

// Register adds --lid, --dr and --port to c, with the infiniband-diags' -L and -D
// (smpquery(8): -L the address is a LID, -D a directed route; here the address follows
// the flag: -L 4, -D 0,1,3).
func (a *AddressFlags) Register(c *cobra.Command) {
	fl := c.Flags()
	// A flag given twice would keep only its last value (pflag's string flags): --lid
	// adds to its list (--lid 6 --lid 7 is --lid 6,7), the others refuse a second value.
	fl.VarP(&addrValue{p: &a.LID, list: true}, "lid", "L", "read over MADs the node at `LIDS`: a LID, a list or a range (3, 3,5,9, 3-40)")
	fl.VarP(&addrValue{p: &a.DR}, "dr", "D", "read over MADs the node at directed route `PATH` (0,1,3: out of local port 1, then port 3)")
	fl.Var(&addrValue{p: &a.Port}, "port", "with --lid/--dr: port `P` of that node, or all (default: the port the address reaches)")
	c.MarkFlagsMutuallyExclusive("lid", "dr")
}

// RegisterFor is Register with completion of --lid from the fabric in use (the
// host's own ports: completion never sends MADs), --dr and --port with nothing
// file-like.
//
// It also adds --guid (-G): RenderFabricPorts then finds the GUID by a sweep.
func (a *AddressFlags) RegisterFor(c *cobra.Command, f *Factory) {
	a.Register(c)
	c.Flags().Lookup("port").Usage = "with --lid/--dr/--guid: port `P` of that node, or all (default: the port the address reaches)"
	c.Flags().VarP(&addrValue{p: &a.GUID}, "guid", "G", "read over MADs the port (port GUID) or node (node GUID) `GUID`, found by a sweep of the fabric (the diags' -G asks the SA)")
	c.MarkFlagsMutuallyExclusive("lid", "dr", "guid")
	_ = c.RegisterFlagCompletionFunc("guid", cobra.NoFileCompletions)
	_ = c.RegisterFlagCompletionFunc("lid", completeLIDs(f))
	_ = c.RegisterFlagCompletionFunc("dr", cobra.NoFileCompletions)
	_ = c.RegisterFlagCompletionFunc("port", cobra.FixedCompletions([]cobra.Completion{"all"}, cobra.ShellCompDirectiveNoFileComp))
}

// addrValue is an address flag's value: a list flag adds a second value to its list,
// any other refuses it (exit 2) rather than keep only the last.
type addrValue struct {
	p    *string
	list bool
	set  bool
}

func (v *addrValue) Set(s string) error {
	switch {
	case !v.set:
		*v.p = s
	case v.list:
		*v.p += "," + s
	default:
		return fmt.Errorf("given twice (%q, then %q): it takes one value", *v.p, s)
	}
	v.set = true
	return nil
}

func (v *addrValue) String() string { return *v.p }
func (v *addrValue) Type() string   { return "string" }

// Set reports whether a fabric address was given.
func (a *AddressFlags) Set() bool { return a.LID != "" || a.DR != "" || a.GUID != "" }

// given names the address flags given ("--guid", "--lid and --dr").
func (a *AddressFlags) given() string {
	var names []string
	for _, f := range []struct{ name, v string }{{"--lid", a.LID}, {"--dr", a.DR}, {"--guid", a.GUID}} {
		if f.v != "" {
			names = append(names, f.name)
		}
	}
	return strings.Join(names, " and ")
}

// Selectors checks the flags against the command's positional args (DEV PORT
// and an address are exclusive) and returns one selector per node.
func (a *AddressFlags) Selectors(args []string) ([]query.FabricSelector, error) {
	if !a.Set() {
		if a.Port != "" {
			return nil, &query.UsageError{Msg: "--port needs --lid or --dr (or --guid where the command has it; a local port is given as DEV PORT)"}
		}
		if len(args) > 0 {
			if hint := addressHint(args[0]); hint != "" {
				return nil, &query.UsageError{Msg: fmt.Sprintf("%q is not a local device: %s", args[0], hint)}
			}
		}
		return nil, nil
	}
	if len(args) > 0 {
		return nil, &query.UsageError{Msg: fmt.Sprintf("unexpected %q with %s: a port is given either as DEV PORT (local) or with --lid/--dr (over the fabric), not both", strings.Join(args, " "), a.given())}
	}
	base := query.FabricSelector{}
	switch p := a.Port; {
	case p == "":
	case p == "all":
		base.AllPorts = true
	default:
		n, err := query.ParsePortNum(p)
		if err != nil {
			return nil, &query.UsageError{Msg: fmt.Sprintf("invalid --port %q (accepted: a port number 0-255, or all)", p)}
		}
		base.Port, base.HasPort = n, true
	}
	if a.GUID != "" {
		g, err := check.ParseGUID(a.GUID)
		if err != nil {
			return nil, &query.UsageError{Msg: fmt.Sprintf("invalid --guid %q (accepted: %s)", a.GUID, check.GUIDForms)}
		}
		a.guid = g
		return []query.FabricSelector{base}, nil
	}
	if a.DR != "" {
		addr, err := mad.ParseDRPath(a.DR)
		if err != nil {
			return nil, &query.UsageError{Msg: fmt.Sprintf("invalid --dr: %v", err)}
		}
		base.Addr = addr
		return []query.FabricSelector{base}, nil
	}
	lids, err := ParseLIDFlag(a.LID)
	if err != nil {
		return nil, err
	}
	sels := make([]query.FabricSelector, len(lids))
	for i, l := range lids {
		sels[i] = base
		sels[i].Addr = mad.LIDAddress(l)
	}
	return sels, nil
}

// addressHint names the flag for a fabric address typed where a local device goes
// (`ibkey --ibsim pkeys 4`, the diags' `smpquery pkeys 4`), or "".
func addressHint(arg string) string {
	switch {
	case arg == "":
	case strings.Trim(arg, "0123456789") == "":
		return fmt.Sprintf("to read the port with LID %s over MADs use --lid %s (-L %s)", arg, arg, arg)
	case strings.Trim(arg, "0123456789,") == "" && strings.HasPrefix(arg, "0,"):
		return fmt.Sprintf("to read the node at directed route %s use --dr %s (-D %s)", arg, arg, arg)
	case strings.HasPrefix(arg, "0x") || strings.Count(arg, ":") == 3:
		if _, err := check.ParseLID(arg); err == nil && len(arg) <= 6 {
			return fmt.Sprintf("to read the port with LID %s over MADs use --lid %s (-L %s)", arg, arg, arg)
		}
		if _, err := check.ParseGUID(arg); err == nil {
			return fmt.Sprintf("to read the port with GUID %s over MADs use --guid %s (-G %s)", arg, arg, arg)
		}
	}
	return ""
}

// ParseLIDFlag reads --lid's value (query.ParseLIDList, the one LID list parser); a
// bad one is bad input naming the flag: invalid --lid "5-3": range 5-3 ends below its
// start (accepted: ...).
func ParseLIDFlag(s string) ([]uint16, error) {
	lids, err := query.ParseLIDList(s)
	if err != nil {
		return nil, &query.UsageError{Msg: "invalid --lid " + err.Error(), Err: err}
	}
	return lids, nil
}

// RenderFabricPorts reads the ports the address flags a select (sels, from
// a.Selectors) over MADs, attributes and P_Key tables, and renders the ports that
// answered. With --guid it first sweeps the fabric (no tables) to find the GUID.
// render gets the read's *query.PartialError when some addresses were not read (no
// answer, or the port asked for is not on that node): it hands it to HostNotRead,
// each named on stderr and in the JSON's incomplete as unread-node, exit 4. When none
// was read, the error is exit 3, returned alone; when ctx ended, after the ports read.
func RenderFabricPorts(ctx context.Context, m *MADFlags, n *Notices, a *AddressFlags, sels []query.FabricSelector, render func([]*query.PortView, Source, error) error) error {
	return m.With(ctx, func(ctx context.Context, fab *query.Fabric) error {
		label := ""
		if a.GUID != "" {
			sel, err := fab.FindGUID(ctx, a.guid, sels[0])
			if err != nil {
				return err
			}
			sels = []query.FabricSelector{sel}
			label = fmt.Sprintf("fabric: GUID %s is %s via %s", a.guid, sel, fab.Via)
		}
		views, err := fab.LoadMany(ctx, sels, query.LoadOptions{Tables: true})
		if len(views) == 0 {
			return err
		}
		var partial *query.PartialError
		var after error
		if err != nil && !errors.As(err, &partial) {
			err, after = nil, err
		}
		n.Label(cmp.Or(label, FabricLabel(sels, fab.Via)))
		return cmp.Or(render(views, Source{Via: fab.Via}, err), after)
	})
}

// FabricLabel says, for stderr, which addresses were read over the fabric and how:
// several LIDs by the lowest and highest (--lid 8-10,3: "4 LIDs (lid 3 .. lid 10)",
// not "lid 8 .. lid 3").
func FabricLabel(sels []query.FabricSelector, via string) string {
	what := sels[0].String()
	if len(sels) > 1 {
		cmpLID := func(a, b query.FabricSelector) int { return cmp.Compare(a.Addr.LID, b.Addr.LID) }
		what = fmt.Sprintf("%d LIDs (%s .. %s)", len(sels), slices.MinFunc(sels, cmpLID).Addr, slices.MaxFunc(sels, cmpLID).Addr)
	}
	return fmt.Sprintf("fabric: %s via %s", what, via)
}
