package job

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/hostlist"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/job"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// portSource are the ports of the job, where they came from, and how to read them
// again (--wait).
type portSource struct {
	labels []string
	// demo: the local host read is the embedded demo host; via: the MAD transport
	// the ports were read through (--lid, --node): the JSON says them, as pkeys does.
	demo bool
	via  string
	// fabric is the sweep the ports were found in (--fabric-file, --node); nil
	// otherwise. After a re-read it is older than the ports.
	fabric *fabric.Fabric
	// read reads every port of the job again, and sets unread.
	read func(ctx context.Context) ([]*job.Port, error)
	// mads counts the MADs asked of the transport (via set; 0 without one).
	mads atomic.Int64
	// close gives the transport back (nil without one).
	close func()
	// unread are the devices and ports of the last read that could not be read: of a
	// host (query.NotRead), of a sweep (its nodes and links not read,
	// fabric.Fabric.NotRead) or over MADs (a port that did not answer). The ports
	// read are the job's; the others are named, and matter when a library could
	// choose them (job.Choosers).
	unread []job.Unread
	// closed are the local host's devices no library here can open (job.HostPorts),
	// each with why: not the job's.
	closed []job.LeftOut
}

func (s *portSource) Close() {
	if s.close != nil {
		s.close()
	}
}

// countingTransport counts the MADs a command asks its transport for (each request
// once, whatever its retries), for the wait's progress and its closing line.
type countingTransport struct {
	mad.Transport
	n *atomic.Int64
}

func (c countingTransport) Do(ctx context.Context, req mad.Request) (*mad.Packet, error) {
	c.n.Add(1)
	return c.Transport.Do(ctx, req)
}

// Exchange keeps the inner transport's batching (mad.Exchange falls back to one Do
// per call on a transport that is not an Exchanger).
func (c countingTransport) Exchange(ctx context.Context, calls []mad.Call) error {
	c.n.Add(int64(len(calls)))
	return mad.Exchange(ctx, c.Transport, calls)
}

// sources opens the job's ports: the local host, --host trees, --fabric-file, --lid
// read over MADs now, or --node found in a sweep now (then re-read by address).
func (o *Options) sources(ctx context.Context) (*portSource, error) {
	src := &portSource{}
	remote := o.LIDs != "" || o.Nodes != "" || o.FabricFile != "" || len(o.Hosts) > 0
	if !remote {
		h := o.Host()
		if h.Label != "" {
			src.labels, src.demo = append(src.labels, h.Label), true
		}
		src.read = func(context.Context) ([]*job.Port, error) {
			ps, unread, closed, err := job.HostPorts(h, "")
			src.unread, src.closed = unread, closed
			return ps, err
		}
		return src, nil
	}
	type hostTree struct{ name, dir string }
	var trees []hostTree
	for _, spec := range o.Hosts {
		name, dir, ok := strings.Cut(spec, "=")
		if !ok || name == "" || dir == "" {
			return nil, cmdutil.Usagef("invalid --host %q (accepted: NAME=DIR, a host's saved sysfs tree, e.g. node01=/srv/sysfs/node01)", spec)
		}
		trees = append(trees, hostTree{name, dir})
	}
	readTrees := func() ([]*job.Port, []job.Unread, error) {
		var out []*job.Port
		var unread []job.Unread
		for _, t := range trees {
			ps, u, _, err := job.HostPorts(&query.Host{Sys: ibverbs.Open(t.dir)}, t.name) // another machine's tree: nothing closed
			var unknown *query.UnknownError
			switch {
			case errors.As(err, &unknown):
				// Nothing of the host was read (query.PartialError): not read, and the
				// other hosts are judged.
				unread = append(unread, job.Unread{Host: t.name, Port: -1, Name: "--host " + t.name, Why: err.Error()})
				continue
			case err != nil:
				return nil, nil, fmt.Errorf("--host %s: %w", t.name, err)
			}
			for _, l := range u {
				l.Name = "--host " + t.name + ": " + l.Name
				unread = append(unread, l)
			}
			out = append(out, ps...)
		}
		return out, unread, nil
	}
	var lids []uint16
	if o.LIDs != "" {
		var err error
		if lids, err = cmdutil.ParseLIDFlag(o.LIDs); err != nil {
			return nil, err
		}
	}
	var nodes []string
	if o.Nodes != "" {
		var err error
		if nodes, err = expandNodes(o.Nodes); err != nil {
			return nil, err
		}
	}
	var remoteRead func(ctx context.Context) ([]*job.Port, []job.Unread, error)
	switch {
	case o.FabricFile != "":
		f, err := cmdutil.ReadFabricFile(o.FabricFile) // bounded, regular files only, descriptions sanitised
		if err != nil {
			return nil, err
		}
		src.fabric = f
		src.labels = append(src.labels, "fabric: "+o.FabricFile)
		ps, unread, err := fabricPorts(f, lids, nodes)
		if err != nil {
			return nil, err
		}
		remoteRead = func(context.Context) ([]*job.Port, []job.Unread, error) { return ps, unread, nil }
	case len(lids) > 0 || len(nodes) > 0:
		fab, err := o.MAD.Open(ctx)
		if err != nil {
			return nil, err
		}
		src.close = func() { fab.T.Close() }
		t := countingTransport{Transport: fab.T, n: &src.mads}
		counted := &query.Fabric{T: t, Via: fab.Via, DirectedRouteFlag: fab.DirectedRouteFlag, ListLIDs: fab.ListLIDs}
		src.labels, src.via = append(src.labels, "fabric via "+fab.Via), fab.Via
		if len(nodes) > 0 {
			remoteRead, err = sweepNodes(ctx, src, counted, lids, nodes)
			if err != nil {
				src.Close()
				return nil, err
			}
			break
		}
		sels := make([]query.FabricSelector, len(lids))
		for i, l := range lids {
			sels[i] = query.FabricSelector{Addr: mad.LIDAddress(l)}
		}
		remoteRead = func(ctx context.Context) ([]*job.Port, []job.Unread, error) { return readLIDs(ctx, counted, sels) }
	}
	src.read = func(ctx context.Context) ([]*job.Port, error) {
		out, unread, err := readTrees()
		if err != nil {
			return nil, err
		}
		if remoteRead != nil {
			ps, u, err := remoteRead(ctx)
			if err != nil {
				return nil, err
			}
			out, unread = append(out, ps...), append(unread, u...)
		}
		switch {
		case len(out) == 0 && len(unread) > 0:
			// Not read, never missing (query.PartialError's rule).
			return nil, &query.UnknownError{Msg: "no port of the job was read: " + unread[0].What()}
		case len(out) == 0:
			return nil, &query.EnvError{Msg: "no port of the job was found"}
		}
		src.unread = unread
		return out, nil
	}
	return src, nil
}

