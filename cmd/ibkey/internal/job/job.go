// Package job is `ibkey job`: which partition a job's communication libraries will
// use on each host, and whether that lets the job's ranks talk.
package job

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fsread"
	"github.com/ibkey/ibkey/internal/job"
	"github.com/ibkey/ibkey/internal/query"
)

// Options are `ibkey job`'s dependencies, flags and arguments.
type Options struct {
	cmdutil.Deps
	// Host reads the local host (the Factory's); MAD holds the transport flags
	// (AddMADFlags).
	Host func() *query.Host
	MAD  *cmdutil.MADFlags
	// Environ lists the environment the job would run with (KEY=VALUE): the
	// libraries' settings, per-transport overrides and look-alikes (nil: none).
	Environ func() []string
	// MCAFS reads Open MPI's MCA parameter files, NCCL's configuration files and
	// UCX's ucx.conf, with settings from the environment (this host's files;
	// tests inject theirs).
	MCAFS job.MCAFS
	// PasswdHome is the home directory the password database gives the user uid
	// (-1: this process's), and whether it could be looked up (NCCL before 2.30
	// reads ~/.nccl.conf there).
	PasswdHome func(uid int) (string, bool)

	Assign     []string // KEY=VALUE arguments
	EnvFile    string
	Libs       string
	LibVersion []string // LIB=VERSION, each maybe a comma-separated list
	Perftest   string
	Want       string
	Wait       time.Duration
	Emit       string
	LIDs       string
	Nodes      string
	FabricFile string
	Hosts      []string // NAME=SYSFSDIR
}

// maxWait bounds --wait: a launch gate that waits longer than a day is a mistake.
const maxWait = 24 * time.Hour

