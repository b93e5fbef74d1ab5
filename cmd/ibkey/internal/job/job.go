// Package job is `ibkey job`: which partition a job's communication libraries will
// use on each host, and whether that lets the job's ranks talk. It imports nothing
// else from cmd/ibkey: root.go passes it a Deps.
package job

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fsread"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/job"
	"github.com/ibkey/ibkey/internal/query"
)

// Deps are what the command needs from the process. Building the command calls none
// of the funcs.
type Deps struct {
	Out, ErrOut io.Writer
	// Host is the local host the global flags select (--sysfs, --demo).
	Host func() *query.Host
	// Getenv reads the environment the job would run with; Environ lists it
	// (KEY=VALUE), to find per-transport overrides; nil reads only known names.
	Getenv  func(string) string
	Environ func() []string
	// Ctx is main's signal context; nil: the command's (cobra's ExecuteContext).
	Ctx context.Context
	// Format is the output format the factory decided (-o, or table on a terminal);
	// nil: plain.
	Format func() (cmdutil.Format, error)
	// Fabric opens the MAD transport the global flags select (for --lid and --node
	// without --fabric-file); nil when there is none. The caller of Fabric closes T.
	Fabric func(ctx context.Context) (*query.Fabric, error)
	// Exit makes the error that ends the command with an exit code after it has
	// printed its answer (1 does not work, 4 not fully checked).
	Exit func(code int) error
}

// Options are `ibkey job`'s flags and arguments.
type Options struct {
	Deps
	Assign     []string // KEY=VALUE arguments
	EnvFile    string
	Libs       string
	Perftest   string
	Want       string
	LIDs       string
	Nodes      string
	FabricFile string
	Hosts      []string // NAME=SYSFSDIR
}

