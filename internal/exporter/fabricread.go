package exporter

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
)

// portInfoTap is the transport the exporter's sweep (and --lid's reads) go through: it
// passes every MAD on unchanged and keeps the violation counters of the PortInfo
// replies, which the swept fabric model (check.Port) and a PortView do not keep (the
// first only P_KeyViolations), so the exporter does not read every port's PortInfo a
// second time. A directed route or a LID names one node (IBA 14.2.2: the route is the
// list of egress ports from the local node), so a PortInfo read through address A
// belongs to the node whose NodeInfo answered through A.
type portInfoTap struct {
	t mad.Transport

	mu     sync.Mutex
	nodeAt map[tapAddr]tappedNode // address → the node NodeInfo returned there
	infos  []tappedPortInfo
	// pma, when set, is given the LIDs every batch's PortInfo replies carry, to read
	// the ports' PortCounters while the sweep goes on.
	pma *pmaPrefetch
	// down is the first error that said the transport stopped working
	// (mad.ErrTransportDown).
	down error
}

type tappedNode struct {
	guid     check.GUID
	isSwitch bool
}

// tapAddr is an SMP's destination as a map key: a directed route, or a LID.
type tapAddr struct {
	path string // the directed route's egress ports
	lid  uint16 // a LID-routed SMP's destination; 0 when directed
}

type tappedPortInfo struct {
	at   tapAddr
	port int
	pkey uint16
	qkey uint16
	lid  uint16
	up   bool // PortState INIT or above: a link
}

func newPortInfoTap(t mad.Transport) *portInfoTap {
	return &portInfoTap{t: t, nodeAt: map[tapAddr]tappedNode{}}
}

func (p *portInfoTap) Do(ctx context.Context, req mad.Request) (*mad.Packet, error) {
	pkt, err := p.t.Do(ctx, req)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.note(err)
		return pkt, err
	}
	p.observe(req, pkt.Data)
	return pkt, err
}

func (p *portInfoTap) Exchange(ctx context.Context, calls []mad.Call) error {
	err := mad.Exchange(ctx, p.t, calls)
	p.mu.Lock()
	first := len(p.infos)
	for i := range calls {
		if calls[i].Err == nil {
			p.observe(calls[i].Req, calls[i].Data())
		} else {
			p.note(calls[i].Err)
		}
	}
	if p.pma != nil && len(p.infos) > first {
		p.pma.read(p.pmaPorts(p.infos[first:]))
	}
	p.mu.Unlock()
	return err
}

// pmaPorts are where the PortCounters of the ports of infos go (sweepRecords' rule): a
// CA's port to its own LID, every port of a switch to the switch's LID (port 0's).
// Switch ports without a link are left out (not exported unless cabled); a port with
// no LID is not read (no SM has assigned one).
func (p *portInfoTap) pmaPorts(infos []tappedPortInfo) []pmaKey {
	switchLID := map[tapAddr]uint16{}
	for _, pi := range infos {
		if n, ok := p.nodeAt[pi.at]; ok && n.isSwitch && pi.port == 0 {
			switchLID[pi.at] = pi.lid
		}
	}
	var out []pmaKey
	for _, pi := range infos {
		n, ok := p.nodeAt[pi.at]
		if !ok || pi.port > 0xff {
			continue
		}
		lid := pi.lid
		if n.isSwitch {
			if pi.port > 0 && !pi.up {
				continue
			}
			lid = switchLID[pi.at]
		}
		if lid != 0 {
			out = append(out, pmaKey{lid: lid, port: uint8(pi.port)})
		}
	}
	return out
}

// Close does not close the transport: the collector's caller owns it.
func (p *portInfoTap) Close() error { return nil }

// note keeps err when it says the transport stopped working (p.mu held).
func (p *portInfoTap) note(err error) {
	if p.down == nil && errors.Is(err, mad.ErrTransportDown) {
		p.down = err
	}
}

// downErr is the first error that said the transport stopped working, or nil.
func (p *portInfoTap) downErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.down
}

func (p *portInfoTap) observe(req mad.Request, data []byte) {
	if req.Method != mad.MethodGet || req.Class != mad.ClassSubnLID && req.Class != mad.ClassSubnDirected {
		return
	}
	at := tapAddr{lid: req.Addr.LID}
	if req.Addr.Directed {
		at = tapAddr{path: string(req.Addr.Path)}
	}
	switch req.Attr {
	case mad.AttrNodeInfo:
		if ni, err := mad.ParseNodeInfo(data); err == nil {
			p.nodeAt[at] = tappedNode{guid: check.GUID(ni.NodeGUID), isSwitch: ni.NodeType == mad.NodeSwitch}
		}
	case mad.AttrPortInfo:
		if pi, err := mad.ParsePortInfo(data); err == nil {
			p.infos = append(p.infos, tappedPortInfo{at: at, port: int(req.Modifier), pkey: pi.PKeyViolations, qkey: pi.QKeyViolations,
				lid: pi.LID, up: pi.PortState >= mad.PortStateInit})
		}
	}
}

