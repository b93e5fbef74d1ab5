package query

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// SweepOptions tune Sweep. The zero value reads everything with the defaults.
type SweepOptions struct {
	// Window bounds the nodes read at once (default 32). The transport's own window
	// bounds the MADs in flight.
	Window int
	// Timeout bounds the whole sweep (default none beyond ctx). When it expires the
	// sweep returns what it has, marked Incomplete.
	Timeout time.Duration
	// NoTables skips the P_Key tables (discovery only).
	NoTables bool
	// Source is recorded in the result ("ibsim sim at HcaA", "umad mlx5_0/1").
	Source string
	// Now is the clock (default time.Now).
	Now func() time.Time
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
//   - neighbours are probed with NodeInfo through every port whose link is up, from the
//     local node and from switches (CAs do not forward directed-route SMPs);
//   - whatever does not answer is recorded where it belongs (Node.Errors, Port.Error,
//     Port.PKeysError, Fabric.Unreachable) and the sweep goes on.
//
// Only a failure to read the local node is an error. When ctx ends or the Timeout
// expires the partial fabric is returned, marked Incomplete, with the error.
func Sweep(ctx context.Context, t mad.Transport, opts SweepOptions) (*check.Fabric, error) {
	if opts.Window <= 0 {
		opts.Window = 32
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	start := opts.Now()
	s := &sweeper{t: t, opts: opts, nodes: map[check.GUID]*sweepNode{}, sem: make(chan struct{}, opts.Window)}
	local, err := mad.GetNodeInfo(ctx, t, mad.DirectedRoute())
	if err != nil {
		return nil, fmt.Errorf("sweep: reading the local node: %w", err)
	}
	f := &check.Fabric{Source: opts.Source, SweptAt: start}
	f.Local = check.PortID{Node: check.GUID(local.NodeGUID), Port: int(local.LocalPortNum)}
	root := s.addNode(local, nil)
	frontier := []*sweepNode{root}
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
	if err := ctx.Err(); err != nil {
		f.Incomplete = fmt.Sprintf("%v after %v", err, opts.Now().Sub(start).Round(time.Millisecond))
		f.Duration = opts.Now().Sub(start)
		f.Normalize()
		return f, fmt.Errorf("sweep: %w", err)
	}
	f.Duration = opts.Now().Sub(start)
	f.Normalize()
	return f, nil
}

type sweeper struct {
	t    mad.Transport
	opts SweepOptions
	sem  chan struct{}

	// Touched only by the merge step, between levels.
	nodes       map[check.GUID]*sweepNode
	order       []*sweepNode
	unreachable []check.Unreachable
}

type sweepNode struct {
	info mad.NodeInfo
	path []uint8
	node *check.Node
	// caPaths: for a CA, the route that arrives on each of its ports that one reached.
	caPaths map[int][]uint8
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
	n := &sweepNode{info: ni, path: path, caPaths: map[int][]uint8{}}
	n.node = &check.Node{
		GUID: check.GUID(ni.NodeGUID), Type: nodeType(ni.NodeType), SystemImageGUID: check.GUID(ni.SystemImageGUID),
		VendorID: ni.VendorID, DeviceID: ni.DeviceID, NumPorts: int(ni.NumPorts), PartitionCap: int(ni.PartitionCap),
		Path: check.FormatDRPath(path),
	}
	first := 1
	if ni.NodeType == mad.NodeSwitch {
		first = 0
	}
	for p := first; p <= int(ni.NumPorts); p++ {
		n.node.Ports = append(n.node.Ports, &check.Port{Num: p})
	}
	if ni.NodeType == mad.NodeSwitch {
		n.node.Ports[0].GUID = check.GUID(ni.PortGUID)
	} else if port := n.node.Port(int(ni.LocalPortNum)); port != nil {
		port.GUID = check.GUID(ni.PortGUID)
		n.caPaths[int(ni.LocalPortNum)] = path
	}
	s.nodes[n.node.GUID] = n
	s.order = append(s.order, n)
	return n
}

func nodeType(t mad.NodeType) check.NodeType {
	switch t {
	case mad.NodeSwitch:
		return check.NodeSwitch
	case mad.NodeRouter:
		return check.NodeRouter
	}
	return check.NodeCA
}

var stateNames = map[mad.PortState]string{
	mad.PortStateNoChange: "NOP", mad.PortStateDown: check.StateDown, mad.PortStateInit: check.StateInit,
	mad.PortStateArmed: check.StateArmed, mad.PortStateActive: check.StateActive,
}

func stateName(s mad.PortState) string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return s.String()
}

// linkUp: the port has a physical link, so something may answer behind it (a port in
// INIT before an SM ran still forwards directed-route SMPs).
func linkUp(pi mad.PortInfo) bool { return pi.PortState >= mad.PortStateInit }

// readLevel reads every new node of a level and the CA ports reached on the way, and
// probes the neighbours of the new switches (and of the local node), concurrently.
func (s *sweeper) readLevel(ctx context.Context, frontier []*sweepNode, ports []caPortVisit) []probe {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		probes []probe
	)
	for _, n := range frontier {
		s.bounded(ctx, &wg, func() {
			ps := s.readNode(ctx, n, n.path == nil)
			mu.Lock()
			probes = append(probes, ps...)
			mu.Unlock()
		})
	}
	for _, v := range ports {
		s.bounded(ctx, &wg, func() { s.readCAPort(ctx, v.n, v.port, v.path) })
	}
	wg.Wait()
	return probes
}