// NewCmdJob builds the command; runF replaces the run function in tests.
func NewCmdJob(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{Host: f.Host, Environ: f.Environ, MCAFS: osMCAFS{}, PasswdHome: passwdHome}
	c := &cobra.Command{
		Use:   "job [KEY=VALUE...]",
		Short: "Which partition a job's libraries use, and can its hosts talk",
		Long: `Read a job's P_Key settings and resolve them against the P_Key tables of the
ports each library would use: which device/port, which table entry (index,
value, membership), and whether the job's ranks can talk in that partition.

Settings come from the environment, or from --env FILE (KEY=VALUE lines, as a
shell env file) and KEY=VALUE arguments, which replace the environment.
With the environment, Open MPI's MCA parameter files are read too, as Open MPI
4.1 does: $OMPI_MCA_mca_base_param_files, else ~/.openmpi/mca-params.conf and
openmpi-mca-params.conf, and openmpi-mca-params-override.conf, in
$OPAL_SYSCONFDIR or /etc/openmpi; NCCL's: $NCCL_CONF_FILE, else
~/.nccl.conf, then /etc/nccl.conf; MVAPICH2's: $MV2_USER_CONFIG, else
~/.mvapich2.conf, then /etc/mvapich2.conf; UCX's ucx.conf files:
/etc/ucx, $HOME, $UCX_CONFIG_DIR and ./ (ibkey's); and NVSHMEM's (3.6.5 and
later; they beat the environment): /etc/nvshmem.conf, ~/.nvshmem.conf, then
$NVSHMEM_CONF_FILE, the last setting winning.
perftest's options come from --perftest 'ib_send_bw -d mlx5_0 --pkey_index=1'.
A variable that looks like a setting but is read by no library is warned about.

What each library does (from its own source; see docs/job.md):
  NCCL_IB_PKEY           an INDEX, default 0, used as given (strtoll: 0x8001 is
                         index 32769); ports: ACTIVE, filtered by NCCL_IB_HCA
  UCX_IB_PKEY            a 15-bit VALUE with 0x, or auto (default): the first
                         full-member entry, else the first limited one
  NVSHMEM_IB_PKEY_INDEX  an INDEX (NVSHMEM >= 3.7.0; older: always index 0)
  GASNET_IBV_PKEY        a VALUE: the first entry of the key, whatever its
                         membership; unset: index 0; GASNET_IBV_PORTS
  MV2_DEFAULT_PKEY       a VALUE (first entry of the key); unset: index 0
                         (MV2_DEFAULT_PKEY_IX is not read since MVAPICH2 1.2)
  OMPI_MCA_btl_openib_pkey  a VALUE (openib BTL, Open MPI 4.x); ports without
                         it are skipped; InfiniBand ports only with
                         OMPI_MCA_btl_openib_allow_ib=1 (RoCE ports
                         without it); with pml ucx, UCX_IB_PKEY applies
  perftest --pkey_index  an INDEX, default 0; perftest uses 0 above the
                         device's max_pkeys-1 (read through libibverbs here;
                         on InfiniBand the table's size; on RoCE not read:
                         not checked below 65535); negative: its uint16_t;
                         -O/--dualport: ports 1 and 2; with -R (rdma_cm) not
                         used: on RoCE 0xffff's entry, else not checked
Libraries checked: --lib, else those whose settings are given, else all but
perftest.

--lib-version LIB=VERSION (nccl=2.29.2,ucx=1.13.1; repeatable): the job's
library versions decide what depends on them (without: not checked).

Hosts: the local host (sysfs), or the job's hosts: --fabric-file FILE (a saved
sweep) with --node or --lid (default: every ACTIVE CA port in it), --lid LIDS
read over MADs now, --node NAMES in a sweep run now, or --host NAME=SYSFSDIR (a
saved /sys tree; repeatable). --node takes Slurm's hostlist syntax
(node[01-04,07], $SLURM_JOB_NODELIST) and finds each host's adapters by node
description ("node01 mlx5_0", as rdma-ndd writes it) or GUID. Across hosts
every pair of ranks must share the partition with at least one full member.

--want PARTITION is the inverse: the settings each library needs on each host
to use that partition (one value when it is the same everywhere).

--wait DURATION (with --want) is a launch gate: read the ports' tables again,
backing off from 0.5s to every 2s (longer for many MADs), until each holds the
partition with the membership the job needs, then answer. Progress goes to
stderr. At the timeout it exits 1 naming each port still missing the key, a
limited member among limited members, or (with --emit env) at another index.

--emit env prints the settings as shell lines, 'export NAME=VALUE', one set
right on every host given (NCCL_IB_PKEY, UCX_IB_PKEY, NVSHMEM_IB_PKEY_INDEX,
GASNET_IBV_PKEY, MV2_DEFAULT_PKEY, OMPI_MCA_btl_openib_pkey, and
IBKEY_IPOIB_INTERFACE, the partition's IPoIB interface for rdma_cm users); if
a library has no such value it prints nothing and exits 1.

JSON (-o json; schemas/job.schema.json) is documented in docs/job.md.`,
		Example: `  NCCL_IB_PKEY=1 ibkey job
  ibkey job NCCL_IB_PKEY=1 UCX_IB_PKEY=0x0002
  ibkey job --env job.env --fabric-file fabric.json --node node[01-02]
  ibkey job --ibsim --lid 3,5 NCCL_IB_PKEY=2
  ibkey job --want 0x0002 --fabric-file fabric.json --node node01,node02
  ibkey job --want 0x0042 --wait 60s --emit env
  ibkey job --node "$SLURM_JOB_NODELIST" --want 0x0042 --wait 2m
  ibkey job --perftest 'ib_send_bw -d mlx5_0 --pkey_index=1'`,
		RunE: cmdutil.RunE(f, o, &o.Deps, func(_ *cobra.Command, args []string) error {
			o.Assign = args
			return nil
		}, runF, Run),
	}
	fl := c.Flags()
	fl.StringVar(&o.EnvFile, "env", "", "read the job's settings from `FILE` (KEY=VALUE lines)")
	fl.StringVar(&o.Libs, "lib", "", "check only these `LIBS`, comma-separated: "+strings.Join(job.LibraryIDs(), ", "))
	fl.StringArrayVar(&o.LibVersion, "lib-version", nil, "the job's library versions, `LIB=VERSION` (nccl=2.29.2,ucx=1.13.1; repeatable)")
	fl.StringVar(&o.Perftest, "perftest", "", "a perftest `CMDLINE` ('ib_send_bw -d DEV --pkey_index=N')")
	fl.StringVar(&o.Want, "want", "", "print the settings that put each library in `PARTITION` (0x0002)")
	fl.DurationVar(&o.Wait, "wait", 0, "with --want: re-read the tables until the partition is ready, at most `DURATION`")
	fl.StringVar(&o.Emit, "emit", "", "with --want: print the settings as `env` (shell export lines)")
	fl.StringVarP(&o.LIDs, "lid", "L", "", "the job's ports by `LIDS` (3,5,9 or 3-40)")
	fl.StringVar(&o.Nodes, "node", "", "the job's hosts, `NAMES` (node[01-04,07], descriptions, GUIDs)")
	fl.StringVar(&o.FabricFile, "fabric-file", "", "a saved sweep `FILE` holding the job's hosts")
	fl.StringArrayVar(&o.Hosts, "host", nil, "a host as a saved sysfs tree, `NAME=DIR` (repeatable)")
	_ = c.MarkFlagFilename("env")
	_ = c.MarkFlagFilename("fabric-file", "json")
	_ = c.RegisterFlagCompletionFunc("lib", cobra.FixedCompletions(job.LibraryIDs(), cobra.ShellCompDirectiveNoFileComp))
	_ = c.RegisterFlagCompletionFunc("emit", cobra.FixedCompletions([]cobra.Completion{"env"}, cobra.ShellCompDirectiveNoFileComp))
	_ = c.RegisterFlagCompletionFunc("wait", cmdutil.CompleteDurations("30s", "1m", "2m", "5m"))
	o.MAD = cmdutil.AddMADFlags(c, f)
	cmdutil.SetExits(c,
		cmdutil.ExitMeaning{Code: cmdutil.ExitOK, Meaning: "every library checked works"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitNo, Meaning: "one does not (an empty entry, a value not in the table, hosts in different partitions, limited members only, a library that aborts on a host, --wait timed out)"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitUsage, Meaning: "bad input"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitEnv, Meaning: "no device, port or fabric access"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitIncomplete, Meaning: "the answer depends on an entry or setting that could not be read or is not interpreted (listed on stderr; a device that could not be read counts only when a library could choose it), and no library fails"},
	)
	return c
}