// portInfos returns the PortInfo of every port read through the tap (the last read,
// when a port was read through two addresses).
func (p *portInfoTap) portInfos() map[check.PortID]tappedPortInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[check.PortID]tappedPortInfo, len(p.infos))
	for _, pi := range p.infos {
		if n, ok := p.nodeAt[pi.at]; ok {
			out[check.PortID{Node: n.guid, Port: pi.port}] = pi
		}
	}
	return out
}

// pmaKey is where a port's PMA PortCounters are read: the LID the MAD goes to and the
// PortSelect it asks for.
type pmaKey struct {
	lid  uint16
	port uint8
}

// pmaPrefetch reads PortCounters while the sweep runs: a batch for the ports each of
// its batches of PortInfo replies named, handed to the same transport as the sweep
// works out its next batch (the transport's window takes batches in the order they
// come, so no MAD waits for the CPU work between two sweep batches), and what is
// left after the sweep is CPU work only. The readings are as fresh as the sweep's own.
type pmaPrefetch struct {
	ctx context.Context
	t   mad.Transport
	g   errgroup.Group

	mu    sync.Mutex
	asked map[pmaKey]bool
	got   map[pmaKey]*mad.Call
}

func newPMAPrefetch(ctx context.Context, t mad.Transport) *pmaPrefetch {
	return &pmaPrefetch{ctx: ctx, t: t, asked: map[pmaKey]bool{}, got: map[pmaKey]*mad.Call{}}
}

// read starts reading the ports not asked for yet.
func (pf *pmaPrefetch) read(ports []pmaKey) {
	pf.mu.Lock()
	var keys []pmaKey
	for _, k := range ports {
		if !pf.asked[k] {
			pf.asked[k] = true
			keys = append(keys, k)
		}
	}
	pf.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	calls := make([]mad.Call, len(keys))
	for i, k := range keys {
		calls[i].Req = portCountersRequest(k)
	}
	pf.g.Go(func() error {
		_ = mad.Exchange(pf.ctx, pf.t, calls) // each call carries its own error
		pf.mu.Lock()
		for i, k := range keys {
			pf.got[k] = &calls[i]
		}
		pf.mu.Unlock()
		return nil
	})
}

// done waits for every read started and returns what they got.
func (pf *pmaPrefetch) done() map[pmaKey]*mad.Call {
	_ = pf.g.Wait()
	return pf.got
}

func portCountersRequest(k pmaKey) mad.Request {
	return mad.Request{Addr: mad.LIDAddress(k.lid), Class: mad.ClassPerf, Method: mad.MethodGet,
		Attr: mad.AttrPortCounters, Data: mad.PortCountersRequestData(k.port)}
}

// readPortCounters reads PMA PortCounters of every record that has a LID and was not
// read already (got: a pmaPrefetch's), as one batch through tap (the transport's window
// keeps it full, as the sweep's batches do), and fills the records' constraint error
// readings; via names the transport in errors. It returns how many it sent.
func readPortCounters(ctx context.Context, tap *portInfoTap, via string, recs []portRecord, got map[pmaKey]*mad.Call) int {
	calls := make([]mad.Call, 0, len(recs))
	idx := make([]int, 0, len(recs))
	answers := make([]*mad.Call, len(recs))
	for i := range recs {
		r := &recs[i]
		if r.pmaLID == 0 {
			r.readings[0] = query.Reading{Unavailable: r.noPMA}
			r.readings[1] = r.readings[0]
			continue
		}
		k := pmaKey{lid: r.pmaLID, port: uint8(r.id.Port)}
		if c := got[k]; c != nil && r.id.Port <= 0xff {
			answers[i] = c
			continue
		}
		calls = append(calls, mad.Call{Req: portCountersRequest(k)})
		idx = append(idx, i)
	}
	_ = tap.Exchange(ctx, calls) // each call carries its own error
	for k := range calls {
		answers[idx[k]] = &calls[k]
	}
	if via != "" {
		via = " via " + via
	}
	for i, c := range answers {
		if c == nil {
			continue
		}
		r := &recs[i]
		pc, err := portCountersReply(c, uint8(r.id.Port))
		if err != nil {
			tap.mu.Lock()
			tap.note(err) // a prefetched call's error
			tap.mu.Unlock()
			reading := query.Reading{Err: fmt.Sprintf("PortCounters of port %d from lid %d%s: %v", r.id.Port, r.pmaLID, via, err)}
			r.readings[0], r.readings[1] = reading, reading
			continue
		}
		r.readings[0] = query.Reading{Value: uint64(pc.PortRcvConstraintErrors)}
		r.readings[1] = query.Reading{Value: uint64(pc.PortXmitConstraintErrors)}
	}
	return len(calls)
}

// portCountersReply decodes an exchanged Get PortCounters and checks that it answers
// for the port asked (mad.GetPortCounters' check).
func portCountersReply(c *mad.Call, port uint8) (mad.PortCounters, error) {
	if c.Err != nil {
		return mad.PortCounters{}, c.Err
	}
	pc, err := mad.ParsePortCounters(c.Data())
	if err != nil {
		return pc, err
	}
	if pc.PortSelect != port {
		return pc, fmt.Errorf("reply for port %d", pc.PortSelect)
	}
	return pc, nil
}
