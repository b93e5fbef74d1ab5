package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
)

// FabricFlags select how ibkey sends MADs when a command is given a fabric address
// (--lid, --dr): the ibsim simulator, or the kernel's umad interface on a local port.
type FabricFlags struct {
	Ibsim      string        // --ibsim[=BASE]; env IBKEY_IBSIM
	SimNode    string        // --sim-node
	CA         string        // --ca
	CAPort     int           // --ca-port
	MADTimeout time.Duration // --mad-timeout, per attempt
	MADRetries int           // --mad-retries
	// window is the transport's MADs in flight; 0 keeps its default. Sweeps set it
	// (sweepWindowIbsim).
	window int

	// Dependencies, replaced in tests.
	dialIbsim func(ctx context.Context, o mad.IbsimOptions) (mad.Transport, string, error)
	openUmad  func(dev string, port int, o mad.UmadOptions) (mad.Transport, error)
	umadDir   string // /dev/infiniband unless set
}

// ibsimDefault is --ibsim's value when given without one: $IBSIM_SOCKNAME, else "sim".
const ibsimDefault = "sim"

func (f *FabricFlags) register(pf *pflag.FlagSet) {
	pf.StringVar(&f.Ibsim, "ibsim", "", "send MADs through the ibsim simulator with socket base name `BASE` (--ibsim alone: $IBSIM_SOCKNAME, else sim; env IBKEY_IBSIM)")
	pf.Lookup("ibsim").NoOptDefVal = ibsimDefault
	pf.StringVar(&f.SimNode, "sim-node", "", "attach to the simulator at node `NAME` (default: the first node of its topology)")
	pf.StringVar(&f.CA, "ca", "", "send MADs from local device `DEV` (default: the first ACTIVE InfiniBand port)")
	pf.IntVar(&f.CAPort, "ca-port", 0, "send MADs from port `N` of --ca")
	pf.DurationVar(&f.MADTimeout, "mad-timeout", time.Second, "wait this long for each MAD's reply")
	pf.IntVar(&f.MADRetries, "mad-retries", 3, "send an unanswered MAD again this many times")
}

// ibsimBase returns the simulator's socket base name, or "" when umad is selected.
func (g *Globals) ibsimBase() string {
	base := g.Fabric.Ibsim
	if base == "" {
		base = g.Getenv("IBKEY_IBSIM")
		if base == "1" {
			base = ibsimDefault
		}
	}
	if base == ibsimDefault {
		if s := g.Getenv("IBSIM_SOCKNAME"); s != "" {
			base = s
		}
	}
	return base
}

func (g *Globals) madOptions() (mad.Options, error) {
	f := &g.Fabric
	if f.MADTimeout <= 0 {
		return mad.Options{}, &query.UsageError{Msg: fmt.Sprintf("invalid --mad-timeout %v (accepted: a positive duration, e.g. 500ms)", f.MADTimeout)}
	}
	if f.MADRetries < 0 || f.MADRetries > 100 {
		return mad.Options{}, &query.UsageError{Msg: fmt.Sprintf("invalid --mad-retries %d (accepted: 0-100)", f.MADRetries)}
	}
	retries := f.MADRetries
	if retries == 0 {
		retries = -1 // mad.Options: 0 means the default, negative means none
	}
	return mad.Options{Timeout: f.MADTimeout, Retries: retries, Window: f.window}, nil
}