// NewCmdJob builds the command; runF replaces the run function in tests.
func NewCmdJob(deps Deps, runF func(*Options) error) *cobra.Command {
	o := &Options{Deps: deps}
	c := &cobra.Command{
		Use:   "job [KEY=VALUE...]",
		Short: "Which partition a job's libraries use, and can its hosts talk",
		Long: `Read a job's P_Key settings and resolve them against the P_Key tables of the ports
each library would use: which device/port, which table entry (index, value,
membership), and whether the job's ranks can talk in that partition.

Settings come from the environment, or from --env FILE (KEY=VALUE lines, the format of
nccl.conf) and KEY=VALUE arguments, which replace the environment. perftest's options
come from --perftest 'ib_send_bw -d mlx5_0 --pkey_index=1'.

What each library does (from its own source; see the README):
  NCCL_IB_PKEY            an INDEX, default 0, used as given (strtoll: 0x8001 is index
                          32769); ports: ACTIVE, filtered by NCCL_IB_HCA (^ excludes,
                          = exact, name[:port], prefix match)
  UCX_IB_PKEY             a 15-bit VALUE with 0x, or auto (default): the first
                          full-member entry, else the first limited one; UCX_NET_DEVICES
  NVSHMEM_IB_PKEY_INDEX   an INDEX (NVSHMEM >= 3.7.0); older NVSHMEM always uses index 0
  GASNET_IBV_PKEY         a VALUE: the first entry of the key, whatever its membership;
                          unset: index 0; GASNET_IBV_PORTS
  MV2_DEFAULT_PKEY        a VALUE (first entry of the key); unset: MV2_DEFAULT_PKEY_IX or 0
  OMPI_MCA_btl_openib_pkey  a VALUE (openib BTL, Open MPI 4.x); ports without it are
                          skipped; with pml ucx, UCX_IB_PKEY applies
  perftest --pkey_index   an INDEX, default 0; beyond the table perftest uses 0
Libraries checked: --lib, else those whose settings are given, else all but perftest.

Hosts: the local host (sysfs), or the job's hosts: --fabric-file FILE (a saved sweep,
'ibkey fabric discover -o json') with --node NAMES or --lid LIDS (default: every
ACTIVE CA port in it), --lid LIDS read over MADs now, --node NAMES in a sweep run now,
or --host NAME=SYSFSDIR (a saved /sys tree of that host; repeatable). Across hosts
every pair of ranks must land in the same partition with at least one full member.

--want PARTITION is the inverse: the settings each library needs on each host to use
that partition (one value when it is the same everywhere).

Exit codes: 0 every library checked works; 1 one does not (an empty entry, a value not
in the table, hosts in different partitions, limited members only; with --want, a
library that no setting puts in the partition: DOES NOT WORK); 2 bad input; 3 no
device, port or fabric access; 4 the answer depends on an entry or setting that could
not be read or is not interpreted (listed on stderr), and no library fails.

JSON (-o json; schemas/job.schema.json): {"schema_version","mode":"resolve"|"want",
"partition"?,"hosts","peers_checked","libraries":[{"library","name","kind","setting"?,
"verdict","inactive"?,"same"?,"ports":[{"host"?,"device","port","used","why"?,
"outcome"?,"index","pkey"?,"membership"?,"setting"?,"problem"?}],"findings","fixes",
"unchecked","notes","assumptions","source"}],"reach"?:[{"partition","full",
"limited"}],"incomplete"?:[{"kind","message"}]}; incomplete (kind not-checked) is
present exactly when the exit is 4. verdict: works, does-not-work, not-checked,
not-applicable; outcome: uses, empty-entry, fails, skips-port, not-checked; host is
absent for the local host;
port is the port number (device the RDMA device, or the node description of a port
from --fabric-file).`,
		Example: `  NCCL_IB_PKEY=1 ibkey job
  ibkey job NCCL_IB_PKEY=1 UCX_IB_PKEY=0x0002
  ibkey job --env job.env --fabric-file fabric.json --node node01,node02
  ibkey job --ibsim --lid 3,5 NCCL_IB_PKEY=2
  ibkey job --want 0x0002 --fabric-file fabric.json --node node01,node02 -o json
  ibkey job --perftest 'ib_send_bw -d mlx5_0 --pkey_index=1'`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Assign = args
			if o.Ctx == nil {
				o.Ctx = c.Context()
			}
			if runF != nil {
				return runF(o)
			}
			return Run(o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.EnvFile, "env", "", "read the job's settings from `FILE` (KEY=VALUE lines) instead of the environment")
	f.StringVar(&o.Libs, "lib", "", "check only these libraries, comma-separated: "+strings.Join(job.LibraryIDs(), ", "))
	f.StringVar(&o.Perftest, "perftest", "", "a perftest command line, `'ib_send_bw -d DEV -i PORT --pkey_index=N'`")
	f.StringVar(&o.Want, "want", "", "print the settings that put each library in `PARTITION` (a P_Key, e.g. 0x0002)")
	f.StringVar(&o.LIDs, "lid", "", "the job's ports by `LIDS` (3,5,9 or 3-40): in --fabric-file, else read over MADs now")
	f.StringVar(&o.Nodes, "node", "", "the job's nodes by description or GUID, comma-separated `NAMES`: in --fabric-file, else in a sweep run now")
	f.StringVar(&o.FabricFile, "fabric-file", "", "a saved sweep `FILE` (ibkey fabric discover -o json) holding the job's hosts")
	f.StringArrayVar(&o.Hosts, "host", nil, "a host given as a saved sysfs tree, `NAME=DIR` (repeatable)")
	_ = c.MarkFlagFilename("env")
	_ = c.MarkFlagFilename("fabric-file", "json")
	_ = c.RegisterFlagCompletionFunc("lib", cobra.FixedCompletions(job.LibraryIDs(), cobra.ShellCompDirectiveNoFileComp))
	return c
}

func usage(format string, a ...any) error {
	return &query.UsageError{Msg: fmt.Sprintf(format, a...)}
}

// inputs gathers the settings: --env FILE and KEY=VALUE arguments, else the
// environment.
func (o *Options) inputs() (job.Inputs, string, error) {
	in := job.Inputs{Env: job.Env{}}
	from := "the environment"
	if o.EnvFile != "" || len(o.Assign) > 0 {
		from = "the arguments"
		if o.EnvFile != "" {
			// An env file is a few KB; 16 MiB bounds a mistake (/dev/zero), and a FIFO
			// is refused rather than waited on.
			fh, err := fsread.Open(o.EnvFile, 16<<20, "an env file")
			if err != nil {
				return in, "", usage("--env: %v", err)
			}
			defer fh.Close()
			e, err := job.ReadEnvFile(o.EnvFile, fh)
			if err != nil {
				return in, "", usage("%v", err)
			}
			in.Env = e
			from = o.EnvFile
			if len(o.Assign) > 0 {
				from += " and the arguments"
			}
		}
		for i, a := range o.Assign {
			k, v, err := job.ParseAssignment(fmt.Sprintf("argument %d", i+1), a)
			if err != nil {
				return in, "", usage("%v", err)
			}
			in.Env[k] = v
		}
	} else {
		for _, l := range job.Libraries() {
			for _, name := range l.Vars {
				if strings.HasPrefix(name, "-") {
					continue
				}
				if v := o.Getenv(name); v != "" {
					in.Env[name] = v
				}
			}
		}
		if o.Environ != nil {
			for _, kv := range o.Environ() {
				if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "UCX_") && strings.HasSuffix(k, "_PKEY") {
					in.Env[k] = v
				}
			}
		}
	}
	if o.Perftest != "" {
		a := job.ParsePerftestArgs(o.Perftest)
		in.Perftest = &a
	}
	return in, from, nil
}

