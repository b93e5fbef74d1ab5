package cmdutil

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibkey/ibkey/internal/demo"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
)

// MADFlags select how a command sends MADs: the ibsim simulator, or the kernel's umad
// interface on a local port. Only commands that send MADs add them (AddMADFlags).
type MADFlags struct {
	f   *Factory
	cmd *cobra.Command

	// The flags' values: one set for every command of the tree, as the flags are
	// (only one command runs).
	*MADSettings

	// NoMADs, set by a command whose runs do not all send MADs, says why this run
	// sends none ("" when it may), from the command's other flags and arguments
	// (c.Flags().Args(): it runs before RunE): the MAD flags given on its command
	// line are then refused (exit 2), never silently ignored. nil: every run may send MADs. The environment (IBKEY_IBSIM)
	// is not refused: it is set for a whole shell, not for this run.
	NoMADs func() string

	// Dependencies, replaced in tests.
	DialIbsim func(ctx context.Context, o mad.IbsimOptions) (mad.Transport, string, error)
	OpenUmad  func(dev string, port int, o mad.UmadOptions) (mad.Transport, error)
}

// MADSettings are the values of the MAD flags.
type MADSettings struct {
	Ibsim      string        // --ibsim[=BASE]; env IBKEY_IBSIM
	SimNode    string        // --sim-node
	CA         string        // --ca
	CAPort     int           // --ca-port
	MADTimeout time.Duration // --mad-timeout, per attempt
	MADRetries int           // --mad-retries
}

// madFlagSet is the MAD flags of a tree (Factory.mad): defined, and given their
// completions, with the first command that has them; every other command adds the
// same flags, so that the 22 commands with MAD flags do not each build and register
// six (issue 23's start-up budget).
type madFlagSet struct {
	values MADSettings
	flags  []*pflag.Flag
}

// MADTimeoutChoices are --mad-timeout's completions.
var MADTimeoutChoices = []string{"100ms", "250ms", "500ms", "1s", "2s", "5s"}

// IntervalChoices are the completions of a sampling interval (watch's --interval).
var IntervalChoices = []string{"1s", "2s", "5s", "10s", "30s", "1m"}

// IbsimDefault is --ibsim's value when given without one: $IBSIM_SOCKNAME, else "sim".
const IbsimDefault = "sim"

// ibsimUsage is --ibsim's help, shared with the root's hidden copy.
const ibsimUsage = "send MADs through the ibsim simulator with socket base name `BASE` (--ibsim alone: $IBSIM_SOCKNAME, else sim; env IBKEY_IBSIM)"

// AddMADFlags adds --ibsim, --sim-node, --ca, --ca-port, --mad-timeout and
// --mad-retries to c and returns where they are parsed into. -C, -P and -t are the
// infiniband-diags' spellings (ibstat(8), smpquery(8): -C ca_name, -P ca_port,
// -t timeout_ms; a plain --mad-timeout number is milliseconds too).
func AddMADFlags(c *cobra.Command, f *Factory) *MADFlags {
	if f.mad == nil {
		f.mad = defineMADFlags(c, f)
	} else {
		for _, fl := range f.mad.flags {
			c.Flags().AddFlag(fl)
		}
	}
	m := &MADFlags{f: f, cmd: c, MADSettings: &f.mad.values}
	f.madFlags = append(f.madFlags, m)
	return m
}

