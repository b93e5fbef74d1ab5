package query

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// SweepOptions tune Sweep. The zero value reads everything with the defaults.
type SweepOptions struct {
	// Timeout bounds the whole sweep (default none beyond ctx). When it expires the
	// sweep returns what it has, marked Incomplete.
	Timeout time.Duration
	// NoTables skips the P_Key tables (discovery only).
	NoTables bool
	// Source is recorded in the result ("ibsim sim at HcaA", "umad mlx5_0/1").
	Source string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Progress, when set, is called with a snapshot of the sweep from another
	// goroutine: once when the sweep starts, then every progressEvery, never after
	// Sweep returns. The sweep only counts (SweepProgress).
	Progress func(SweepProgress)
}

// Sweep discovers the subnet from the transport's local port by directed route, as
// ibnetdiscover does, and reads every port's P_Key table:
//
//   - breadth first, one hop level at a time, so each node is read through a shortest
//     route; nodes are told apart by node GUID, so loops and parallel links are seen
//     once (a second route to a known node only adds a link);
//   - per node: NodeInfo (through the probe that found it), NodeDescription, SwitchInfo
//     for switches, PortInfo of every port, and the P_Key tables: a switch's port 0 and
//     every external port whose link is up, a CA's port through a route that ends on
//     that port (a CA answers P_KeyTable for the port the SMP arrived on);
//   - neighbours are probed with NodeInfo through every port of a switch whose link is
//     up, and from a local CA through its own port only (a CA neither forwards
//     directed-route SMPs nor sends one out of another port: sweep_ports.go);
//   - whatever does not answer is recorded where it belongs (Node.Errors, Port.Error,
//     Port.PKeysError, Fabric.Unreachable) and the sweep goes on.
//
// Only a failure to read the local node is an error. When ctx ends or the Timeout
// expires the partial fabric is returned, marked Incomplete, with the error.
func Sweep(ctx context.Context, t mad.Transport, opts SweepOptions) (*fabric.Fabric, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	start := opts.Now()
	s := &sweeper{t: t, opts: opts, nodes: map[check.GUID]*sweepNode{}}
	defer s.startProgress(ctx, start)()
	local, err := mad.GetNodeInfo(ctx, t, mad.DirectedRoute())
	if err != nil {
		return nil, fmt.Errorf("sweep: reading the local node: %w", err)
	}
	f := &fabric.Fabric{Source: opts.Source, SweptAt: start}
	f.Local = check.PortID{Node: check.GUID(local.NodeGUID), Port: int(local.LocalPortNum)}
	frontier := []*sweepNode{s.addNode(local, nil)}
	var pendingPorts []caPortVisit
	for len(frontier) > 0 || len(pendingPorts) > 0 {
		probes := s.readLevel(ctx, frontier, pendingPorts)
		frontier, pendingPorts = s.merge(probes)
		if ctx.Err() != nil {
			break
		}
	}
	for _, n := range s.order {
		f.Nodes = append(f.Nodes, n.node)
	}
	f.Unreachable = s.unreachable
	f.Duration = opts.Now().Sub(start)
	if err = ctx.Err(); err != nil {
		f.Incomplete = fmt.Sprintf("%v after %v", err, f.Duration.Round(time.Millisecond))
		err = fmt.Errorf("sweep: %w", err)
	} else {
		s.markNotReached()
	}
	f.Normalize()
	return f, err
}

type sweeper struct {
	t    mad.Transport
	opts SweepOptions

	// Touched only by the merge step, between levels.
	nodes       map[check.GUID]*sweepNode
	order       []*sweepNode
	unreachable []fabric.Unreachable

	count sweepCounters // for opts.Progress

	// The calls of a level's batches, reused level after level (readLevel).
	calls []mad.Call
}