func (s *sweeper) acquire(ctx context.Context) bool {
	select {
	case s.sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *sweeper) release() { <-s.sem }

// bounded runs fn in a goroutine counted by wg once a window slot is free; it does
// not run fn when ctx ends first.
func (s *sweeper) bounded(ctx context.Context, wg *sync.WaitGroup, fn func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		if !s.acquire(ctx) {
			return
		}
		defer s.release()
		fn()
	}()
}

func errText(what string, err error) string { return what + ": " + err.Error() }

// readNode reads one node's attributes, ports and tables, and probes its neighbours.
// Only this goroutine writes n.node until the level ends.
func (s *sweeper) readNode(ctx context.Context, n *sweepNode, isLocal bool) []probe {
	a := mad.DirectedRoute(n.path...)
	node := n.node
	isSwitch := n.info.NodeType == mad.NodeSwitch
	var mu sync.Mutex // guards node.Errors
	nodeErr := func(what string, err error) {
		mu.Lock()
		node.Errors = append(node.Errors, errText(what, err))
		mu.Unlock()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		desc, err := mad.GetNodeDesc(ctx, s.t, a)
		if err != nil {
			nodeErr("NodeDescription", err)
			return
		}
		node.Description = desc
	}()
	extCap := -1
	if isSwitch {
		si, err := mad.GetSwitchInfo(ctx, s.t, a)
		if err != nil {
			nodeErr("SwitchInfo", err)
		} else {
			extCap = int(si.PartitionEnforcementCap)
			node.PartitionEnforcementCap = extCap
		}
	}
	// PortInfo of every port, then the table of each port it makes sense to read.
	infos := make([]*mad.PortInfo, len(node.Ports))
	for i, p := range node.Ports {
		if _, reached := n.caPaths[p.Num]; !isSwitch && reached && p.Num != int(n.info.LocalPortNum) {
			continue // reached by another route in the same level: readCAPort reads it
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The PortInfo modifier selects the port, on a CA too; the P_Key table
			// is the arrival port's whatever the modifier says.
			pi, err := mad.GetPortInfo(ctx, s.t, a, uint8(p.Num))
			if err != nil {
				p.Error = errText("PortInfo", err)
				// The route arrives on this port (a CA's, or a switch's port 0):
				// its table can still be read.
				if isSwitch && p.Num > 0 || !isSwitch && p.Num != int(n.info.LocalPortNum) {
					return
				}
			} else {
				infos[i] = &pi
				fillPort(p, pi, isSwitch)
			}
			if s.opts.NoTables {
				return
			}
			size := int(n.info.PartitionCap)
			switch {
			case isSwitch && p.Num > 0:
				if extCap < 0 {
					p.PKeysError = "table size unknown: SwitchInfo could not be read"
					return
				}
				if !linkUp(pi) {
					p.PKeysError = "not read: the port is " + p.State + " (a table is meaningful only on a port with a link)"
					p.TableSize = extCap
					return
				}
				size = extCap
			case !isSwitch:
				if _, ok := n.caPaths[p.Num]; !ok {
					p.TableSize = size
					if !linkUp(pi) {
						p.PKeysError = "not read: the port is " + p.State + ", so no directed route arrives on it (a CA answers P_KeyTable only for the port an SMP arrives on)"
					} else {
						p.PKeysError = "not read yet: no directed route arrived on this port"
					}
					return
				}
			}
			p.TableSize = size
			t, err := mad.GetPKeyTable(ctx, s.t, a, uint8(p.Num), size)
			if err != nil {
				p.PKeysError = errText("P_KeyTable", err)
				return
			}
			p.PKeys = toPKeys(t)
		}()
	}
	wg.Wait()
	if !isSwitch && !isLocal {
		return nil // CAs and routers do not forward directed-route SMPs
	}
	if len(n.path) >= mad.MaxHops {
		node.Errors = append(node.Errors, fmt.Sprintf("neighbours not probed: the route to this node already has %d hops, the most a directed route holds", len(n.path)))
		return nil
	}
	var probes []probe
	var pmu sync.Mutex
	for i, p := range node.Ports {
		// A port whose peer is known already (the link this node was found
		// through, or one a node of the same level probed) needs no probe.
		if p.Num == 0 || infos[i] == nil || !linkUp(*infos[i]) || p.Peer != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := append(append([]uint8{}, n.path...), uint8(p.Num))
			ni, err := mad.GetNodeInfo(ctx, s.t, mad.DirectedRoute(path...))
			pmu.Lock()
			probes = append(probes, probe{from: n, port: p.Num, path: path, info: ni, err: err})
			pmu.Unlock()
		}()
	}
	wg.Wait()
	return probes
}

