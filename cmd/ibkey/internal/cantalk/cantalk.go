// Package cantalk is `ibkey can-talk`: whether two endpoints can talk under the P_Key
// and Q_Key rules, and why. Endpoints are P_Key values, local ports (sysfs), ports in a
// partitions.conf, or ports of the fabric (read over MADs, or from a sweep).
package cantalk

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fsread"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// CanTalkOptions holds `ibkey can-talk`'s arguments and dependencies.
type CanTalkOptions struct {
	cmdutil.Deps
	Host func() *query.Host
	// Demo is --demo: its fabric is swept like a transport chosen on purpose (it sends
	// nothing anywhere), so GUID endpoints are found in it.
	Demo func() bool
	// MAD holds the transport flags (AddMADFlags).
	MAD *cmdutil.MADFlags

	A, B string // the endpoints as typed
	// Partitions is --partitions FILE: GUID endpoints are ports in that partitions.conf,
	// resolved with OpenSM's options in OpenSM.
	Partitions string
	Routers    []string // --router: port GUIDs of router ports, for --partitions
	OpenSM     cmdutil.OpenSMFlags
	// Sweep is --fabric-file and --timeout: where lid=, node= and GUID endpoints are
	// found when they are not read over MADs now.
	Sweep cmdutil.FabricSweep
	// savedSweep reads --fabric-file once: the router ports and the endpoints both
	// come from it.
	savedSweep func() (*fabric.Fabric, error)
	// SA is --sa and --sm-log (sa.go); requester the port GUID the SA was asked from.
	SA        saOptions
	requester check.GUID
}