// reuse empties buf for a batch of up to n calls. A call holds its 256-byte reply:
// each batch allocated afresh made a 512-node sweep allocate 2.3 MB of calls, and
// the garbage collector's work and the page faults on fresh memory cost CPU per MAD;
// one buffer reused grows to what the largest level needs (1.1 MB in all).
func reuse(buf []mad.Call, n int) []mad.Call {
	if cap(buf) < n {
		return make([]mad.Call, 0, n)
	}
	return buf[:0]
}

type sweepNode struct {
	info mad.NodeInfo
	path []uint8
	node *fabric.Node
	// caReached: for a CA, the ports a route arrives on, in the order the sweep
	// reached them (nil until one is: a switch has none).
	caReached []int
}

// probe is one NodeInfo sent through a port to see what is behind it.
type probe struct {
	from *sweepNode
	port int
	path []uint8
	info mad.NodeInfo
	err  error
}

// caPortVisit is a CA port first reached by a later route than the one its node was
// read through: its PortInfo and table are read through that route.
type caPortVisit struct {
	n    *sweepNode
	port int
	path []uint8
}

func (s *sweeper) addNode(ni mad.NodeInfo, path []uint8) *sweepNode {
	n := &sweepNode{info: ni, path: path}
	n.node = &fabric.Node{
		GUID: check.GUID(ni.NodeGUID), Type: nodeType(ni.NodeType), SystemImageGUID: check.GUID(ni.SystemImageGUID),
		VendorID: ni.VendorID, DeviceID: ni.DeviceID, NumPorts: int(ni.NumPorts), PartitionCap: int(ni.PartitionCap),
		Path: mad.FormatDRPath(path),
	}
	first := 1
	if ni.NodeType == mad.NodeSwitch {
		first = 0
	}
	ports := make([]fabric.Port, int(ni.NumPorts)+1-first) // one allocation for all
	n.node.Ports = make([]*fabric.Port, len(ports))
	for i := range ports {
		ports[i].Num = first + i
		n.node.Ports[i] = &ports[i]
	}
	if ni.NodeType == mad.NodeSwitch {
		n.node.Ports[0].GUID = check.GUID(ni.PortGUID)
	} else if port := n.node.Port(int(ni.LocalPortNum)); port != nil {
		port.GUID = check.GUID(ni.PortGUID)
		n.caReached = []int{int(ni.LocalPortNum)}
	}
	s.nodes[n.node.GUID] = n
	s.order = append(s.order, n)
	s.count.nodes.Add(1)
	return n
}

// nodeType is the node's type in the fabric model; a type number NodeInfo does not
// define is taken for a CA (an end node).
func nodeType(t mad.NodeType) check.NodeType {
	if nt, ok := check.NodeTypeOf(uint8(t)); ok {
		return nt
	}
	return check.NodeCA
}

// stateName is a port's state in the fabric model: the kernel's name (portStateEnum,
// check.StateDown and its kin), PortInfo's own for a value past ACTIVE.
func stateName(s mad.PortState) string {
	if s > mad.PortStateActive {
		return s.String()
	}
	return portStateEnum(s).Name
}

// linkUp: the port has a physical link, so something may answer behind it (a port in
// INIT before an SM ran still forwards directed-route SMPs).
func linkUp(pi mad.PortInfo) bool { return pi.PortState >= mad.PortStateInit }

// portRead is one PortInfo read of a level, and what follows from it.
type portRead struct {
	n     *sweepNode
	ln    int     // index of the node's levelNode; -1 for a visit
	i     int     // index in n.node.Ports
	path  []uint8 // the route the PortInfo and the table go through
	visit bool    // a CA port reached by a later route (caPortVisit)
	call  int     // index of the PortInfo call
}

// levelNode is one node read in a level.
type levelNode struct {
	n              *sweepNode
	desc, swInfo   int    // call indexes; swInfo -1 for a CA
	extCap         int    // SwitchInfo PartitionEnforcementCap, -1 if unknown
	up             []bool // per port: PortInfo read, and the link is up (linkUp)
	isSwitch, root bool
}