// libraries chooses what to check: --lib, else the libraries whose settings are given,
// else all but perftest.
func (o *Options) libraries(in job.Inputs) ([]*job.Library, error) {
	var out []*job.Library
	if o.Libs != "" {
		for _, id := range strings.Split(o.Libs, ",") {
			l, ok := job.LookupLibrary(strings.TrimSpace(id))
			if !ok {
				return nil, usage("invalid --lib %q (accepted: %s)", id, strings.Join(job.LibraryIDs(), ", "))
			}
			out = append(out, l)
		}
		return out, nil
	}
	for _, l := range job.Libraries() {
		if l.Mentioned(in) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		for _, l := range job.Libraries() {
			if l.ID != job.Perftest.ID {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

// Run is the command.
func Run(o *Options) error {
	format, err := o.format()
	if err != nil {
		return err
	}
	in, from, err := o.inputs()
	if err != nil {
		return err
	}
	libs, err := o.libraries(in)
	if err != nil {
		return err
	}
	var want check.PKey
	if o.Want != "" {
		if want, err = check.ParsePKey(o.Want); err != nil {
			return err
		}
		if !want.Valid() {
			return usage("invalid --want %q: key 0 is an empty entry, not a partition (accepted: %s)", o.Want, check.PKeyForms)
		}
	}
	src, err := o.ports()
	if err != nil {
		return err
	}
	n := notices{w: o.ErrOut}
	n.note(fmt.Sprintf("settings from %s", from))
	for _, l := range src.labels {
		n.label(l)
	}
	var rep report
	if o.Want != "" {
		rep = wantReport(job.WantPartition(libs, in, want, src.ports), want)
	} else {
		rep = resolveReport(job.Resolve(libs, in, src.ports))
	}
	rep.Hosts = countHosts(src.ports)
	rep.PeersChecked = rep.Hosts > 1
	if src.fabric != nil {
		rep.addReach(src.fabric)
	}
	if rep.exitCode() == cmdutil.ExitIncomplete {
		for _, u := range rep.unchecked() {
			rep.Incomplete = append(rep.Incomplete, cmdutil.Incomplete{Kind: cmdutil.IncompleteNotChecked, Message: u})
		}
	}
	if err := rep.render(o.Out, format); err != nil {
		return err
	}
	for _, a := range rep.assumptions() {
		n.note("assumed: " + a)
	}
	if !rep.PeersChecked && o.Want == "" {
		n.note("one host: this says which entry each library uses here, not whether the job's other hosts can reach it (give --fabric-file with --node, --lid or --host)")
	}
	code := rep.exitCode()
	if code == cmdutil.ExitIncomplete {
		for _, u := range rep.unchecked() {
			n.warn("not checked: " + u)
		}
	}
	if code != 0 {
		if o.Exit != nil {
			return o.Exit(code)
		}
		return fmt.Errorf("exit status %d", code)
	}
	return nil
}

func countHosts(ports []*job.Port) int {
	seen := map[string]bool{}
	for _, p := range ports {
		seen[p.Host] = true
	}
	return len(seen)
}

// portSource are the ports of the job and where they came from.
type portSource struct {
	ports  []*job.Port
	labels []string
	fabric *fabric.Fabric
}

func (o *Options) ports() (*portSource, error) {
	src := &portSource{}
	remote := o.LIDs != "" || o.Nodes != "" || o.FabricFile != "" || len(o.Hosts) > 0
	if !remote {
		h := o.Host()
		ps, err := job.HostPorts(h, "")
		if err != nil {
			return nil, err
		}
		if h.Label != "" {
			src.labels = append(src.labels, h.Label)
		}
		src.ports = ps
		return src, nil
	}
	for _, spec := range o.Hosts {
		name, dir, ok := strings.Cut(spec, "=")
		if !ok || name == "" || dir == "" {
			return nil, usage("invalid --host %q (accepted: NAME=DIR, a host's saved sysfs tree, e.g. node01=/srv/sysfs/node01)", spec)
		}
		ps, err := job.HostPorts(&query.Host{Sys: ibverbs.Open(dir)}, name)
		if err != nil {
			return nil, fmt.Errorf("--host %s: %w", name, err)
		}
		src.ports = append(src.ports, ps...)
	}
	lids, err := parseLIDs(o.LIDs)
	if err != nil {
		return nil, err
	}
	nodes := splitList(o.Nodes)
	switch {
	case o.FabricFile != "":
		f, err := readFabricFile(o.FabricFile)
		if err != nil {
			return nil, err
		}
		src.fabric = f
		src.labels = append(src.labels, "fabric: "+o.FabricFile)
		ps, err := fabricPorts(f, lids, nodes)
		if err != nil {
			return nil, err
		}
		src.ports = append(src.ports, ps...)
	case len(lids) > 0 || len(nodes) > 0:
		if o.Fabric == nil {
			return nil, &query.EnvError{Msg: "no fabric access to read --lid/--node (give --fabric-file FILE)"}
		}
		ctx := o.Ctx
		if ctx == nil {
			ctx = context.Background()
		}
		fab, err := o.Fabric(ctx)
		if err != nil {
			return nil, err
		}
		defer fab.T.Close()
		src.labels = append(src.labels, "fabric via "+fab.Via)
		if len(nodes) > 0 {
			f, err := query.Sweep(ctx, fab.T, query.SweepOptions{Source: fab.Via})
			if err != nil && f == nil {
				return nil, &query.EnvError{Msg: err.Error()}
			}
			if f.Incomplete != "" {
				return nil, &query.EnvError{Msg: "the sweep is partial (" + f.Incomplete + "): the job's nodes may be in the part not read"}
			}
			src.fabric = f
			ps, err := fabricPorts(f, lids, nodes)
			if err != nil {
				return nil, err
			}
			src.ports = append(src.ports, ps...)
			break
		}
		sels := make([]query.FabricSelector, len(lids))
		for i, l := range lids {
			sels[i] = query.FabricSelector{Addr: mad.LIDAddress(l)}
		}
		views, err := fab.LoadMany(ctx, sels, query.LoadOptions{Tables: true})
		if err != nil {
			return nil, err
		}
		for _, v := range views {
			src.ports = append(src.ports, job.PortFromView(v.Device.Name, v))
		}
	}
	if len(src.ports) == 0 {
		return nil, &query.EnvError{Msg: "no port of the job was found"}
	}
	return src, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseLIDs reads "3", "3,5,9", "3-40" or a mix.
func parseLIDs(s string) ([]uint16, error) {
	if s == "" {
		return nil, nil
	}
	bad := func(why string) error {
		return usage("invalid --lid %q: %s (accepted: a LID 1-49151, a list 3,5,9 or a range 3-40)", s, why)
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
			if b, err = mad.ParseLID(hi); err != nil || b < a {
				return nil, bad(fmt.Sprintf("%q is not a range of unicast LIDs", part))
			}
		}
		for l := int(a); l <= int(b); l++ {
			if !seen[uint16(l)] {
				seen[uint16(l)] = true
				out = append(out, uint16(l))
			}
		}
		if len(out) > 0xbfff {
			return nil, bad("too many LIDs")
		}
	}
	return out, nil
}

func readFabricFile(path string) (*fabric.Fabric, error) {
	return cmdutil.ReadFabricFile(path) // bounded, regular files only, descriptions sanitised
}

// fabricPorts picks the job's ports in a sweep: by LID (the end port whose LID range
// holds it), by node (its cabled ports), or every ACTIVE CA port.
func fabricPorts(f *fabric.Fabric, lids []uint16, nodes []string) ([]*job.Port, error) {
	var out []*job.Port
	for _, l := range lids {
		n, p := findLID(f, l)
		if n == nil {
			return nil, &query.NotFoundError{What: "LID", Name: strconv.Itoa(int(l)) + " in the sweep", Available: []string{"the LIDs of 'ibkey fabric discover'"}}
		}
		out = append(out, job.PortFromFabric(f, n, p))
	}
	for _, name := range nodes {
		ns := f.FindNodes(name)
		switch {
		case len(ns) == 0:
			var names []string
			for _, n := range f.Nodes {
				if n.Type == check.NodeCA {
					names = append(names, n.Description)
				}
			}
			sort.Strings(names)
			if len(names) > 12 {
				names = append(names[:12], fmt.Sprintf("and %d more", len(names)-12))
			}
			return nil, &query.NotFoundError{What: "node", Name: strconv.Quote(name) + " in the sweep", Available: names}
		case len(ns) > 1:
			return nil, usage("--node %q matches %d nodes: name one by its node GUID", name, len(ns))
		}
		n := ns[0]
		added := 0
		for _, p := range n.Ports {
			if n.IsEndPort(p) && (p.Peer != nil || p.PKeys != nil) {
				out = append(out, job.PortFromFabric(f, n, p))
				added++
			}
		}
		if added == 0 {
			return nil, &query.EnvError{Msg: fmt.Sprintf("node %q has no cabled end port in the sweep", name)}
		}
	}
	if len(lids) == 0 && len(nodes) == 0 {
		for _, n := range f.Nodes {
			if n.Type != check.NodeCA {
				continue
			}
			for _, p := range n.Ports {
				if p.State == check.StateActive {
					out = append(out, job.PortFromFabric(f, n, p))
				}
			}
		}
	}
	return out, nil
}

func findLID(f *fabric.Fabric, lid uint16) (*fabric.Node, *fabric.Port) {
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if n.IsEndPort(p) && p.LID != 0 && lid >= p.LID && int(lid) < int(p.LID)+1<<p.LMC {
				return n, p
			}
		}
	}
	return nil, nil
}