// NewCmdCanTalk builds `ibkey can-talk`; runF, when not nil, runs instead of runCanTalk
// (tests of argument parsing).
func NewCmdCanTalk(f *cmdutil.Factory, runF func(*CanTalkOptions) error) *cobra.Command {
	o := &CanTalkOptions{Host: f.Host, Demo: f.IsDemo}
	o.savedSweep = sync.OnceValues(func() (*fabric.Fabric, error) { return cmdutil.ReadFabricFile(o.Sweep.File) })
	c := &cobra.Command{
		Use:   "can-talk A B",
		Short: "Whether two endpoints can talk (P_Key and Q_Key rules), and why",
		Long: `Say whether endpoints A and B can talk, in both directions, and why: the P_Key rule
(same 15-bit key, at least one full member), the QP types, and for UD QPs the Q_Key
rule (the sender's wr_qkey, or its QP-context qkey when wr_qkey has the top bit set
or is not given, must equal the receiver's qkey). The top-bit case is the IBA's;
Linux's rdma_rxe sends wr_qkey verbatim, so where the sender's device, or its
driver, is not known and the two give different answers, the answer is UNKNOWN.

An endpoint is a base and options, ENDPOINT := BASE {,KEY=VALUE}:
  0x8001                       a QP using that P_Key (also 8001, 80:01)
  mlx5_0/1                     a local port: every valid entry of its P_Key table
  mlx5_0/1,index=3             a QP on that port using table entry 3
  mlx5_0/1,pkey=0x8001         a QP on that port using partition 0x0001 (the entry
                               the kernel's ib_find_pkey picks: a full member
                               preferred; ibv_get_pkey_index wants all 16 bits)
  pkey=0x8001,qp=ud,qkey=0x11  options only
  lid=3  lid=3,port=2          a port of the fabric found by LID in a sweep: the
                               port LID 3 belongs to (a CA port, a switch's
                               port 0), or port P of that node (a switch's:
                               port 0 only, its external ports hold no QP)
  node=HcaB  node=HcaB,port=1  a port of the fabric found by node description (or
                               node GUID) in a sweep: a switch's port 0, a CA's one
                               cabled port (port= when it has several)
  0x0002c90300000204           a port GUID (or node GUID, with port=), see below
  guid=0x0002c90300000204
Options: pkey=PKEY, index=N, qp=rc|uc|ud, qkey=QKEY (the QP context's),
wr_qkey=QKEY (the send request's), port=P (with lid=, node= or a GUID).

Where fabric endpoints are read, in this order:
  - a GUID: with --partitions FILE, the table OpenSM would program on that port from
    FILE (the intended state; index= and port= do not apply). Else with --fabric-file
    FILE, the port in that saved sweep. Else, only when a fabric transport is chosen
    explicitly (--ibsim, IBKEY_IBSIM, --ca) or with --demo, the port in a sweep run
    now. Otherwise a GUID exits 2 saying so (a long hex value is often a mistyped
    P_Key, and a sweep reads the whole subnet).
  - node=NAME: the saved sweep (--fabric-file), else a sweep run now through the
    transport the flags select (default: umad on the first ACTIVE InfiniBand port).
  - lid=N: the port with that LID in the saved sweep (--fabric-file), else in a sweep
    run now. A sweep holds the switch ports facing both ends: their tables and
    partition enforcement are checked with fabric check's rule, and the reasons name
    the hop that drops the partition.
The port each fabric endpoint resolved to is named on stderr.

With --partitions FILE the reasons name the lines of FILE that gave each port its
entry (FILE:LINE:COL and the member item). A GUID the file does not name gets what
ALL and ALL_CAS (a router port: ALL_ROUTERS) give it. OpenSM applies ALL_CAS and
ALL_ROUTERS by node type, which a file does not say: --router names the router ports
(--router none: there are none; --fabric-file: the sweep's types), the others being
CA ports. Without them, when the answer depends on whether a port is a router port,
it is UNKNOWN (exit 4) and says what each type gives. --sm-guid says which port SELF is, --allow-both mirrors
OpenSM's -W, --table-size drops the entries a table cannot hold, as for
'ibkey partitions show'; --opensm-conf FILE reads the first two from OpenSM's
opensm.conf, and without --partitions its partition_config_file is the file.
A file OpenSM rejects is applied as Default=0x7fff, ipoib : ALL=full.
When what OpenSM does with the file cannot be predicted, an end taken from it is
the file as written and the answer is UNKNOWN (exit 4).

Output: the verdict first (YES, NO, or ONE-WAY when only one direction works; NO
(NOT ACTIVE) for a port not ACTIVE; UNKNOWN, exit 4, as below), the rules that
decided it, then for a port the shared partitions: each side's entry and
index and whether that partition works (? when a switch port facing an end was not
read for it: the reasons name it). Warnings (a port not ARMED/ACTIVE, RoCE) and
notes (a rule not checked, a Q_Key ignored) go to stderr.

JSON (-o json; schemas/can-talk.schema.json): {"schema_version","demo"?,"can_talk","one_way",
"verdict","not_checked"?,"reasons":[],"warnings":[],
"a"/"b":{"label","is_port","qp_type","qkey","wr_qkey","qkey_rule","qkey_rule_reason"},
"a_to_b"/"b_to_a":{"from","to","ok","link_ok","qp_type_ok","pkey_ok","qkey_check",
"wire_qkey","accepted_qkey","switch_ok"?,"unknown"?,"reasons"},
"shared_partitions":[{"key","default","works",
"a"/"b":{"pkey","membership","index","both_memberships","other_index"}}],
"shared_partitions_complete","hops"?} (shared_partitions_complete false: entries of
an end were not read, and shared_partitions, what those read share, may miss one,
even on a yes; index null: not known, e.g. an entry not read may be the one
ib_find_pkey picks for pkey=).
verdict is yes, no, one-way, not-active, different-subnets or unknown (exit 4; then
not_checked lists what was not read; can_talk and one_way are then null, as for
different-subnets); a direction's ok, link_ok, pkey_ok and
switch_ok are null when not known (not read, or an entry or assumption taken that
would change them), never a true or false not checked, and one_way is null on a
one-way whose working direction the Subnet Manager does not confirm (--sa); is_port says the endpoint is a port (every
valid entry of its table), not one P_Key; works is null where WORKS is ? (a switch port not read, or an
assumption not given or an entry not read would decide it otherwise), and a side
("a"/"b") has every field null where its entry is ? (an assumption not given would
give that end another entry, or none). qkey_check is match, mismatch, not_checked
or not_applicable; qkey_rule is the Q_Key send rule applied to that endpoint: "iba"
(a top-bit wr_qkey sends the QP's own Q_Key: a device whose driver is known, taken
to follow the IBA), "verbatim" (the device sends wr_qkey as given: Linux's rdma_rxe)
or "iba-assumed" (no device, or its driver is not known; where it decides, the
direction is not_checked and the answer UNKNOWN), with the reason;
the reasons name it when Q_Keys were checked; "incomplete":[{"kind","message"}] is
added whenever something the answer asked about was not read or checked: on exit 4,
and on exit 1 when the no was found beside it (an end's table or entries, a switch
port facing an end, a link layer, with --sa an SM that could not be asked); never on
a yes (kind
unread-entries, unread-table, different-subnets or not-checked). When an endpoint's table lacks the P_Key or index it asks for (a
definite no, with no incomplete: nothing in it rests on what was not read; an entry
that was not read, or with --partitions a port type or SELF not given that would give
the port the key and change the answer, gives the verdict above):
{"schema_version","can_talk":false,"one_way":false,"verdict":"no","reasons",
"warnings","unresolved":{"endpoint":"a"|"b","spec","problem"}}; from a --partitions
file whose outcome in OpenSM cannot be predicted, can_talk and one_way are null,
verdict "unknown", and "incomplete" says why (exit 4).`,
		Example: `  ibkey can-talk 0x8001 0x0001
  ibkey can-talk mlx5_0/1 mlx5_1/1
  ibkey can-talk mlx5_0/1,index=2 0x0002
  ibkey can-talk pkey=0x8001,qp=ud,qkey=0x11 pkey=0x0001,qp=ud,qkey=0x12 -o json
  ibkey can-talk --partitions p.conf 0x0002c90300000201 0x0002c90300000204
  ibkey can-talk --ibsim lid=3 lid=7,qp=ud,qkey=0x11
  ibkey can-talk --fabric-file fabric.json node=HcaB node=HcaD,port=2`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeEndpoints(f, o),
		RunE: cmdutil.RunE(f, o, &o.Deps, func(_ *cobra.Command, args []string) error {
			o.A, o.B = args[0], args[1]
			return nil
		}, runF, runCanTalk),
	}
	o.MAD = cmdutil.AddMADFlags(c, f)
	o.Sweep.MAD = o.MAD
	c.Flags().StringVar(&o.Partitions, "partitions", "", "resolve port GUIDs from this OpenSM partitions.conf (`FILE`; - for standard input)")
	c.Flags().StringSliceVar(&o.Routers, "router", nil, "with --partitions: the router ports' `GUIDS` (comma-separated; none: there are none), the others being CA ports: ALL_ROUTERS names router ports, ALL_CAS CA ports (a saved sweep, --fabric-file, also tells)")
	_ = c.MarkFlagFilename("partitions")
	o.OpenSM.AddFlags(c)
	o.OpenSM.AddConfFlag(c, "")
	o.Sweep.AddFileFlags(c, "stop the sweep after this long and report what was read (exit 4 when an endpoint is not in what was read)")
	addSAFlags(c, &o.SA)
	_ = c.RegisterFlagCompletionFunc("timeout", cmdutil.CompleteDurations("30s", "1m", "5m", "10m"))
	cmdutil.SetExits(c,
		cmdutil.ExitMeaning{Code: cmdutil.ExitOK, Meaning: "they can talk"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitNo, Meaning: "they cannot (also ONE-WAY, and NOT ACTIVE: a port that is not ACTIVE passes no data now, whether or not its table was read), or an endpoint asks for a P_Key or index its port's table does not hold, or pins an empty entry: no QP there can use it, which is a definite no"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitUsage, Meaning: "bad input: an endpoint, flag or file (one line names it)"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitEnv, Meaning: "no such device or port (those that exist are listed), or no P_Key table (iWARP)"},
		cmdutil.ExitMeaning{Code: cmdutil.ExitIncomplete, Meaning: "UNKNOWN: the answer depends on what was not read (unreadable P_Key entries, a pinned entry, a port's table, a device, a switch port's table; a link between switches that enforces partitions and lacks theirs, or whose table or enforcement bits were not read, where routes are not read), listed on stderr, or on what was not given (a port's type with --partitions, router or CA; UD QPs' Q_Keys; the Q_Key send rule of a device not known, where a top-bit wr_qkey makes it decide) or cannot be predicted (what OpenSM does with the --partitions file), or the ports are on different subnets (GID prefixes), or may be (their master SM LIDs differ), and only a router, which is not checked, could join them, or (--sa) the Subnet Manager does not confirm the tables' yes (a no it does not confirm stays 1, and a warning says what it did not confirm; a ONE-WAY it does not confirm stays 1, and its working direction is said to be only what the tables read)"},
	)
	return c
}