// OpenFabric opens the transport the flags select. The caller must Close f.T
// (ibsim has 10 client slots and never frees the slot of a client that exits
// without disconnecting); WithFabric does that.
func (g *Globals) OpenFabric(ctx context.Context) (*query.Fabric, error) {
	f := &g.Fabric
	opts, err := g.madOptions()
	if err != nil {
		return nil, err
	}
	if base := g.ibsimBase(); base != "" {
		if f.CA != "" || f.CAPort != 0 {
			return nil, &query.UsageError{Msg: "--ca and --ca-port choose a local umad port; they do not apply with --ibsim (use --sim-node NAME to choose where to attach)"}
		}
		dial := f.dialIbsim
		if dial == nil {
			dial = dialIbsim
		}
		t, node, err := dial(ctx, mad.IbsimOptions{SockName: base, Node: f.SimNode, Options: opts})
		if err != nil {
			return nil, &query.EnvError{Msg: err.Error()}
		}
		return &query.Fabric{T: t, Via: fmt.Sprintf("ibsim %q at %s", base, node)}, nil
	}
	if f.SimNode != "" {
		return nil, &query.UsageError{Msg: "--sim-node chooses where to attach to the simulator: it needs --ibsim"}
	}
	if g.Demo || g.Getenv("IBKEY_DEMO") == "1" {
		return nil, &query.UsageError{Msg: "the demo host has no fabric to query: use --ibsim with a running simulator (see 'ibkey pkeys --help')"}
	}
	dev, port, err := g.umadPort()
	if err != nil {
		return nil, err
	}
	open := f.openUmad
	if open == nil {
		open = func(dev string, port int, o mad.UmadOptions) (mad.Transport, error) {
			return mad.OpenUmad(dev, port, o)
		}
	}
	t, err := open(dev, port, mad.UmadOptions{SysfsRoot: g.Host().Sys.Root, DevDir: f.umadDir, Options: opts})
	if err != nil {
		return nil, &query.EnvError{Msg: umadErrorText(err)}
	}
	return &query.Fabric{T: t, Via: fmt.Sprintf("%s/%d", dev, port)}, nil
}

func dialIbsim(ctx context.Context, o mad.IbsimOptions) (mad.Transport, string, error) {
	t, err := mad.DialIbsim(ctx, o)
	if err != nil {
		return nil, "", err
	}
	return t, t.Node, nil
}

// umadErrorText adds what to do to umad's errors.
func umadErrorText(err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, os.ErrPermission):
		return msg
	case strings.Contains(msg, "no umad device"), strings.Contains(msg, "infiniband_mad"):
		return msg + "; without InfiniBand hardware, query a simulated fabric with --ibsim"
	}
	return msg
}

// umadPort is --ca/--ca-port, or the first ACTIVE InfiniBand port of the host.
func (g *Globals) umadPort() (string, int, error) {
	f := &g.Fabric
	if f.CA != "" {
		port := f.CAPort
		if port == 0 {
			port = 1
		}
		return f.CA, port, nil
	}
	if f.CAPort != 0 {
		return "", 0, &query.UsageError{Msg: "--ca-port needs --ca DEV"}
	}
	views, err := g.Host().Load(query.Selector{}, query.LoadOptions{})
	if err != nil {
		return "", 0, &query.EnvError{Msg: fmt.Sprintf("no local port to send MADs from: %v; to query a simulated fabric use --ibsim", err)}
	}
	var seen []string
	for _, v := range views {
		if v.LinkLayer() == "InfiniBand" && v.Port.State.Num == ibverbs.StateActive {
			return v.Port.Device, v.Port.Num, nil
		}
		seen = append(seen, fmt.Sprintf("%s %s %s", v.Ref(), v.LinkLayer(), v.Port.State.Name))
	}
	return "", 0, &query.EnvError{Msg: fmt.Sprintf("no ACTIVE InfiniBand port to send MADs from (ports: %s); choose one with --ca DEV --ca-port N", strings.Join(seen, ", "))}
}

// WithFabric opens the selected transport, runs fn, and closes the transport however
// fn ends, also on a signal (main's context, cancelled, cancels fn's), so an ibsim
// client slot is always given back.
func (g *Globals) WithFabric(fn func(ctx context.Context, f *query.Fabric) error) (err error) {
	ctx := g.context()
	f, err := g.OpenFabric(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.T.Close(); cerr != nil && err == nil {
			g.notices().warn(fmt.Sprintf("closing %s: %v", f.Via, cerr))
		}
	}()
	return fn(ctx, f)
}

// AddressFlags are a command's fabric address flags: --lid LIDS or --dr PATH, and
// --port. Commands that read a port either locally (DEV PORT) or over the fabric
// embed them; Set reports whether the fabric was asked for.
type AddressFlags struct {
	LID  string
	DR   string
	Port string
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