// defineMADFlags defines the MAD flags on c.
func defineMADFlags(c *cobra.Command, f *Factory) *madFlagSet {
	s := &madFlagSet{}
	v := &s.values
	fl := c.Flags()
	fl.StringVar(&v.Ibsim, "ibsim", "", ibsimUsage)
	fl.Lookup("ibsim").NoOptDefVal = IbsimDefault
	fl.StringVar(&v.SimNode, "sim-node", "", "attach to the simulator at node `NAME` (default: the first node of its topology)")
	fl.StringVarP(&v.CA, "ca", "C", "", "send MADs from local device `DEV` (default: the first ACTIVE InfiniBand port)")
	fl.IntVarP(&v.CAPort, "ca-port", "P", 0, "send MADs from port `N` of --ca")
	plainDurationVarP(fl, &v.MADTimeout, "mad-timeout", "t", time.Second, "wait this long for each MAD's reply (a plain number is milliseconds, as the diags' -t)", "ms")
	fl.IntVar(&v.MADRetries, "mad-retries", 3, "send an unanswered MAD again this many times")
	// Completion reads nothing over MADs and offers no file names.
	_ = c.RegisterFlagCompletionFunc("ibsim", cobra.NoFileCompletions)
	_ = c.RegisterFlagCompletionFunc("sim-node", cobra.NoFileCompletions)
	_ = c.RegisterFlagCompletionFunc("ca", CompleteDevices(f))
	_ = c.RegisterFlagCompletionFunc("ca-port", cobra.FixedCompletions([]cobra.Completion{"1", "2"}, cobra.ShellCompDirectiveNoFileComp))
	_ = c.RegisterFlagCompletionFunc("mad-timeout", CompleteDurations(MADTimeoutChoices...))
	_ = c.RegisterFlagCompletionFunc("mad-retries", cobra.FixedCompletions([]cobra.Completion{"0", "1", "3", "5"}, cobra.ShellCompDirectiveNoFileComp))
	for _, name := range []string{"ibsim", "sim-node", "ca", "ca-port", "mad-timeout", "mad-retries"} {
		s.flags = append(s.flags, fl.Lookup(name))
	}
	return s
}

// AddRootIbsimFlag gives the root a hidden --ibsim so that `ibkey --ibsim pkeys ...`
// still finds the subcommand (cobra must know, before it picks the subcommand, that
// --ibsim alone takes no value). The subcommands' own --ibsim shadows it; a command
// without MAD flags rejects it (CheckRootIbsim).
func AddRootIbsimFlag(root *cobra.Command) {
	var ignored string
	pf := root.PersistentFlags()
	pf.StringVar(&ignored, "ibsim", "", ibsimUsage)
	pf.Lookup("ibsim").NoOptDefVal = IbsimDefault
	_ = pf.MarkHidden("ibsim")
}

// CheckRootIbsim rejects --ibsim on a command that sends no MADs: only then is the
// root's hidden copy the one parsed (a command with MAD flags parses its own).
func CheckRootIbsim(c *cobra.Command) error {
	if fl := c.Root().PersistentFlags().Lookup("ibsim"); fl != nil && fl.Changed {
		return Usagef("--ibsim: '%s' sends no MADs (the MAD flags apply to devices, pkeys, can-talk, watch counters, fabric, job, exporter and sm log)", c.CommandPath())
	}
	return nil
}

// addressHint says how the command reads the simulated fabric, from the address flags
// it has: "with --ibsim, 'ibkey pkeys' reads the simulated fabric only through --lid,
// --dr or --guid, and this host's sysfs otherwise".
func (m *MADFlags) addressHint() string {
	return fmt.Sprintf("with --ibsim, '%s' reads the simulated fabric only through %s, and this host's sysfs otherwise", m.cmd.CommandPath(), m.addressFlags())
}

// addressFlags names the address flags of the command ("--lid, --dr or --guid").
func (m *MADFlags) addressFlags() string {
	var flags []string
	for _, name := range []string{"lid", "dr", "guid", "node"} {
		if m.cmd.Flags().Lookup(name) != nil {
			flags = append(flags, "--"+name)
		}
	}
	switch len(flags) {
	case 0:
		return "an endpoint of the fabric (lid=N, node=NAME, a port GUID)"
	case 1:
		return flags[0]
	}
	return strings.Join(flags[:len(flags)-1], ", ") + " or " + flags[len(flags)-1]
}