// parseEndpointArg parses one argument; an error about a token inside it says which
// argument it came from.
func parseEndpointArg(arg string) (check.EndpointSpec, error) {
	spec, err := check.ParseEndpoint(arg)
	var pe *check.ParseError
	if errors.As(err, &pe) && pe.Input != arg {
		return spec, fmt.Errorf("endpoint %q: %w", arg, err)
	}
	return spec, err
}

// ipoibEndpoint reads an endpoint whose base is an IPoIB interface name (ib0.8001,
// ib0.8001,qp=ud) as a QP on the interface's port using the interface's P_Key:
// DEV/PORT,pkey=PKEY (the entry is found as the kernel does for IPoIB, ib_find_pkey:
// 15-bit match, a full member preferred). It returns ifc nil when the base is not a
// name (a mistyped P_Key keeps its own error) or is a device (DEV without /PORT);
// a name that is neither a device nor an interface is exit 3 listing both.
func ipoibEndpoint(o *CanTalkOptions, arg string) (string, *query.ResolvedInterface, error) {
	base, opts, _ := strings.Cut(arg, ",")
	if !looksLikeName(base) {
		return "", nil, nil
	}
	sel, ifc, err := o.Host().ResolveDeviceOrInterface(query.Selector{Device: base}, o.Notices.Warn)
	if err != nil || ifc == nil {
		return "", nil, err
	}
	for _, opt := range strings.Split(opts, ",") {
		if strings.HasPrefix(opt, "pkey=") || strings.HasPrefix(opt, "index=") {
			return "", nil, cmdutil.Usagef("endpoint %q: %s uses P_Key %s on %s: %s does not apply (for another entry write %s,%s)", arg, base, ifc.PKey, ifc.Port, opt, ifc.Port, opt)
		}
	}
	out := fmt.Sprintf("%s,pkey=%s", query.PortRef{Device: sel.Device, Port: sel.Port}, ifc.PKey)
	if opts != "" {
		out += "," + opts
	}
	return out, ifc, nil
}

// looksLikeName: a device or interface name starts with a letter and is not all hex
// digits (ffff is a P_Key).
func looksLikeName(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') || strings.ContainsAny(s, "=/:") {
		return false
	}
	return strings.Trim(s, "0123456789abcdefABCDEF") != ""
}

// resolve reads the endpoints from where they live (see the command's help): the host,
// the partitions file, a saved sweep, or the fabric now. An endpoint whose source was
// not given is an error the caller words with the flags that give it (withSourceFlags).
func (o *CanTalkOptions) resolve(src query.EndpointSources, specA, specB check.EndpointSpec) ([]query.ResolvedEndpoint, error) {
	need, guid := query.NeedsFabric(src.Partitions != nil, specA, specB)
	switch {
	case !need:
		return query.ResolveEndpointsFrom(src, specA, specB)
	case o.Sweep.File != "":
		src.Sweep = o.savedSweep
		src.SweepName = o.Sweep.File
		return query.ResolveEndpointsFrom(src, specA, specB)
	case guid && !o.MAD.Explicit() && !o.Demo(): // a GUID sweeps the fabric only for a transport chosen on purpose, or the demo's
		for i, s := range []check.EndpointSpec{specA, specB} {
			if s.Kind == check.EndpointGUID {
				return nil, query.CheckResolvable([]string{o.A, o.B}[i], s)
			}
		}
	}
	var eps []query.ResolvedEndpoint
	err := o.MAD.With(o.Ctx, func(ctx context.Context, fab *query.Fabric) error {
		// lid= endpoints are found in the sweep too, not read alone over MADs: the
		// sweep holds the switch ports facing each end, so their tables and
		// enforcement are checked with the same rule as fabric check (issue 11 item
		// 12); reading only the two end tables could answer yes where a switch drops
		// the partition.
		// The sweep, with the P_Key tables, is bounded by --timeout from now; one
		// that stopped early comes back with what it read and the error, one that
		// read nothing is an environment error.
		src.Sweep = func() (*fabric.Fabric, error) {
			f, err := query.Sweep(ctx, fab.T, query.SweepOptions{Timeout: o.Sweep.Timeout, Source: fab.Via})
			if f == nil {
				return nil, &query.EnvError{Msg: fmt.Sprintf("%v (via %s)", err, fab.Via), Err: err}
			}
			return f, err
		}
		src.SweepName = "a sweep via " + fab.Via
		var err error
		eps, err = query.ResolveEndpointsFrom(src, specA, specB)
		return err
	})
	return eps, err
}