// readLevel reads every new node of a level and the CA ports reached on the way,
// then the P_Key tables, then probes the neighbours of the new switches (and of the
// local node): three batches of MADs, each sent through the transport at once.
func (s *sweeper) readLevel(ctx context.Context, frontier []*sweepNode, visits []caPortVisit) []probe {
	// Batch 1: NodeDescription, SwitchInfo, PortInfo. The batches are sized before
	// they are filled: a call holds its 256-byte reply, a 2,000-node sweep sends
	// 19,000, and growing them by appending cost a fifth more CPU per MAD
	// (BenchmarkLabSweep at 512 nodes: 8.1 instead of 6.2 µs; the budget is 8).
	// Batch 2 follows batch 1 in the same buffer, with room for two blocks per port
	// (a 64-entry table) before it grows.
	size, ports := len(visits), len(visits)
	for _, n := range frontier {
		size += 1 + len(n.node.Ports) // NodeDescription, PortInfo
		if n.info.NodeType == mad.NodeSwitch {
			size++ // SwitchInfo
		}
		ports += len(n.node.Ports)
	}
	calls := reuse(s.calls, size+2*ports)
	s.calls = calls
	add := func(path []uint8, attr mad.AttrID, mod uint32) int {
		// The route is shared, not copied: requests only read it.
		calls = append(calls, mad.Call{Req: mad.Request{Addr: mad.Address{Directed: true, Path: path}, Class: mad.ClassSubnLID, Method: mad.MethodGet, Attr: attr, Modifier: mod}})
		return len(calls) - 1
	}
	nodes := make([]levelNode, len(frontier))
	reads := make([]portRead, 0, size)
	for k, n := range frontier {
		ln := &nodes[k]
		*ln = levelNode{n: n, swInfo: -1, extCap: -1, up: make([]bool, len(n.node.Ports)),
			isSwitch: n.info.NodeType == mad.NodeSwitch, root: n.path == nil}
		ln.desc = add(n.path, mad.AttrNodeDescription, 0)
		if ln.isSwitch {
			ln.swInfo = add(n.path, mad.AttrSwitchInfo, 0)
		}
		for i, p := range n.node.Ports {
			if !ln.isSwitch && p.Num != int(n.info.LocalPortNum) && slices.Contains(n.caReached, p.Num) {
				continue // reached by another route in the same level: a visit reads it
			}
			// The PortInfo modifier selects the port, on a CA too; the P_Key table
			// is the arrival port's whatever the modifier says.
			reads = append(reads, portRead{n: n, ln: k, i: i, path: n.path, call: add(n.path, mad.AttrPortInfo, uint32(p.Num))})
		}
	}
	for _, v := range visits {
		// merge makes a visit only to a port the node has.
		i := slices.Index(v.n.node.Ports, v.n.node.Port(v.port))
		reads = append(reads, portRead{n: v.n, ln: -1, i: i, path: v.path, visit: true, call: add(v.path, mad.AttrPortInfo, uint32(v.port))})
	}
	s.exchange(ctx, calls)

	for k := range nodes {
		ln := &nodes[k]
		node := ln.n.node
		if desc, err := callResult(&calls[ln.desc], mad.ParseNodeDescription); err != nil {
			node.Errors = append(node.Errors, errText("NodeDescription", err))
		} else {
			node.Description = desc
		}
		if ln.swInfo >= 0 {
			if si, err := callResult(&calls[ln.swInfo], mad.ParseSwitchInfo); err != nil {
				node.Errors = append(node.Errors, errText("SwitchInfo", err))
			} else {
				ln.extCap = int(si.PartitionEnforcementCap)
				node.PartitionEnforcementCap = ln.extCap
			}
		}
	}

	// Batch 2: the P_Key table of each port it makes sense to read.
	type tableRead struct {
		p          *fabric.Port
		start, end int
	}
	tcalls := calls[len(calls):]
	tables := make([]tableRead, 0, len(reads))
	for _, r := range reads {
		n, p := r.n, r.n.node.Ports[r.i]
		isSwitch := n.info.NodeType == mad.NodeSwitch
		pi, err := callResult(&calls[r.call], mad.ParsePortInfo)
		if err != nil {
			p.Error = errText("PortInfo", err)
			// The route arrives on this port (a CA's, or a switch's port 0): its
			// table can still be read.
			if r.visit || isSwitch && p.Num > 0 || !isSwitch && p.Num != int(n.info.LocalPortNum) {
				continue
			}
		} else {
			if r.visit {
				p.Error = ""
			} else {
				nodes[r.ln].up[r.i] = linkUp(pi)
			}
			fillPort(p, pi, isSwitch)
		}
		if s.opts.NoTables {
			continue
		}
		size := int(n.info.PartitionCap)
		switch {
		case r.visit:
			p.PKeysError = ""
		case isSwitch && p.Num > 0:
			extCap := nodes[r.ln].extCap
			if extCap < 0 {
				p.PKeysError = "table size unknown: SwitchInfo could not be read"
				continue
			}
			if !linkUp(pi) {
				p.PKeysError = fabric.NotReadPrefix + "the port is " + p.State + " (a table is meaningful only on a port with a link)"
				p.TableSize = extCap
				continue
			}
			size = extCap
		case !isSwitch:
			if !slices.Contains(n.caReached, p.Num) {
				p.TableSize = size
				if !linkUp(pi) {
					p.PKeysError = fabric.NotReadPrefix + "the port is " + p.State + ", so no directed route arrives on it (a CA answers P_KeyTable only for the port an SMP arrives on)"
				} else {
					p.PKeysError = notReachedYet
				}
				continue
			}
		}
		p.TableSize = size
		start := len(tcalls)
		tcalls, err = mad.AppendPKeyTableCalls(tcalls, mad.Address{Directed: true, Path: r.path}, uint8(p.Num), size)
		if err != nil {
			p.PKeysError = errText("P_KeyTable", err)
			continue
		}
		tables = append(tables, tableRead{p: p, start: start, end: len(tcalls)})
	}
	s.exchange(ctx, tcalls)
	for _, tr := range tables {
		t, err := mad.PKeyTableFromCalls[check.PKey](tcalls[tr.start:tr.end], uint8(tr.p.Num), tr.p.TableSize)
		if err != nil {
			tr.p.PKeysError = errText("P_KeyTable", err)
			continue
		}
		tr.p.PKeys = t
	}

	// Batch 3: NodeInfo through every port of a switch (or the local node) whose
	// link is up and whose peer is not known yet, in the calls of batch 1 (read).
	most := 0
	for k := range nodes {
		if ln := &nodes[k]; ln.isSwitch || ln.root {
			most += len(ln.n.node.Ports)
		}
	}
	pcalls := reuse(s.calls, most)
	probes := make([]probe, 0, most)
	for k := range nodes {
		ln := &nodes[k]
		n := ln.n
		if !ln.isSwitch && !ln.root {
			continue // CAs and routers do not forward directed-route SMPs
		}
		// The local CA (or router) sends only through its own port: an SMP that
		// leaves a CA with InitialPath[1] other than the sending port is discarded
		// (IBA C14-9:1; Linux drivers/infiniband/core/smi.c smi_handle_dr_smp_send),
		// and OpenSM (osm_state_mgr.c state_mgr_sweep_hop_1) and ibnetdiscover
		// (libibnetdisc/ibnetdisc.c, from_portnum) probe hop 1 of a CA only there.
		// Its other ports are reached, if at all, through a switch (sweep_ports.go).
		onlyPort := 0
		if !ln.isSwitch {
			onlyPort = int(n.info.LocalPortNum)
		}
		if len(n.path) >= mad.MaxHops {
			n.node.Errors = append(n.node.Errors, fmt.Sprintf("%s: the route to this node already has %d hops, the most a directed route holds", fabric.NotProbedPrefix, len(n.path)))
			continue
		}
		for i, p := range n.node.Ports {
			// A port whose peer is known already (the link this node was found
			// through, or one a node of the same level probed) needs no probe.
			if p.Num == 0 || !ln.up[i] || p.Peer != nil || onlyPort != 0 && p.Num != onlyPort {
				continue
			}
			path := append(append(make([]uint8, 0, len(n.path)+1), n.path...), uint8(p.Num))
			probes = append(probes, probe{from: n, port: p.Num, path: path})
			pcalls = append(pcalls, mad.Call{Req: mad.Request{Addr: mad.Address{Directed: true, Path: path}, Class: mad.ClassSubnLID, Method: mad.MethodGet, Attr: mad.AttrNodeInfo}})
		}
	}
	s.calls = pcalls
	s.exchange(ctx, pcalls)
	for i := range probes {
		probes[i].info, probes[i].err = callResult(&pcalls[i], mad.ParseNodeInfo)
	}
	return probes
}