// readPorts reads one port at each of sels over MADs (query.Fabric.LoadMany: the
// ports that answered, each once, and a *query.PartialError naming each selector that
// did not, with its error). A selector that failed is a port not read (unread(i,
// err), err not naming the address) rather than a failed read: the answer is judged
// on what was read, names what was not, and is not checked where it depends on it. The view read at sels[i]'s address
// is its port when it is (i, v), else a port not read (the address answers as another
// port now). A selector with no view at its address reached a port another selector
// read first (LoadMany keeps each port once): it adds none when that port is (i, v),
// and is not read otherwise. Only a read in which no selector answered fails, with
// LoadMany's error.
func readPorts(ctx context.Context, fab *query.Fabric, sels []query.FabricSelector, is func(i int, v *query.PortView) bool, port func(i int, v *query.PortView) *job.Port, unread func(i int, err error) job.Unread) ([]*job.Port, []job.Unread, error) {
	views, err := fab.LoadMany(ctx, sels, query.LoadOptions{Tables: true})
	var partial *query.PartialError
	if err != nil && !errors.As(err, &partial) {
		return nil, nil, err
	}
	failed := map[string]error{}
	if partial != nil {
		for _, u := range partial.Unread {
			failed[u.Address.String()] = u.Err
		}
	}
	at := make(map[string]*query.PortView, len(views)) // by the address read through
	for _, v := range views {
		if at[v.Fabric.Address] == nil {
			at[v.Fabric.Address] = v
		}
	}
	var out []*job.Port
	var missed []job.Unread
	for i, s := range sels {
		if err := failed[s.String()]; err != nil {
			// LoadMany's Unread.Err does not name the address: unread does.
			missed = append(missed, unread(i, err))
			continue
		}
		switch v := at[s.Addr.String()]; {
		case v != nil && is(i, v):
			out = append(out, port(i, v))
		case v != nil:
			missed = append(missed, unread(i, fmt.Errorf("answers as %s (node %s) now, not as this port", v.Ref(), v.Fabric.NodeGUID)))
		case !slices.ContainsFunc(views, func(v *query.PortView) bool { return is(i, v) }):
			missed = append(missed, unread(i, errors.New("answers as a port read at another address, not as this port")))
		}
	}
	return out, missed, nil
}