func runCanTalk(o *CanTalkOptions) error {
	if o.SA.SMLog != "" && !o.SA.Ask {
		return cmdutil.Usagef("--sm-log quotes the Subnet Manager's refusal: it needs --sa")
	}
	// --router's GUIDs are checked whether or not this pair needs them.
	if err := new(query.Partitions).SetPortTypes(o.Routers, nil); err != nil {
		return err
	}
	// A --sm-log that cannot be read (not there, a directory, no permission) is bad
	// input, refused before the endpoints are resolved and named on stderr (askSA
	// reads its size later, when it asks): else a log not read would be said to give
	// no reason for a refusal.
	if o.SA.SMLog != "" {
		f, err := fsread.Open(o.SA.SMLog, 1<<62, "an OpenSM log")
		if err != nil {
			return cmdutil.Usagef("--sm-log: %v", err)
		}
		f.Close()
	}
	// Every flag is checked, also one this pair of endpoints does not use: a bad
	// value is a mistake either way (issue 28: --table-size 0; --timeout -1s is
	// refused before any command runs).
	if _, err := o.OpenSM.Options(); err != nil {
		return err
	}
	var ifcs []*query.ResolvedInterface
	parse := func(arg string) (check.EndpointSpec, error) {
		spec, err := parseEndpointArg(arg)
		if err == nil {
			return spec, nil
		}
		rewritten, ifc, ierr := ipoibEndpoint(o, arg)
		if ierr != nil {
			return spec, ierr
		}
		if ifc == nil {
			return spec, err
		}
		ifcs = append(ifcs, ifc)
		return parseEndpointArg(rewritten)
	}
	specA, err := parse(o.A)
	if err != nil {
		return err
	}
	specB, err := parse(o.B)
	if err != nil {
		return err
	}
	var parts *query.Partitions
	if o.Partitions != "" || o.OpenSM.Conf != "" {
		if parts, err = o.OpenSM.LoadFile(&o.Partitions, &o.Deps); err != nil {
			return err
		}
		// The node types --router gives and, with --fabric-file, those of the sweep's
		// ports and their table lengths: OpenSM gives a port ALL_ROUTERS' or ALL_CAS'
		// entries by its node type (osm_prtn_config.c), so a router's GUID must not be
		// taken for a CA's, and drops what does not fit its table.
		var f *fabric.Fabric
		if o.Sweep.File != "" {
			if f, err = o.savedSweep(); err != nil {
				return err
			}
		}
		if err = parts.SetPortTypes(o.Routers, f); err != nil {
			return err
		}
	}
	// The host is read only when an endpoint names a port: `can-talk 0x8001 0x0001`
	// answers on a machine without RDMA devices.
	var host *query.Host
	// A port that is not ACTIVE, or on another subnet, has its own verdict (query's
	// setPortRules).
	src := query.EndpointSources{Host: func() *query.Host { host = o.Host(); return host }, Partitions: parts}
	eps, err := o.resolve(src, specA, specB)
	err = withSourceFlags(err)
	n := o.Notices
	// demo: an endpoint read from the demo host, or from the demo fabric (--demo
	// with no transport of its own).
	demo := host != nil && host.Label != ""
	if host != nil {
		n.Label(host.Label)
	}
	for _, ifc := range ifcs {
		n.Label(ifc.Describe())
	}
	for _, e := range eps {
		if e.Resolved != "" {
			n.Label(e.Resolved)
			demo = demo || o.Demo() && !o.MAD.Explicit()
		}
	}
	var rerr *check.ResolveError
	if errors.As(err, &rerr) {
		return cannotResolve(o, parts, specA, specB, rerr, demo)
	}
	if err != nil {
		return err
	}

	v := query.CanTalk(eps[0], eps[1])
	for _, e := range eps {
		// A GUID end its predicted table gives no entry of pkey='s partition, which
		// an assumption not checked would give one (query.ResolveEndpointsFrom): a
		// no that does not depend on the assumption is said as any other such no.
		if e.Endpoint.NoEntry != "" && v.Kind != check.VerdictUnknown {
			return cannotResolve(o, parts, specA, specB, &check.ResolveError{Endpoint: e.Spec.String(), Problem: e.Endpoint.NoEntry + noEntryAsTaken(e)}, demo)
		}
	}
	if parts != nil {
		uncertainFile(&v, parts, eps)
		v.Reasons = append(v.Reasons, partitionReasons(parts, v, eps)...)
	}
	v.Reasons = append(v.Reasons, qkeyRuleReasons(v)...)
	// --sa: the Subnet Manager's own answer, compared (sa.go).
	var sa *saAnswer
	saUndidYes := false
	if o.SA.Ask {
		if sa, err = o.askSA(eps, v); err != nil {
			return err
		}
		lines := []string{"SM: " + sa.Reason}
		if sa.LogLine != "" {
			lines = append(lines, "SM log: "+sa.LogLine)
		}
		if sa.Unknown && v.Kind == check.VerdictYes {
			// A yes the SM does not confirm is not known (exit 4: "never a yes or
			// no"); its reason is then the verdict's not-checked sentence, said once.
			// A definite no stays one (exit 1): what the SM did not confirm is a
			// warning.
			v.DependsOn(check.NotChecked{Cause: check.NotCheckedSubnetManager, Sentence: sa.Reason})
			lines, saUndidYes = lines[1:], true
		}
		if sa.Unknown && v.Kind == check.VerdictOneWay {
			unconfirmedOneWay(&v)
		}
		v.Reasons = append(v.Reasons, lines...)
	}
	// Port warnings first (a stale or RoCE table undermines everything after it), once
	// per port; they go in the JSON too.
	var warnings []string
	seen := map[query.PortRef]bool{}
	for _, e := range eps {
		if e.View != nil && !seen[e.View.Ref()] {
			seen[e.View.Ref()] = true
			warnings = append(warnings, e.View.Warnings...)
		}
	}
	v.Warnings = append(warnings, v.Warnings...)

	if o.Format == cmdutil.FormatJSON {
		j := verdictToJSON(v, eps)
		j.Demo = demo
		saReason := ""
		if sa != nil {
			j.SA = saToJSON(sa)
			if sa.Unknown && v.Kind.ExitCode() == cmdutil.ExitNo {
				j.Warnings = append(j.Warnings, "not checked: "+sa.Reason)
				if sa.Unasked {
					saReason = sa.Reason
				}
			}
		}
		j.Incomplete = append(j.Incomplete, noIncomplete(v, eps, saReason)...)
		if err := cmdutil.WriteJSON(o.IO.Out, j); err != nil {
			return err
		}
	} else if err := canTalkText(o, v, eps); err != nil {
		return err
	}
	// Port warnings undermine the answer; the verdict's own warnings are notes (a rule
	// not checked, a Q_Key ignored, the entry a QP would really use).
	for i, w := range v.Warnings {
		if i < len(warnings) {
			n.Warn(w)
		} else {
			n.Note(w)
		}
	}
	if v.Kind == check.VerdictUnknown {
		for _, nc := range v.NotChecked {
			n.Warn("not checked: " + nc.Sentence)
		}
	}
	if sa != nil && sa.Unknown && !saUndidYes {
		// The SM's answer and the tables read disagree, or the SM did not answer for
		// these ends (a yes it undid says so above): a definite no is not confirmed
		// either, but the tables read, the port states and the Q_Keys decide it
		// whatever the SM believes (exit 1: "also in a partial read: what was found
		// is definite", cmdutil.ExitCodes).
		n.Warn("not checked: " + sa.Reason)
	}
	if code := v.Kind.ExitCode(); code != cmdutil.ExitOK {
		return cmdutil.Exit(code)
	}
	return nil
}