// readCAPort reads PortInfo and the P_Key table of a CA port through a route that
// arrives on it.
func (s *sweeper) readCAPort(ctx context.Context, n *sweepNode, num int, path []uint8) {
	p := n.node.Port(num)
	if p == nil {
		return
	}
	a := mad.DirectedRoute(path...)
	pi, err := mad.GetPortInfo(ctx, s.t, a, uint8(num))
	if err != nil {
		p.Error = errText("PortInfo", err)
		return
	}
	p.Error = ""
	fillPort(p, pi, false)
	if s.opts.NoTables {
		return
	}
	p.TableSize = int(n.info.PartitionCap)
	p.PKeysError = ""
	t, err := mad.GetPKeyTable(ctx, s.t, a, uint8(num), p.TableSize)
	if err != nil {
		p.PKeysError = errText("P_KeyTable", err)
		return
	}
	p.PKeys = toPKeys(t)
}

func fillPort(p *check.Port, pi mad.PortInfo, isSwitch bool) {
	p.LID, p.LMC, p.SMLID = pi.LID, pi.LMC, pi.MasterSMLID
	p.State, p.PhysState = stateName(pi.PortState), pi.PhysState.String()
	p.PKeyViolations = pi.PKeyViolations
	if isSwitch && p.Num > 0 {
		p.Enforcement = &check.Enforcement{
			Inbound: pi.PartitionEnforcementInbound, Outbound: pi.PartitionEnforcementOutbound,
			FilterRawInbound: pi.FilterRawInbound, FilterRawOutbound: pi.FilterRawOutbound,
		}
	}
}

func toPKeys(t []uint16) []check.PKey {
	out := make([]check.PKey, len(t))
	for i, v := range t {
		out[i] = check.PKey(v)
	}
	return out
}

// merge folds a level's probes into the fabric, in route order so the result does not
// depend on which reply came first: a new node GUID becomes a node of the next level, a
// known one only gains a link (and, for a CA, maybe a newly reached port).
func (s *sweeper) merge(probes []probe) ([]*sweepNode, []caPortVisit) {
	sort.Slice(probes, func(i, j int) bool { return lessPath(probes[i].path, probes[j].path) })
	var next []*sweepNode
	var ports []caPortVisit
	for _, pr := range probes {
		from := pr.from.node.Port(pr.port)
		if pr.err != nil {
			msg := pr.err.Error()
			var te *mad.TimeoutError
			if errors.As(pr.err, &te) {
				msg = fmt.Sprintf("no reply to NodeInfo after %d attempt(s)", te.Attempts)
			}
			from.PeerError = msg
			s.unreachable = append(s.unreachable, check.Unreachable{
				From: check.PortID{Node: pr.from.node.GUID, Port: pr.port}, Path: check.FormatDRPath(pr.path), Error: msg})
			continue
		}
		g := check.GUID(pr.info.NodeGUID)
		n, known := s.nodes[g]
		if !known {
			n = s.addNode(pr.info, pr.path)
			next = append(next, n) // CAs are read, not probed through
		} else if pr.info.NodeType != mad.NodeSwitch {
			arr := int(pr.info.LocalPortNum)
			if _, ok := n.caPaths[arr]; !ok {
				if p := n.node.Port(arr); p != nil {
					n.caPaths[arr] = pr.path
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
			back := check.PortID{Node: pr.from.node.GUID, Port: pr.port}
			tp.Peer = &back
		}
	}
	return next, ports
}

func lessPath(a, b []uint8) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