func errText(what string, err error) string { return what + ": " + err.Error() }

// callResult is an exchanged call's reply decoded by parse, or the call's error.
func callResult[T any](c *mad.Call, parse func([]byte) (T, error)) (T, error) {
	if c.Err != nil {
		var zero T
		return zero, c.Err
	}
	return parse(c.Data())
}

func fillPort(p *fabric.Port, pi mad.PortInfo, isSwitch bool) {
	p.LID, p.LMC, p.SMLID = pi.LID, pi.LMC, pi.MasterSMLID
	if !isSwitch || p.Num == 0 {
		p.GIDPrefix = check.GUID(pi.GIDPrefix)
	}
	p.State, p.PhysState = stateName(pi.PortState), pi.PhysState.String()
	p.PKeyViolations = pi.PKeyViolations
	if isSwitch && p.Num > 0 {
		p.Enforcement = enforcementOf(pi)
	}
}

// merge folds a level's probes into the fabric, in route order so the result does not
// depend on which reply came first: a new node GUID becomes a node of the next level, a
// known one only gains a link (and, for a CA, maybe a newly reached port).
func (s *sweeper) merge(probes []probe) ([]*sweepNode, []caPortVisit) {
	// The probes of a level all have routes of the level's length.
	slices.SortFunc(probes, func(a, b probe) int { return slices.Compare(a.path, b.path) })
	var next []*sweepNode
	var ports []caPortVisit
	for _, pr := range probes {
		from := pr.from.node.Port(pr.port)
		if pr.err != nil {
			msg := pr.err.Error()
			if te, ok := errors.AsType[*mad.TimeoutError](pr.err); ok {
				msg = fmt.Sprintf("no reply to NodeInfo after %d attempt(s)", te.Attempts)
			}
			from.PeerError = msg
			s.unreachable = append(s.unreachable, fabric.Unreachable{
				From: check.PortID{Node: pr.from.node.GUID, Port: pr.port}, Path: mad.FormatDRPath(pr.path), Error: msg})
			continue
		}
		g := check.GUID(pr.info.NodeGUID)
		n, known := s.nodes[g]
		if !known {
			n = s.addNode(pr.info, pr.path)
			next = append(next, n) // CAs are read, not probed through
		} else if pr.info.NodeType != mad.NodeSwitch {
			arr := int(pr.info.LocalPortNum)
			if !slices.Contains(n.caReached, arr) {
				if p := n.node.Port(arr); p != nil {
					n.caReached = append(n.caReached, arr)
					p.GUID = check.GUID(pr.info.PortGUID)
					ports = append(ports, caPortVisit{n, arr, pr.path})
				}
			}
		}
		to := check.PortID{Node: g, Port: int(pr.info.LocalPortNum)}
		if pr.info.NodeType == mad.NodeSwitch && to.Port == 0 {
			// A switch reports the port the SMP arrived on as LocalPortNum.
			continue
		}
		from.Peer = &to
		if tp := n.node.Port(to.Port); tp != nil {
			tp.Peer = new(check.PortID{Node: pr.from.node.GUID, Port: pr.port})
		}
	}
	return next, ports
}