// uncertainFile: when OpenSM's outcome for the partitions file cannot be predicted
// (partconf.Config.Uncertain: it reads uninitialised bytes of its line buffer,
// opensm/osm_prtn_config.c) and an end's table came from it, the verdict is that of
// the file as written, not known (exit 4), as partitions show, check and matrix say:
// the P_Key rule and each shared partition's works are not known either.
func uncertainFile(v *check.Verdict, parts *query.Partitions, eps []query.ResolvedEndpoint) {
	u := cmdutil.UncertainIncomplete(parts.Config)
	if u == nil || !slices.ContainsFunc(eps, func(e query.ResolvedEndpoint) bool { return e.Model != nil }) {
		return
	}
	v.DependsOn(check.NotChecked{Cause: check.NotCheckedFile,
		Sentence: u.Message + "; the tables taken are those of the file as written"})
	for _, d := range []*check.Direction{&v.AToB, &v.BToA} {
		d.PKeyOK = check.RuleNotKnown
	}
	for i := range v.Shared {
		v.Shared[i].WorksNotKnown = true
	}
}

// qkeyRuleReasons names the Q_Key send rule applied to each sender when Q_Keys were
// checked (UD): it decides what a top-bit wr_qkey puts on the wire, and it is the
// device's (check.QKeyRuleFor), or assumed.
func qkeyRuleReasons(v check.Verdict) []string {
	if v.AToB.QKey == check.QKeyNotApplicable && v.BToA.QKey == check.QKeyNotApplicable {
		return nil
	}
	rule := func(s check.EndpointSummary) string {
		name, _ := s.QKeyRule.MarshalText()
		return fmt.Sprintf("Q_Key send rule of %%s (%s): %s", name, s.QKeyRuleReason)
	}
	a, b := rule(v.A), rule(v.B)
	if a == b {
		return []string{fmt.Sprintf(a, v.A.Label+" and "+v.B.Label)}
	}
	return []string{fmt.Sprintf(a, v.A.Label), fmt.Sprintf(b, v.B.Label)}
}

// unconfirmedOneWay: the Subnet Manager does not confirm a one-way verdict (--sa: it
// refuses the path, or could not be asked). The failing direction stays a definite no
// (exit 1); the working one is only what the tables read say, so it is not known to
// work (ok false, unknown true, as check.Verdict.DependsOn marks an unconfirmed yes).
func unconfirmedOneWay(v *check.Verdict) {
	ok, bad := &v.AToB, &v.BToA
	if !ok.OK {
		ok, bad = bad, ok
	}
	sentence := fmt.Sprintf("the tables read say %s → %s works; the Subnet Manager does not confirm it", ok.From, ok.To)
	ok.OK, ok.Unknown = false, true
	ok.Reasons = append([]string{"not known: " + sentence}, ok.Reasons...)
	for i, r := range v.Reasons {
		if strings.HasPrefix(r, "one way only:") {
			v.Reasons[i] = fmt.Sprintf("one way only: %s → %s is dropped; %s", bad.From, bad.To, sentence)
		}
	}
}

// headline is the verdict line: YES / NO / ONE-WAY first, so `| head -1` answers.
func headline(v check.Verdict) string {
	switch {
	case v.CanTalk():
		return fmt.Sprintf("YES: %s and %s can talk", v.A.Label, v.B.Label)
	case v.OneWay():
		ok, bad := v.AToB, v.BToA
		if !ok.OK && !ok.Unknown { // unknown: unconfirmedOneWay
			ok, bad = bad, ok
		}
		if ok.Unknown {
			return fmt.Sprintf("ONE-WAY: %s → %s does not work; the tables read say %s → %s works, the Subnet Manager does not confirm it", bad.From, bad.To, ok.From, ok.To)
		}
		return fmt.Sprintf("ONE-WAY: %s → %s works, %s → %s does not", ok.From, ok.To, bad.From, bad.To)
	}
	switch v.Kind {
	case check.VerdictNotActive:
		return fmt.Sprintf("NO (NOT ACTIVE): %s and %s cannot talk now", v.A.Label, v.B.Label)
	case check.VerdictDifferentSubnets:
		return fmt.Sprintf("UNKNOWN (DIFFERENT SUBNETS): %s and %s can reach each other only through a router, which is not checked", v.A.Label, v.B.Label)
	case check.VerdictUnknown:
		if len(v.NotChecked) == 1 && v.NotChecked[0].Cause == check.NotCheckedQKeys {
			return fmt.Sprintf("UNKNOWN: whether %s and %s can talk depends on their Q_Keys, which were not given", v.A.Label, v.B.Label)
		}
		if len(v.NotChecked) == 1 && v.NotChecked[0].Cause == check.NotCheckedQKeySendRule {
			return fmt.Sprintf("UNKNOWN: whether %s and %s can talk depends on the Q_Key send rule of a device that is not known", v.A.Label, v.B.Label)
		}
		if slices.ContainsFunc(v.NotChecked, func(nc check.NotChecked) bool { return nc.Cause == check.NotCheckedFile }) {
			return fmt.Sprintf("UNKNOWN: whether %s and %s can talk depends on what OpenSM does with the partitions file, which cannot be predicted", v.A.Label, v.B.Label)
		}
		if len(v.NotChecked) > 0 && !slices.ContainsFunc(v.NotChecked, func(nc check.NotChecked) bool { return nc.Cause != check.NotCheckedAssumption }) {
			// Only assumptions about a partitions file's ports (query's alternatives).
			return fmt.Sprintf("UNKNOWN: whether %s and %s can talk depends on what was not given (--sm-guid, --router)", v.A.Label, v.B.Label)
		}
		if len(v.NotChecked) == 1 && v.NotChecked[0].Cause == check.NotCheckedSubnet {
			return fmt.Sprintf("UNKNOWN: the tables read say %s and %s can talk; whether one Subnet Manager manages both is not known (their master SM LIDs differ)", v.A.Label, v.B.Label)
		}
		if len(v.NotChecked) == 1 && v.NotChecked[0].Cause == check.NotCheckedSubnetManager {
			return fmt.Sprintf("UNKNOWN: the tables read say %s and %s can talk; the Subnet Manager does not confirm it", v.A.Label, v.B.Label)
		}
		return fmt.Sprintf("UNKNOWN: whether %s and %s can talk depends on what was not read", v.A.Label, v.B.Label)
	}
	return fmt.Sprintf("NO: %s and %s cannot talk", v.A.Label, v.B.Label)
}