// IbsimBase resolves the simulator's socket base name, in this one place: --ibsim,
// else IBKEY_IBSIM (1 meaning the default); the default (--ibsim alone) is
// $IBSIM_SOCKNAME, else "sim" (the names ibsim and its umad2sim library use for the
// socket). "" means no simulator: umad.
func (m *MADFlags) IbsimBase() string {
	base := m.Ibsim
	if base == "" {
		base = m.f.Getenv("IBKEY_IBSIM")
		if base == "1" {
			base = IbsimDefault
		}
	}
	if base == IbsimDefault {
		if s := m.f.Getenv("IBSIM_SOCKNAME"); s != "" {
			base = s
		}
	}
	return base
}

// Explicit reports whether a transport was chosen (--ibsim or --ca).
func (m *MADFlags) Explicit() bool { return m.IbsimBase() != "" || m.CA != "" }

// checkMADValues refuses a bad MAD flag value of c (--ca-port 300, --mad-retries -1,
// --sim-node without --ibsim) before c runs, also when this run sends no MAD: a bad
// value is a mistake either way (as can-talk checks every flag, issue 28), never
// silently ignored; so are MAD flags that contradict each other or the transport
// (--sim-node without --ibsim, --ca with it), which Open refuses too.
func (f *Factory) checkMADValues(c *cobra.Command) error {
	for _, m := range f.madFlags {
		if m.cmd == c {
			if _, err := m.Options(); err != nil {
				return err
			}
			if err := m.checkTransport(); err != nil {
				return err
			}
			return m.checkCA()
		}
	}
	return nil
}

// checkMADUse refuses the MAD flags given on c's command line when this run sends no
// MAD (MADFlags.NoMADs), naming them as typed and why the run sends none.
func (f *Factory) checkMADUse(c *cobra.Command) error {
	for _, m := range f.madFlags {
		if m.cmd != c || m.NoMADs == nil {
			continue
		}
		var given []string
		for _, fl := range f.mad.flags {
			switch {
			case !c.Flags().Changed(fl.Name):
			case fl.NoOptDefVal != "" && fl.Value.String() == fl.NoOptDefVal:
				given = append(given, "--"+fl.Name) // --ibsim alone
			default:
				given = append(given, fmt.Sprintf("--%s %q", fl.Name, FlagText(c, fl.Name)))
			}
		}
		if len(given) == 0 {
			return nil
		}
		if why := m.NoMADs(); why != "" {
			return Usagef("%s: this run sends no MADs: %s", strings.Join(given, " "), why)
		}
	}
	return nil
}

// NeedsAddress makes the MAD flags apply only to a run given a fabric address (a, of
// a command that reads a port either locally or over the fabric): without one it
// reads this host, and sends no MADs (NoMADs).
func (m *MADFlags) NeedsAddress(a *AddressFlags) {
	m.NoMADs = func() string {
		// An address typed where a local device goes ('ibkey --ibsim pkeys 4', the
		// diags' habit) is refused by Selectors with the flag to use.
		if args := m.cmd.Flags().Args(); a.Set() || len(args) > 0 && addressHint(args[0]) != "" {
			return ""
		}
		return fmt.Sprintf("'%s' sends them only to read %s (give one, or leave out the MAD flags to read this host)", m.cmd.CommandPath(), m.addressFlags())
	}
}

// checkTransport refuses MAD flags that contradict each other or do not fit the
// transport selected.
func (m *MADFlags) checkTransport() error {
	ibsim := m.IbsimBase()
	switch {
	case ibsim != "" && (m.CA != "" || m.CAPort != 0):
		return Usagef("--ca and --ca-port choose a local umad port; they do not apply with --ibsim (use --sim-node NAME to choose where to attach)")
	case len(ibsim) > mad.MaxIbsimSockNameLen:
		return Usagef("invalid simulator socket name %q (--ibsim or IBSIM_SOCKNAME): %d bytes, longer than the %d an ibsim socket name holds", ibsim, len(ibsim), mad.MaxIbsimSockNameLen)
	case ibsim != "" && len(m.SimNode) > mad.MaxSimNodeLen:
		return Usagef("invalid --sim-node %q: %d bytes, longer than the %d a simulator node name holds", m.SimNode, len(m.SimNode), mad.MaxSimNodeLen)
	case ibsim == "" && m.SimNode != "":
		return Usagef("--sim-node chooses where to attach to the simulator: it needs --ibsim")
	case ibsim == "" && m.CA == "" && m.CAPort != 0:
		return Usagef("--ca-port needs --ca DEV")
	}
	return nil
}