// readLIDs reads the port at each of sels, --lid's LIDs (readPorts); a LID that did
// not answer is a port not read, named by its LID.
func readLIDs(ctx context.Context, fab *query.Fabric, sels []query.FabricSelector) ([]*job.Port, []job.Unread, error) {
	return readPorts(ctx, fab, sels,
		func(i int, v *query.PortView) bool {
			// The LID, or another of the port's LIDs (LMC): one port, read once.
			p := v.Port
			return v.Fabric.Address == sels[i].Addr.String() || p.LID.OK() && check.LIDRangeHolds(p.LID.Value, p.LMC.Value, sels[i].Addr.LID)
		},
		func(_ int, v *query.PortView) *job.Port { return job.PortFromView(v.Device.Name, v) },
		func(i int, err error) job.Unread {
			// Which host answers at the LID is what was not read.
			return job.Unread{Host: sels[i].String(), Port: -1, Name: sels[i].String(), Why: err.Error(), Address: &sels[i], Kind: fabric.UnreadNode}
		})
}

// expandNodes reads --node: Slurm's hostlist syntax (node[01-04,07], as
// $SLURM_JOB_NODELIST holds it), each name once, in order.
func expandNodes(s string) ([]string, error) {
	const accepted = "names separated by commas, Slurm's node[01-04,07] ranges, node GUIDs"
	names, err := hostlist.Expand(s)
	if err != nil {
		return nil, cmdutil.Usagef("--node: %v (accepted: %s)", err, accepted)
	}
	if len(names) == 0 { // blanks and commas only: no host, not "none found"
		return nil, cmdutil.Usagef("--node %q names no host (accepted: %s)", s, accepted)
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// sweepNodes sweeps the fabric to find the job's nodes and returns a read that reads
// only their ports again, by LID (or by directed route before the SM gave one),
// never the whole fabric; what the sweep did not read that the job may use stays not
// read in every read (fabricPorts). Only while a host or LID of the job is missing
// from a sweep that missed links does a read sweep again: it may be found.
func sweepNodes(ctx context.Context, src *portSource, fab *query.Fabric, lids []uint16, nodes []string) (func(context.Context) ([]*job.Port, []job.Unread, error), error) {
	var (
		first []*job.Port
		swept []job.Unread
		sels  []query.FabricSelector
	)
	sweep := func(ctx context.Context) error {
		f, err := query.Sweep(ctx, fab.T, query.SweepOptions{Source: fab.Via})
		if err != nil && f == nil {
			return &query.EnvError{Msg: err.Error()}
		}
		ps, unread, err := fabricPorts(f, lids, nodes)
		if err != nil {
			return err
		}
		ss := make([]query.FabricSelector, len(ps))
		for i, p := range ps {
			n := f.Node(p.Node)
			if n == nil {
				return fmt.Errorf("job: port %s vanished from the sweep", p.Label())
			}
			if p.LID != 0 && n.Type != check.NodeSwitch {
				ss[i] = query.FabricSelector{Addr: mad.LIDAddress(p.LID)}
				continue
			}
			addr, err := mad.ParseDRPath(n.Path)
			if err != nil {
				return &query.EnvError{Msg: fmt.Sprintf("%s has neither a LID nor a usable directed route (%q)", p.Label(), n.Path)}
			}
			ss[i] = query.FabricSelector{Addr: addr, Port: p.Num, HasPort: true}
		}
		src.fabric, first, swept, sels = f, ps, unread, ss
		return nil
	}
	if err := sweep(ctx); err != nil {
		return nil, err
	}
	fresh := true
	return func(ctx context.Context) ([]*job.Port, []job.Unread, error) {
		if !fresh && slices.ContainsFunc(swept, func(u job.Unread) bool {
			return !slices.ContainsFunc(first, func(p *job.Port) bool { return p.Host == u.Host })
		}) {
			if err := sweep(ctx); err != nil {
				return nil, nil, err
			}
			fresh = true
		}
		if fresh {
			fresh = false
			return first, swept, nil
		}
		// One port per selector (a CA port, or the port a directed route names).
		ps, missed, err := readPorts(ctx, fab, sels,
			func(i int, v *query.PortView) bool {
				return v.Fabric.NodeGUID == first[i].Node && v.Port.Num == first[i].Num
			},
			func(i int, v *query.PortView) *job.Port {
				// The host and device (from the node description) are the sweep's.
				p := job.PortFromView(first[i].Host, v)
				p.Device, p.DeviceKnown = first[i].Device, first[i].DeviceKnown
				return p
			},
			func(i int, err error) job.Unread { return portNotRead(first[i], sels[i].String()+": "+err.Error()) })
		return ps, append(slices.Clip(swept), missed...), err
	}, nil
}

// portNotRead is a port of the job (found in a sweep) that could not be read, and
// why: in the sweep (its PortInfo) or at its address since (unread-node).
func portNotRead(p *job.Port, why string) job.Unread {
	u := job.Unread{Host: p.Host, Port: p.Num, Name: p.Label(), Why: why, Kind: fabric.UnreadNode}
	if !p.Fabric || p.DeviceKnown {
		u.Device = p.Device
	}
	return u
}

// fabricPorts picks the job's ports in a sweep: by LID (the end port whose LID range
// holds it), by host (the cabled end ports of its adapters, found by node
// description: job.MatchHost), or every ACTIVE CA port. What the sweep did not read
// that the job may use (fabric.Fabric.NotRead) is not read, never absent: a port of
// the job whose PortInfo was not read; and, when the sweep missed links
// (MissedLinks), a LID or host not in it (rather than not found), another adapter of
// a host found, and, without --lid or --node, the CA ports behind them.
func fabricPorts(f *fabric.Fabric, lids []uint16, nodes []string) ([]*job.Port, []job.Unread, error) {
	var out []*job.Port
	var unread []job.Unread
	partial := ""
	if f.MissedLinks() {
		partial = "the sweep did not read every link: " + fabric.NotCheckedSummary(f.NotRead(false))
	}
	for _, l := range lids {
		n, p, err := query.FindLID(f, l)
		if err != nil {
			return nil, nil, &query.UsageError{Msg: fmt.Sprintf("--lid: %v: name the host with --node", err), Err: err}
		}
		if n == nil {
			if partial != "" {
				host := "lid " + strconv.Itoa(int(l))
				unread = append(unread, job.Unread{Host: host, Port: -1, Name: host, Why: "not in the sweep, and " + partial, Kind: fabric.PartialSweep})
				continue
			}
			return nil, nil, &query.NotFoundError{What: "LID", Name: strconv.Itoa(int(l)) + " in the sweep", Available: []string{"the LIDs of 'ibkey fabric discover'"}}
		}
		out = append(out, job.PortFromFabric(f, n, p, ""))
	}
	for _, name := range nodes {
		ns := job.MatchHost(f, name)
		if err := oneHost(name, ns); err != nil {
			return nil, nil, err
		}
		if len(ns) == 0 {
			if partial != "" {
				unread = append(unread, job.Unread{Host: name, Port: -1, Name: "node " + strconv.Quote(name), Why: "not in the sweep, and " + partial, Kind: fabric.PartialSweep})
				continue
			}
			var names []string
			for _, n := range f.Nodes {
				if n.Type == check.NodeCA {
					names = append(names, n.Description)
				}
			}
			slices.Sort(names)
			return nil, nil, &query.NotFoundError{What: "node", Name: strconv.Quote(name) + " in the sweep", Available: textsafe.Capped(names, 12)}
		}
		added := 0
		for _, n := range ns {
			for _, p := range n.Ports {
				switch {
				case !n.IsEndPort(p):
				case p.Error != "":
					unread = append(unread, portNotRead(job.PortFromFabric(f, n, p, name), "PortInfo not read in the sweep: "+p.Error))
					added++
				case p.Peer != nil || p.PKeys != nil:
					out = append(out, job.PortFromFabric(f, n, p, name))
					added++
				}
			}
		}
		if partial != "" {
			unread = append(unread, job.Unread{Host: name, Port: -1, Name: "another adapter of " + name, Why: partial, Kind: fabric.PartialSweep})
		} else if added == 0 {
			return nil, nil, &query.EnvError{Msg: fmt.Sprintf("node %q has no cabled end port in the sweep", name)}
		}
	}
	if len(lids) == 0 && len(nodes) == 0 {
		for _, n := range f.Nodes {
			if n.Type != check.NodeCA {
				continue
			}
			for _, p := range n.Ports {
				switch {
				case p.Error != "":
					unread = append(unread, portNotRead(job.PortFromFabric(f, n, p, ""), "PortInfo not read in the sweep: "+p.Error))
				case p.State == check.StateActive:
					out = append(out, job.PortFromFabric(f, n, p, ""))
				}
			}
		}
		if partial != "" {
			unread = append(unread, job.Unread{Host: notSwept, Port: -1, Name: "CA ports not in the sweep", Why: partial, Kind: fabric.PartialSweep})
		}
	}
	return out, unread, nil
}

// notSwept names, as a host, the channel adapters a sweep that missed links may not
// have reached.
const notSwept = "(not swept)"

// oneHost refuses a name that matches several nodes which are not one host's
// adapters ("HOST DEV" descriptions with distinct devices): the same description
// on several nodes (a default "MT4123 ConnectX6" without rdma-ndd) names none of
// them.
func oneHost(name string, ns []*fabric.Node) error {
	if len(ns) < 2 {
		return nil
	}
	devs := map[string]bool{}
	for _, n := range ns {
		dev, known := job.HostDevice(n.Description, name)
		if !known || devs[dev] {
			return cmdutil.Usagef("--node %q matches %d nodes (%q and others): name one by its node GUID", name, len(ns), ns[0].Description)
		}
		devs[dev] = true
	}
	return nil
}