func canTalkText(o *CanTalkOptions, v check.Verdict, eps []query.ResolvedEndpoint) error {
	w := o.IO.Out
	fmt.Fprintln(w, headline(v))
	for _, r := range v.Reasons {
		if v.OneWay() && strings.HasPrefix(r, "one way only:") {
			continue // the headline says it
		}
		fmt.Fprintf(w, "  %s\n", r)
	}
	// The shared-partition table is the detail for ports; for two P_Key values the
	// reasons already say everything.
	if eps[0].View == nil && eps[1].View == nil && eps[0].Model == nil && eps[1].Model == nil {
		return nil
	}
	fmt.Fprintln(w)
	legend := fmt.Sprintf("Shared partitions (A = %s, B = %s):", eps[0].Spec, eps[1].Spec)
	// A lower bound, even on a yes: an entry not read may hold one more.
	short := ""
	if query.SharedMayBeShort(eps) {
		short = "(only those in the entries read: entries not read may hold more)"
	}
	if v.SharedAssumed {
		short = cmp.Or(short, "(only those of the ends as taken: an assumption not given adds more; see notes)")
	}
	if len(v.Shared) == 0 {
		fmt.Fprintln(w, legend, "none")
		if short != "" {
			fmt.Fprintln(w, short)
		}
		return nil
	}
	fmt.Fprintln(w, legend)
	g := cmdutil.Grid{Header: []string{"KEY", "A_ENTRY", "A_INDEX", "B_ENTRY", "B_INDEX", "MEMBERSHIPS", "WORKS", "NOTES"},
		Required: []string{"KEY", "WORKS"}, Optional: [][]string{{"MEMBERSHIPS"}, {"A_INDEX", "B_INDEX"}}}
	for _, sp := range v.Shared {
		var notes []string
		if sp.Key == check.DefaultPartition {
			notes = append(notes, "default")
		}
		if !sp.Works && !sp.A.NotKnown && !sp.B.NotKnown {
			notes = append(notes, "both limited")
		}
		works := cmdutil.YesNo(sp.Works && sp.Switch == check.HopPasses)
		switch sp.Switch {
		case check.HopDrops:
			notes = append(notes, "switch drops")
		case check.HopUnknown:
			works = "?" // the reasons name the switch port not read, or the link
			if sp.Links {
				notes = append(notes, "link between switches")
			} else {
				notes = append(notes, "switch not read")
			}
		}
		if sp.WorksNotKnown {
			works = "?" // a warning says on what
			notes = append(notes, "not known")
		}
		for _, s := range []struct {
			name string
			side check.PartitionSide
		}{{"A", sp.A}, {"B", sp.B}} {
			if s.side.Both && !s.side.NotKnown {
				other := s.side.PKey ^ check.MembershipBit // the same key, the other membership
				notes = append(notes, fmt.Sprintf("%s also %s at %d", s.name, other, s.side.OtherIndex))
			}
		}
		// An entry not known (an assumption not given decides it) is "?".
		entry := func(s check.PartitionSide) (string, string) {
			if s.NotKnown {
				return "?", "?"
			}
			return s.PKey.String(), s.PKey.Membership().String()
		}
		aEntry, aMember := entry(sp.A)
		bEntry, bMember := entry(sp.B)
		g.Add(sp.Key.String(), aEntry, indexCell(sp.A.Index), bEntry, indexCell(sp.B.Index), aMember+"/"+bMember, works, strings.Join(notes, ","))
	}
	if err := g.Render(w, o.Format); err != nil {
		return err
	}
	if short != "" {
		fmt.Fprintln(w, short)
	}
	return nil
}

func indexCell(i int) string {
	if i == check.NoIndex {
		return ""
	}
	return strconv.Itoa(i)
}

// cannotResolve reports an endpoint whose table lacks the key or index it asks for: no
// QP there can exist, so the answer is a definite no (exit 1), said like any other no.
// It is definite whatever was not read, and so has no incomplete: a QP sends the P_Key
// at its own P_Key index (IBA 10.9), so index= depends on that one entry alone, read
// (holding another partition, or empty) or beyond the table's length (the kernel's
// ib_get_cached_pkey refuses it, drivers/infiniband/core/cache.c); pkey= is refused
// only when every entry was read (ib_find_pkey searches them all; with entries not
// read query's findEntry decides) or for key 0, which matches nothing; a swept table
// is read whole or not at all; a GUID's predicted table only when no assumption not
// checked gives it the key (query.ResolveEndpointsFrom). The other end cannot change
// it: there is no QP on this one to talk to, and nothing in this document rests on
// what was not read (TestCannotResolveIsDefinite).
func cannotResolve(o *CanTalkOptions, parts *query.Partitions, specA, specB check.EndpointSpec, rerr *check.ResolveError, demo bool) error {
	side, spec := "b", specB
	if rerr.Endpoint == specA.String() {
		side, spec = "a", specA
	}
	reason := fmt.Sprintf("%s: %s", rerr.Endpoint, rerr.Problem)
	if o.SA.Ask {
		// No QP there can use the key: there is no pair for the SM to answer about.
		reason += "; the Subnet Manager was not asked (--sa): its answer would be about a QP that cannot exist"
	}
	// A table predicted from a file whose outcome in OpenSM cannot be predicted is the
	// file as written: the no is not known (uncertainFile).
	var uncertain *cmdutil.Incomplete
	if parts != nil && spec.Kind == check.EndpointGUID {
		uncertain = cmdutil.UncertainIncomplete(parts.Config)
	}
	v := check.Verdict{Kind: check.VerdictNo, A: check.EndpointSummary{Label: specA.String()}, B: check.EndpointSummary{Label: specB.String()}}
	doc := verdictJSON{CanTalk: new(bool), OneWay: new(bool), Verdict: v.Kind.String(), Reasons: []string{reason}, Warnings: []string{},
		Unresolved: &unresolvedJSON{side, rerr.Endpoint, rerr.Problem}, Demo: demo}
	if uncertain != nil {
		v.Kind, v.NotChecked = check.VerdictUnknown, []check.NotChecked{{Cause: check.NotCheckedFile}}
		doc.CanTalk, doc.OneWay, doc.Verdict = nil, nil, v.Kind.String()
		doc.Reasons = []string{"not known: " + uncertain.Message + "; as written: " + reason}
		doc.Incomplete = []cmdutil.Incomplete{*uncertain}
	}
	if o.Format == cmdutil.FormatJSON {
		if err := cmdutil.WriteJSON(o.IO.Out, doc); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(o.IO.Out, "%s\n  %s\n", headline(v), doc.Reasons[0])
	}
	return cmdutil.Exit(v.Kind.ExitCode())
}