// checkCA looks --ca DEV (and --ca-port N) up where umad would send MADs from (the
// device's ports in the host's sysfs, where umad finds its umad device too; the
// demo host's cabled ports), so that a run that reads sysfs only does not accept a
// device or port that does not exist (exit 3, naming those that exist). When the
// host's devices cannot be listed, the check is left to what the run reads: its
// sysfs reads, or umad, then fail and say why.
func (m *MADFlags) checkCA() error {
	if m.CA == "" || m.IbsimBase() != "" {
		return nil
	}
	if m.f.IsDemo() {
		fab, err := openDemo(m.CA, m.CAPort, m.f.Now)
		if err != nil {
			return err
		}
		return fab.T.Close()
	}
	devs, err := m.f.Host().Devices(m.CA)
	var (
		usage    *query.UsageError
		notFound *query.NotFoundError
	)
	switch {
	case errors.As(err, &usage):
		return Usagef("invalid --ca %q: a device name is one path component, without / or .. (accepted: a local device, as 'ibkey devices' lists them)", m.CA)
	case errors.As(err, &notFound):
		return err
	case err != nil || len(devs) != 1 || len(devs[0].Ports) == 0 || m.CAPort == 0:
		return nil
	}
	return query.CheckPort(devs[0], m.CAPort)
}

// Options are the transport options the flags select.
func (m *MADFlags) Options() (mad.Options, error) {
	if m.MADTimeout <= 0 {
		// The diags refuse it too (ibdiag_common.c, -t: "Timeout requires a positive
		// integer value"); only libibmad's API reads 0 as its default (rpc.c,
		// mad_get_timeout). The token as typed: "0", not "0s".
		text := m.MADTimeout.String()
		if m.cmd != nil {
			text = FlagText(m.cmd, "mad-timeout")
		}
		return mad.Options{}, Usagef("invalid --mad-timeout %s (accepted: a positive duration such as 500ms, or a plain number of milliseconds above 0, as the diags' -t)", text)
	}
	// A port number is a byte (IBA 14.2.5.6 PortInfo:LocalPortNum); 0 is port 1
	// (query.TransportOptions).
	if m.CAPort < 0 || m.CAPort > 255 {
		return mad.Options{}, Usagef("invalid --ca-port %d (accepted: a port number 1-255 of --ca; 0 or unset for port 1)", m.CAPort)
	}
	if m.MADRetries < 0 || m.MADRetries > 100 {
		return mad.Options{}, Usagef("invalid --mad-retries %d (accepted: 0-100)", m.MADRetries)
	}
	// mad.Options: 0 means the default, negative means none.
	return mad.Options{Timeout: m.MADTimeout, Retries: cmp.Or(m.MADRetries, -1)}, nil
}

