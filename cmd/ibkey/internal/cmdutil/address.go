package cmdutil

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
)

// Source says where port views came from, for a JSON document's top level.
type Source struct {
	Demo bool
	Via  string // the MAD transport, for fabric views
}

// AddressFlags are a command's fabric address flags: --lid LIDS or --dr PATH, and
// --port. Commands that read a port either locally (DEV PORT) or over the fabric
// embed them; Set reports whether the fabric was asked for.
type AddressFlags struct {
	LID  string
	DR   string
	Port string
}

// Register adds --lid, --dr and --port to c.
func (a *AddressFlags) Register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&a.LID, "lid", "", "read over MADs the node at `LIDS`: a LID, a list or a range (3, 3,5,9, 3-40)")
	fl.StringVar(&a.DR, "dr", "", "read over MADs the node at directed route `PATH` (0,1,3: out of local port 1, then port 3)")
	fl.StringVar(&a.Port, "port", "", "with --lid/--dr: port `P` of that node, or all (default: the port the address reaches)")
	c.MarkFlagsMutuallyExclusive("lid", "dr")
}

// RegisterFor is Register with completion of --lid from the fabric in use (the
// host's own ports: completion never sends MADs), --dr and --port with nothing
// file-like.
func (a *AddressFlags) RegisterFor(c *cobra.Command, f *Factory) {
	a.Register(c)
	_ = c.RegisterFlagCompletionFunc("lid", CompleteLIDs(f, nil))
	_ = c.RegisterFlagCompletionFunc("dr", cobra.NoFileCompletions)
	_ = c.RegisterFlagCompletionFunc("port", cobra.FixedCompletions([]cobra.Completion{"all"}, cobra.ShellCompDirectiveNoFileComp))
}

// Set reports whether a fabric address was given.
func (a *AddressFlags) Set() bool { return a.LID != "" || a.DR != "" }

// Selectors checks the flags against the command's positional args (DEV PORT
// and an address are exclusive) and returns one selector per node.
func (a *AddressFlags) Selectors(args []string) ([]query.FabricSelector, error) {
	if !a.Set() {
		if a.Port != "" {
			return nil, &query.UsageError{Msg: "--port needs --lid or --dr (a local port is given as DEV PORT)"}
		}
		return nil, nil
	}
	if len(args) > 0 {
		return nil, &query.UsageError{Msg: fmt.Sprintf("unexpected %q: a port is given either as DEV PORT (local) or with --lid/--dr (over the fabric), not both", strings.Join(args, " "))}
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
	if a.DR != "" {
		addr, err := mad.ParseDRPath(a.DR)
		if err != nil {
			return nil, &query.UsageError{Msg: fmt.Sprintf("invalid --dr: %v", err)}
		}
		base.Addr = addr
		return []query.FabricSelector{base}, nil
	}
	lids, err := ParseLIDList(a.LID)
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

// maxLIDList bounds a LID list: the unicast LID space.
const maxLIDList = 0xbfff

// ParseLIDList reads "3", "3,5,9", "3-40" or a mix ("1,3-5"), decimal or 0x hex.
// Duplicates are kept once, in first-seen order.
func ParseLIDList(s string) ([]uint16, error) {
	bad := func(why string) error {
		return &query.UsageError{Msg: fmt.Sprintf("invalid --lid %q: %s (accepted: a LID 1-49151, a list 3,5,9 or a range 3-40)", s, why)}
	}
	var out []uint16
	seen := map[uint16]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := mad.ParseLID(lo)
		if err != nil {
			return nil, bad(fmt.Sprintf("%q is not a unicast LID", lo))
		}
		b := a
		if isRange {
			if b, err = mad.ParseLID(hi); err != nil {
				return nil, bad(fmt.Sprintf("%q is not a unicast LID", hi))
			}
			if b < a {
				return nil, bad(fmt.Sprintf("range %s ends below its start", part))
			}
		}
		for l := int(a); l <= int(b); l++ {
			if !seen[uint16(l)] {
				seen[uint16(l)] = true
				out = append(out, uint16(l))
			}
		}
		if len(out) > maxLIDList {
			return nil, bad("more than " + strconv.Itoa(maxLIDList) + " LIDs")
		}
	}
	return out, nil
}

// RenderFabricPorts reads the selected ports' attributes and P_Key tables over MADs
// and renders the ports that answered. When some addresses failed, their error is
// returned after that output (so what did answer is still shown); when none
// answered, it is returned alone.
func RenderFabricPorts(ctx context.Context, m *MADFlags, n *Notices, sels []query.FabricSelector, render func([]*query.PortView, Source) error) error {
	return m.With(ctx, func(ctx context.Context, fab *query.Fabric) error {
		views, err := fab.LoadMany(ctx, sels, query.LoadOptions{Tables: true})
		if len(views) == 0 {
			return err
		}
		fabricLabel(n, fab, sels)
		if rerr := render(views, Source{Via: fab.Via}); rerr != nil {
			return rerr
		}
		return err
	})
}

// fabricLabel announces where fabric data came from, on stderr.
func fabricLabel(n *Notices, f *query.Fabric, sels []query.FabricSelector) {
	what := sels[0].String()
	if len(sels) > 1 {
		what = fmt.Sprintf("%d LIDs (%s .. %s)", len(sels), sels[0].Addr, sels[len(sels)-1].Addr)
	}
	n.Label(fmt.Sprintf("fabric: %s via %s", what, f.Via))
}