// inputs gathers the settings: --env FILE and KEY=VALUE arguments, else the
// environment; from says where they came from, lookalikes the variables that look
// like a setting no library reads.
func (o *Options) inputs() (in job.Inputs, from string, lookalikes []string, err error) {
	in = job.Inputs{Env: job.Env{}}
	if in.Versions, err = job.ParseLibVersions(o.LibVersion); err != nil {
		return in, "", nil, cmdutil.Usagef("%v", err)
	}
	var sources []string
	if o.EnvFile != "" || len(o.Assign) > 0 {
		if o.EnvFile != "" {
			// An env file is a few KB; 16 MiB bounds a mistake (/dev/zero), and a FIFO
			// is refused rather than waited on.
			fh, err := fsread.Open(o.EnvFile, 16<<20, "an env file")
			if err != nil {
				return in, "", nil, cmdutil.Usagef("--env: %v", err)
			}
			defer fh.Close()
			e, err := job.ReadEnvFile(o.EnvFile, fh)
			if err != nil {
				return in, "", nil, cmdutil.Usagef("%v", err)
			}
			in.Env = e
			sources = append(sources, o.EnvFile)
		}
		for i, a := range o.Assign {
			k, v, err := job.ParseAssignment(fmt.Sprintf("argument %d", i+1), a)
			if err != nil {
				return in, "", nil, cmdutil.Usagef("%v", err)
			}
			in.Env[k] = v
		}
		if len(o.Assign) > 0 {
			sources = append(sources, "the arguments")
		}
		lookalikes = job.LookAlikes(in.Env)
	} else {
		// A variable set to the empty string is set, as in --env and KEY= arguments:
		// each library reads it as its source does (GASNet refuses GASNET_IBV_PKEY='',
		// UCX_NET_DEVICES= selects no device, UCX refuses UCX_IB_PKEY=: ucs/config/
		// parser.c parses every variable getenv finds). Only an unset one is a default.
		all := job.Env{}
		if o.Environ != nil {
			for _, kv := range o.Environ() {
				if k, v, ok := strings.Cut(kv, "="); ok {
					all[k] = v
				}
			}
		}
		for _, l := range job.Libraries() {
			for _, name := range slices.Concat(l.Vars, l.Modifiers) {
				if strings.HasPrefix(name, "-") {
					continue
				}
				if v, set := all[name]; set {
					in.Env[name] = v
				}
			}
		}
		for k, v := range all {
			if job.UCXPKeyVar(k) {
				in.Env[k] = v
			}
		}
		lookalikes = job.LookAlikes(all)
		if len(in.Env) > 0 {
			sources = append(sources, "the environment ("+strings.Join(in.Env.Names(), ", ")+")")
		}
		// The libraries' settings files are read with the environment only: --env
		// FILE and KEY=VALUE arguments replace the environment, describing the job's
		// settings whole, so this host's $HOME and $HOME-relative files are not
		// theirs. Without an environment (Environ nil) none is read either.
		if o.Environ != nil && o.MCAFS != nil {
			in.MCA = job.ReadMCAFiles(all, o.MCAFS)
			// The job's user: a Slurm Prolog runs as root for SLURM_JOB_UID
			// (contrib/slurm), a TaskProlog and the job as that user.
			uid := -1
			if n, err := strconv.Atoi(all["SLURM_JOB_UID"]); err == nil && n >= 0 {
				uid = n
			}
			home, ok := o.PasswdHome(uid)
			in.NCCL = job.ReadNCCLFiles(all, o.MCAFS, home, ok)
			in.MV2 = job.ReadMV2Files(all, o.MCAFS)
			in.UCX = job.ReadUCXFiles(all, o.MCAFS)
			in.NVSHMEM = job.ReadNVSHMEMFiles(all, o.MCAFS)
			lookalikes = slices.Concat(lookalikes, in.NCCL.LookAlikes, in.MV2.LookAlikes, in.NVSHMEM.LookAlikes)
			for _, f := range []struct {
				what string
				read []string
			}{
				{"Open MPI's MCA parameter files", in.MCA.Read}, {"NCCL's configuration files", in.NCCL.Read},
				{"MVAPICH2's configuration files", in.MV2.Read}, {"UCX's configuration files", in.UCX.Read},
				{"NVSHMEM's configuration files", in.NVSHMEM.Read},
			} {
				if len(f.read) > 0 {
					sources = append(sources, f.what+" ("+strings.Join(f.read, ", ")+")")
				}
			}
		}
	}
	if o.Perftest != "" {
		in.Perftest = new(job.ParsePerftestArgs(o.Perftest))
		sources = append(sources, "--perftest")
	}
	switch len(sources) {
	case 0: // an --env FILE or an argument is a source even when it sets nothing
		from = "the environment: none set, every library's defaults"
	case 1:
		from = sources[0]
	default:
		from = strings.Join(sources[:len(sources)-1], ", ") + " and " + sources[len(sources)-1]
	}
	return in, from, lookalikes, nil
}