// completeEndpoints offers, for A and B, the port GUIDs of --partitions FILE when given
// earlier on the line, the host's ports (DEV/PORT, described by link layer and state)
// and the P_Keys in their tables; lid= and node= from --fabric-file (or the host's own
// LIDs); after a comma, the options; after pkey= and index=, the port's keys and
// indexes. Every choice is the whole word (the shell replaces what it must: see
// cmdutil.GenBashCompletion); completion never sends MADs.
func completeEndpoints(f *cmdutil.Factory, o *CanTalkOptions) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= 2 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		const noFile = cobra.ShellCompDirectiveNoFileComp
		i := strings.LastIndex(toComplete, ",")
		done, item := toComplete[:i+1], toComplete[i+1:]
		if key, val, isOpt := strings.Cut(item, "="); isOpt {
			base := ""
			if i >= 0 {
				base = toComplete[:i]
				base, _, _ = strings.Cut(base, ",")
			}
			var out []cobra.Completion
			for _, v := range optionValues(f, o, base, key) {
				if strings.HasPrefix(v, val) {
					out = append(out, done+key+"="+v)
				}
			}
			return out, noFile | cobra.ShellCompDirectiveKeepOrder
		}
		if i >= 0 {
			base, _, _ := strings.Cut(toComplete, ",")
			opts := []string{"pkey=", "index=", "qp=", "qkey=", "wr_qkey="}
			if strings.HasPrefix(base, "lid=") || strings.HasPrefix(base, "node=") || strings.HasPrefix(base, "guid=") || isGUID(base) {
				opts = append(opts, "port=")
			}
			given := map[string]bool{}
			for _, it := range strings.Split(done, ",") {
				if k, _, ok := strings.Cut(it, "="); ok {
					given[k+"="] = true
				}
			}
			var out []cobra.Completion
			for _, opt := range opts {
				if strings.HasPrefix(opt, item) && !given[opt] {
					out = append(out, done+opt)
				}
			}
			return out, noFile | cobra.ShellCompDirectiveNoSpace
		}
		var guids []cobra.Completion
		if o.Partitions != "" {
			guids = cmdutil.FileGUIDCompletions(o.Partitions)
		}
		var fabric []cobra.Completion
		if o.Sweep.File != "" {
			fabric = append(fabric, cobra.CompletionWithDesc("lid=", "a port of the fabric by LID"), cobra.CompletionWithDesc("node=", "a port of the fabric by node description"))
		}
		views, err := f.Host().Load(query.Selector{}, query.LoadOptions{Tables: true})
		if err != nil {
			return append(guids, fabric...), noFile
		}
		var ports []cobra.Completion
		for _, v := range views {
			if v.Table == nil {
				continue // no P_Keys (iWARP): nothing to check
			}
			desc := strings.TrimSpace(v.LinkLayer() + " " + v.Port.State.Name)
			ports = append(ports, cobra.CompletionWithDesc(v.Ref().String(), desc))
		}
		return append(append(append(guids, fabric...), ports...), cmdutil.PKeyCompletions(views)...), noFile
	}
}

// isGUID reports whether an endpoint base is a long hex value (a GUID endpoint).
func isGUID(base string) bool {
	spec, err := check.ParseEndpoint(base)
	return err == nil && spec.Kind == check.EndpointGUID
}

// optionValues are the values offered for KEY= in an endpoint whose base is base:
// a port's P_Keys (pkey=) and valid indexes (index=), QP types, LIDs and node names
// from --fabric-file (or, for LIDs, the host's own ports), each with a description.
func optionValues(f *cmdutil.Factory, o *CanTalkOptions, base, key string) []cobra.Completion {
	switch key {
	case "qp":
		return []cobra.Completion{"rc", "uc", "ud"}
	case "lid":
		var out []cobra.Completion
		for _, l := range cmdutil.LIDChoices(f, o.Sweep.File) {
			out = append(out, cobra.CompletionWithDesc(strconv.Itoa(int(l.LID)), l.Desc))
		}
		return out
	case "node":
		return nodeChoices(o.Sweep.File)
	case "pkey", "index":
	default:
		return nil
	}
	// The port's table when the base is DEV/PORT, else every local table (pkey=).
	sel := query.Selector{}
	if strings.Contains(base, "/") {
		var err error
		if sel, err = query.ParseSelector(base); err != nil {
			return nil
		}
	} else if key == "index" {
		return nil
	}
	views, err := f.Host().Load(sel, query.LoadOptions{Tables: true})
	if err != nil {
		return nil
	}
	if key == "pkey" {
		return cmdutil.PKeyCompletions(views)
	}
	var out []cobra.Completion
	seen := map[int]bool{}
	for _, v := range views {
		if v.Table == nil {
			continue
		}
		for _, e := range v.Table.Entries {
			if e.Valid() && !seen[e.Index] {
				seen[e.Index] = true
				out = append(out, cobra.CompletionWithDesc(strconv.Itoa(e.Index), e.PKey.String()+" "+e.PKey.Membership().String()+" member of "+e.PKey.Partition().String()))
			}
		}
	}
	return out
}