// Open opens the transport the flags select (query.OpenFabric) after checking the
// flags, and says which flags help when it fails. The caller must Close the transport
// (ibsim has 10 client slots and never frees the slot of a client that exits without
// disconnecting); With does that.
func (m *MADFlags) Open(ctx context.Context) (*query.Fabric, error) {
	opts, err := m.Options()
	if err != nil {
		return nil, err
	}
	o := query.TransportOptions{Ibsim: m.IbsimBase(), SimNode: m.SimNode, CA: m.CA, CAPort: m.CAPort, MAD: opts,
		Host: m.f.Host, DialIbsim: m.DialIbsim, OpenUmad: m.OpenUmad}
	if err := m.checkTransport(); err != nil {
		return nil, err
	}
	if m.f.Demo && m.Ibsim != "" {
		// Two fabrics chosen at once (as --demo with --sysfs): refused, never one of
		// them silently. The flags only: IBKEY_IBSIM and IBKEY_DEMO are a shell's.
		return nil, Usagef("--demo and --ibsim both choose the fabric to read: give one")
	}
	if o.Ibsim == "" && m.f.IsDemo() {
		return openDemo(m.CA, m.CAPort, m.f.Now)
	}
	fab, err := query.OpenFabric(ctx, o)
	var (
		np    *query.NoLocalPortError
		nnode *mad.NoSimNodeError
	)
	switch {
	case errors.As(err, &nnode):
		return nil, &query.UsageError{Err: err, Msg: fmt.Sprintf("invalid --sim-node %q: ibsim %q has no such node (accepted: a node's name or description in its topology, such as %q where it attaches by default; 'ibkey fabric discover --ibsim=%s' lists them)",
			nnode.Node, nnode.SockName, nnode.Default, nnode.SockName)}
	case errors.As(err, &np) && np.Err != nil:
		return nil, &query.EnvError{Msg: np.Error() + "; to query a simulated fabric use --ibsim", Err: err}
	case errors.As(err, &np):
		return nil, &query.EnvError{Msg: np.Error() + "; choose one with --ca DEV --ca-port N", Err: err}
	case err != nil && o.Ibsim == "":
		return nil, &query.EnvError{Msg: umadErrorText(errors.Unwrap(err)), Err: err}
	case err != nil:
		return nil, err
	}
	// A LID that gets no answer suggests --dr, or the LIDs there are
	// (query.NoAnswerError).
	fab.DirectedRouteFlag, fab.ListLIDs = "--dr", listLIDs
	return fab, nil
}

// openDemo attaches to the demo fabric (internal/demo: the subnet the demo host's
// InfiniBand ports are cabled to) at dev/port, mlx5_0/1 unless --ca says otherwise,
// as umad would take the host's first ACTIVE InfiniBand port.
func openDemo(dev string, port int, now func() time.Time) (*query.Fabric, error) {
	dev, port = cmp.Or(dev, "mlx5_0"), cmp.Or(port, 1)
	t, err := demo.OpenTransport(dev, port, now)
	if err != nil {
		return nil, &query.EnvError{Msg: err.Error(), Err: err}
	}
	return &query.Fabric{T: t, Via: fmt.Sprintf("%s at %s/%d", demo.Via, dev, port), DirectedRouteFlag: "--dr", ListLIDs: listLIDs}, nil
}

// listLIDs is how a user lists the LIDs a subnet manager assigned
// (query.Fabric.ListLIDs): the sweep lists every node's.
const listLIDs = "'ibkey fabric discover'"

// FabricAccessHow says how the MAD flags give a command fabric access, for what
// cannot be read without it (query.NeedsFabricAccess).
const FabricAccessHow = "pass --ca DEV as root or the rdma group, or --ibsim"

// umadErrorText adds what to do to umad's errors: the flag that reaches a fabric
// without InfiniBand hardware when the host has no umad device for the port.
func umadErrorText(err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, os.ErrPermission):
		return msg
	case errors.Is(err, mad.ErrNoUmadDevice):
		return msg + "; without InfiniBand hardware, query a simulated fabric with --ibsim"
	}
	return msg
}

// With opens the selected transport, runs fn, and closes the transport however fn
// ends, also when ctx (main's signal context) is cancelled, so an ibsim client slot is
// always given back.
func (m *MADFlags) With(ctx context.Context, fn func(ctx context.Context, f *query.Fabric) error) (err error) {
	fab, err := m.Open(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := fab.T.Close(); cerr != nil && err == nil {
			m.f.Notices().Warn(fmt.Sprintf("closing %s: %v", fab.Via, cerr))
		}
	}()
	return fn(ctx, fab)
}