// libraries chooses what to check: --lib, else the libraries whose settings are given,
// else all but perftest.
func (o *Options) libraries(in job.Inputs) ([]*job.Library, error) {
	var out []*job.Library
	if o.Libs != "" {
		for _, id := range strings.Split(o.Libs, ",") {
			l, ok := job.LookupLibrary(strings.TrimSpace(id))
			if !ok {
				return nil, cmdutil.Usagef("invalid --lib %q (accepted: %s)", id, strings.Join(job.LibraryIDs(), ", "))
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

// checkFlags refuses combinations that cannot mean anything.
func (o *Options) checkFlags(format cmdutil.Format) error {
	if o.Wait < 0 || o.Wait > maxWait {
		return cmdutil.Usagef("invalid --wait %v (accepted: a duration up to %v, e.g. 60s)", o.Wait, maxWait)
	}
	if o.Wait > 0 && o.Want == "" {
		return cmdutil.Usagef("--wait needs --want PARTITION: it waits until the job's ports hold that partition")
	}
	if o.Wait > 0 && o.FabricFile != "" {
		return cmdutil.Usagef("--wait re-reads the job's ports, which a saved --fabric-file cannot: read them now (--node or --lid with --ibsim or --ca, --host DIR, or the local host)")
	}
	switch o.Emit {
	case "":
	case "env":
		if o.Want == "" {
			return cmdutil.Usagef("--emit env needs --want PARTITION: it prints the settings that put the job in that partition")
		}
		if format == cmdutil.FormatJSON {
			return cmdutil.Usagef("--emit env prints shell lines on stdout, -o json the report: choose one")
		}
	default:
		return cmdutil.Usagef("invalid --emit %q (accepted: env)", o.Emit)
	}
	return nil
}

// Run is the command.
func Run(o *Options) error {
	start := time.Now()
	if err := o.checkFlags(o.Format); err != nil {
		return err
	}
	in, from, lookalikes, err := o.inputs()
	if err != nil {
		return err
	}
	libs, err := o.libraries(in)
	if err != nil {
		return err
	}
	var want check.PKey
	if o.Want != "" {
		if want, err = check.ParsePartitionKey(o.Want); err != nil {
			return err
		}
	}
	src, err := o.sources(o.Ctx)
	if err != nil {
		return err
	}
	defer src.Close()
	n := o.Notices
	n.Note(fmt.Sprintf("settings from %s", from))
	for _, l := range lookalikes {
		n.Warn(l)
	}
	for _, l := range src.labels {
		n.Label(l)
	}
	ports, err := src.read(o.Ctx)
	if err != nil {
		return err
	}
	for _, c := range src.closed {
		n.Warn("left out: " + c.Device + ": " + c.Why)
	}
	in.Unread = src.unread
	var ws []*job.Result
	switch {
	case o.Wait > 0: // with --want (checkFlags)
		g := &gate{o: o, src: src, libs: libs, in: in, key: want, start: start}
		if ws, ports, err = g.run(o.Ctx, ports); err != nil {
			return err
		}
	case o.Want != "":
		ws = job.WantPartition(libs, in, want, ports)
	default:
		ws = job.Resolve(libs, in, ports)
	}
	rep := newReport(ws, want)
	rep.Hosts = job.Hosts(ports, src.unread) // both from the last read (after --wait too)
	rep.Demo, rep.Via, rep.LeftOut = src.demo, src.via, src.closed
	rep.PeersChecked = rep.Hosts > 1
	if src.fabric != nil && o.Wait == 0 {
		// After a wait the sweep is older than the tables answered from.
		rep.addReach(src.fabric)
	}
	code := rep.exitCode()
	// incomplete says what the answer asked about and could not read or check,
	// whatever the exit: why it is 4, or what a definite no (1) was found beside. An
	// answer of 0 has nothing unchecked (job.Works).
	if code != cmdutil.ExitOK {
		for _, u := range rep.unchecked() {
			rep.Incomplete = append(rep.Incomplete, cmdutil.Incomplete{Kind: cmdutil.IncompleteNotChecked, Message: u})
		}
	}
	// A device of a host that could not be read may be one the job uses: an answer
	// that is otherwise a yes is incomplete (a definite no stays one, and says it in
	// incomplete too), unless no library checked could choose it with the job's
	// settings (job.Choosers). What was not read for the same reason, and could be
	// used by the same libraries, is one warning line naming each (job.Names, as
	// query.PartialError.Lines: a silent --lid range is one line, its transport and
	// hint said once); the first query.MaxListed lines, then one counting the rest.
	// JSON's incomplete has one item each.
	type group struct {
		us []job.Unread // one Why, one set of choosers
		by []string
	}
	var groups []*group
	byKey := map[string]*group{}
	matters := 0
	for _, u := range src.unread {
		by := job.Choosers(ws, u)
		key := u.Why + "\x00" + strings.Join(by, ",")
		g := byKey[key]
		if g == nil {
			g = &group{by: by}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.us = append(g.us, u)
		if len(by) == 0 {
			continue
		}
		matters++
		// The kind the other commands give the same fact: a host's device or port
		// (unread-device), a fabric address or swept port that did not answer
		// (unread-node, cmdutil.HostNotRead), what a sweep's missed links may hide
		// (partial-sweep, as the fabric commands).
		rep.Incomplete = append(rep.Incomplete, cmdutil.Incomplete{Kind: cmp.Or(string(u.Kind), cmdutil.IncompleteUnreadDevice), Message: "not read: " + u.What()})
	}
	rest, mattersRest := 0, 0
	for i, g := range groups {
		if i >= query.MaxListed && len(groups) > query.MaxListed+1 {
			rest += len(g.us)
			if len(g.by) > 0 {
				mattersRest += len(g.us)
			}
			continue
		}
		what := "not read: " + job.Names(g.us) + ": " + g.us[0].Why
		if len(g.by) == 0 {
			n.Warn(what + "; it does not change the answer: with these settings no library checked would use it (their device selection leaves it out)")
		} else {
			n.Warn(what + " (" + strings.Join(g.by, ", ") + " could use it)")
		}
	}
	if rest > 0 {
		switch mattersRest {
		case rest:
			n.Warn(fmt.Sprintf("not read: and %d more (every one is in -o json's incomplete)", rest))
		case 0:
			n.Warn(fmt.Sprintf("not read: and %d more, which no library checked would use either", rest))
		default:
			n.Warn(fmt.Sprintf("not read: and %d more; %d of them a library checked could use (those are in -o json's incomplete)", rest, mattersRest))
		}
	}
	if matters > 0 && code == cmdutil.ExitOK {
		code = cmdutil.ExitIncomplete
	}
	if o.Emit == "env" {
		return o.emitEnv(code, ws, want, ports)
	}
	if err := rep.render(o.IO.Out, o.Format); err != nil {
		return err
	}
	for _, a := range rep.assumptions() {
		n.Note("assumed: " + a)
	}
	if !rep.PeersChecked && o.Want == "" {
		n.Note("one host: this says which entry each library uses here, not whether the job's other hosts can reach it (give --fabric-file with --node, --lid or --host)")
	}
	if code == cmdutil.ExitIncomplete {
		for _, u := range rep.unchecked() {
			n.Warn("not checked: " + u)
		}
	}
	return exit(code)
}

// exit ends the command with code after it has printed its answer.
func exit(code int) error {
	if code == 0 {
		return nil
	}
	return cmdutil.Exit(code)
}

// emitEnv prints the settings as shell export lines, only when the answer is a yes
// (code 0: a device that could not be read makes it 4) and every library checked has
// one value right on every host; otherwise nothing on stdout and why on stderr,
// exiting 1, or 4 when only what was not read keeps one value from being known.
func (o *Options) emitEnv(code int, ws []*job.Result, want check.PKey, ports []*job.Port) error {
	ex := job.EnvExports(ws, want, ports)
	for _, w := range ex.Warnings {
		o.Notices.Warn(w)
	}
	if len(ex.Problems) > 0 || len(ex.Unchecked) > 0 || code != 0 {
		for _, p := range ex.Problems {
			fmt.Fprintln(o.IO.ErrOut, "ibkey: "+p)
		}
		for _, u := range ex.Unchecked {
			fmt.Fprintln(o.IO.ErrOut, "ibkey: not checked: "+u)
		}
		switch {
		case code != 0:
		case len(ex.Problems) > 0:
			code = cmdutil.ExitNo
		default:
			code = cmdutil.ExitIncomplete
		}
		why := "the job cannot be put in partition %s with these settings"
		if code == cmdutil.ExitIncomplete {
			why = "whether the job can be put in partition %s with these settings is not known"
		}
		fmt.Fprintf(o.IO.ErrOut, "ibkey: nothing exported: "+why+"\n", want.Partition().String())
		return exit(code)
	}
	var b strings.Builder
	for _, v := range ex.Vars {
		b.WriteString(v.Line())
		b.WriteByte('\n')
	}
	// Shell lines: never wrapped, whatever the terminal's width.
	_, err := io.WriteString(cmdutil.Unwrapped(o.IO.Out), b.String())
	return err
}

// osMCAFS reads this host's MCA parameter files, nccl.conf and ucx.conf files (a
// few KB; 16 MiB bounds a mistake, and a FIFO is refused rather than waited on).
type osMCAFS struct{}

func (osMCAFS) ReadFile(name string) ([]byte, error) {
	return fsread.ReadFile(name, 16<<20, "a library's settings file")
}

// passwdHome is user uid's home directory (-1: this process's user) in the password
// database (getpwuid, as NCCL before 2.30 asks; without cgo os/user reads /etc/passwd
// only).
func passwdHome(uid int) (string, bool) {
	if uid < 0 {
		uid = os.Getuid()
	}
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return "", false
	}
	return u.HomeDir, true
}

func (osMCAFS) IsDir(name string) bool {
	st, err := os.Stat(name)
	return err == nil && st.IsDir()
}