// nodeChoices are the node descriptions of the saved sweep fabricFile (none without
// one: naming nodes needs a sweep, and completion never sends MADs).
func nodeChoices(fabricFile string) []cobra.Completion {
	if fabricFile == "" {
		return nil
	}
	fab, err := cmdutil.ReadFabricFile(fabricFile)
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, n := range fab.Nodes {
		if n.Description != "" {
			out = append(out, cobra.CompletionWithDesc(n.Description, fmt.Sprintf("%s %s", n.Type, n.GUID)))
		}
	}
	return out
}

// partitionReasons names, for each GUID endpoint, the lines of the partitions file that
// gave it the entries the verdict used: those of the shared partitions, else all of them.
func partitionReasons(p *query.Partitions, v check.Verdict, eps []query.ResolvedEndpoint) []string {
	var out []string
	c := p.Config
	if c.Rejected {
		out = append(out, fmt.Sprintf("OpenSM rejects %s (first error at %s) and applies Default=0x7fff, ipoib : ALL=full instead: every port is a full member of the default partition and the file's partitions do not exist (see 'ibkey partitions check %s')", c.File, c.RejectedAt, c.File))
	}
	shared := map[check.PartitionKey]bool{}
	for _, s := range v.Shared {
		shared[s.Key] = true
	}
	for _, e := range eps {
		if e.Model == nil {
			continue
		}
		g, label := e.Spec.GUID, e.Endpoint.Label
		if !p.InFile(g) {
			kw := "ALL / ALL_CAS give every port"
			switch p.Types[g] {
			case check.NodeRouter:
				kw = "ALL / ALL_ROUTERS give every router port"
			case check.NodeSwitch:
				kw = "ALL / ALL_SWITCHES give every switch's port 0"
			default:
				if slices.ContainsFunc(e.Alternatives, func(a query.Alternative) bool { return a.Model != nil && !a.SM }) {
					kw = "ALL / ALL_CAS give every CA port (taking it for one: --router not given; a router port gets ALL_ROUTERS')"
				}
			}
			out = append(out, notNamed(label, c.File, kw, g, p.Options.SMGUID))
		}
		var all []string
		var keys []check.PKey
		listed := map[check.PartitionKey]bool{}
		for _, t := range e.Model.Table(g) {
			if len(shared) > 0 && !shared[t.PKey.Partition()] {
				continue
			}
			if !e.Endpoint.Port && len(e.Endpoint.Entries) == 1 && e.Endpoint.Entries[0].PKey != t.PKey {
				continue // pkey=: the entry its QP uses
			}
			listed[t.PKey.Partition()] = true
			keys = append(keys, t.PKey)
			all = append(all, fmt.Sprintf("%s (%s) from %s at %s", t.PKey, t.Partition.Name, t.DecidedBy.Text(), c.PosText(t.DecidedBy.Pos())))
		}
		if items := textsafe.Capped(all, maxFileItems); len(items) > 0 {
			out = append(out, fmt.Sprintf("%s gets %s%s", label, strings.Join(items, "; "), takenFor(e, listed, keys)))
		}
		if n := e.Model.Dropped(g); n > 0 {
			out = append(out, fmt.Sprintf("%s: %d more entries do not fit its table of %d: OpenSM drops them (ERR 0512)", label, n, p.Options.TableSize))
		}
	}
	return out
}

// noEntryAsTaken says, after an end's "gets no entry" that an assumption not given
// would give one (query's alternatives) while the answer stays no, that it is the end
// as taken; "" when no assumption would give it one.
func noEntryAsTaken(e query.ResolvedEndpoint) string {
	var as []string
	for _, alt := range e.Alternatives {
		if alt.Taking != "" || alt.Endpoint.NoEntry != "" {
			continue
		}
		t := "a router port"
		if alt.SM {
			t = "the port OpenSM runs on"
		}
		if !slices.Contains(as, t) {
			as = append(as, t)
		}
	}
	if len(as) == 0 {
		return ""
	}
	return fmt.Sprintf(" (as taken: as %s it gets one, and they cannot talk all the same)", strings.Join(as, " or as "))
}

// takenFor says, after what an end gets from the file (keys: its entries of the
// partitions listed), what the end was taken for when an assumption not given (SELF's
// port, a router port: query's alternatives) would give it other entries of them; ""
// when none would.
func takenFor(e query.ResolvedEndpoint, listed map[check.PartitionKey]bool, keys []check.PKey) string {
	var taking []string
	for _, alt := range e.Alternatives {
		if alt.Model == nil {
			continue
		}
		var theirs []check.PKey
		for _, t := range alt.Model.Table(e.Spec.GUID) {
			if listed[t.PKey.Partition()] {
				theirs = append(theirs, t.PKey)
			}
		}
		if slices.Equal(theirs, keys) {
			continue
		}
		t := "a CA port"
		if alt.SM {
			t = "a port OpenSM does not run on"
		}
		if !slices.Contains(taking, t) {
			taking = append(taking, t)
		}
	}
	if len(taking) == 0 {
		return ""
	}
	return " (taking it for " + strings.Join(taking, " and ") + ")"
}

// notNamed says that port g is not named in file by its GUID, and what it gets then.
// SELF (written, or the SELF=full OpenSM adds to the default partition, osm_prtn_config.c)
// names the port OpenSM runs on, whose entries its GUID need not give (lab:
// TestLabCanTalkPKeyUnderSelf): "only what ALL gives" is true only when g is not that
// port, which without --sm-guid (sm 0) is the assumption the verdict takes.
func notNamed(label, file, kw string, g, sm check.GUID) string {
	switch {
	case sm == 0:
		return fmt.Sprintf("%s is not named in %s by its GUID: taking it for a port OpenSM does not run on (SELF; --sm-guid not given), it gets only what %s", label, file, kw)
	case sm == g:
		return fmt.Sprintf("%s is not named in %s by its GUID: it is the port OpenSM runs on (--sm-guid), so it gets what SELF gives it and what %s", label, file, kw)
	}
	return fmt.Sprintf("%s is not named in %s: it gets only what %s", label, file, kw)
}

// maxFileItems bounds the file lines named per endpoint.
const maxFileItems = 8
