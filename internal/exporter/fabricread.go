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
	at    tapAddr
	port  int
	pkey  uint16
	qkey  uint16
	lid   uint16
	state mad.PortState
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

// pmaPorts are the ports of infos whose PortCounters sweepRecords reads, and where, by
// sweepPMA as there; and not a switch port without a link (no cable: not exported).
func (p *portInfoTap) pmaPorts(infos []tappedPortInfo) []query.PMAPort {
	switchLID := map[tapAddr]uint16{}
	for _, pi := range infos {
		if n, ok := p.nodeAt[pi.at]; ok && n.isSwitch && pi.port == 0 {
			switchLID[pi.at] = pi.lid
		}
	}
	var out []query.PMAPort
	for _, pi := range infos {
		n, ok := p.nodeAt[pi.at]
		if !ok || pi.port > 0xff || n.isSwitch && pi.port > 0 && pi.state < mad.PortStateInit {
			continue
		}
		if pma := sweepPMA(n.isSwitch, pi.lid, switchLID[pi.at], pi.state == mad.PortStateDown); pma.NoPortCounters().Unavailable == "" {
			out = append(out, pma.PMA(pi.port))
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
				lid: pi.LID, state: pi.PortState})
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

// pmaPrefetch reads PortCounters while the sweep runs: a batch for the ports each of
// its batches of PortInfo replies named, handed to the same transport as the sweep
// works out its next batch (the transport's window takes batches in the order they
// come, so no MAD waits for the CPU work between two sweep batches), and what is
// left after the sweep is CPU work only. The readings are as fresh as the sweep's own.
// Each batch is query.ReadPortCounters, the one PMA reader.
type pmaPrefetch struct {
	ctx context.Context
	t   mad.Transport
	g   errgroup.Group

	mu    sync.Mutex
	asked map[query.PMAPort]bool
	got   map[query.PMAPort]query.PMAReading
}

func newPMAPrefetch(ctx context.Context, t mad.Transport) *pmaPrefetch {
	return &pmaPrefetch{ctx: ctx, t: t, asked: map[query.PMAPort]bool{}, got: map[query.PMAPort]query.PMAReading{}}
}

// read starts reading the ports not asked for yet.
func (pf *pmaPrefetch) read(ports []query.PMAPort) {
	pf.mu.Lock()
	var keys []query.PMAPort
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
	pf.g.Go(func() error {
		got := query.ReadPortCounters(pf.ctx, pf.t, keys)
		pf.mu.Lock()
		for i, k := range keys {
			pf.got[k] = got[i]
		}
		pf.mu.Unlock()
		return nil
	})
}

// done waits for every read started and returns what they got.
func (pf *pmaPrefetch) done() map[query.PMAPort]query.PMAReading {
	_ = pf.g.Wait()
	return pf.got
}

// readPortCounters reads PMA PortCounters of every record that has a LID and was not
// read already (got: a pmaPrefetch's), as one batch through tap (query.ReadPortCounters),
// and fills the records' constraint error readings; via names the transport in errors.
// It returns how many it sent.
func readPortCounters(ctx context.Context, tap *portInfoTap, via string, recs []*portRecord, got map[query.PMAPort]query.PMAReading) int {
	if via != "" {
		via = " via " + via
	}
	fill := func(r *portRecord, a query.PMAReading) {
		if a.Err != nil {
			tap.mu.Lock()
			tap.note(a.Err) // a prefetched read's error
			tap.mu.Unlock()
			reading := query.Reading{Err: fmt.Sprintf("PortCounters of port %d from lid %d%s: %v", r.id.Port, r.pma.LID, via, a.Err)}
			r.readings[0], r.readings[1] = reading, reading
			return
		}
		r.readings[0] = query.Reading{Value: uint64(a.Counters.PortRcvConstraintErrors)}
		r.readings[1] = query.Reading{Value: uint64(a.Counters.PortXmitConstraintErrors)}
	}
	keys := make([]query.PMAPort, 0, len(recs))
	idx := make([]int, 0, len(recs))
	for i, r := range recs {
		if r.noPMA.Unavailable != "" {
			r.readings[0] = r.noPMA
			r.readings[1] = r.readings[0]
			continue
		}
		k := r.pma
		if a, ok := got[k]; ok && r.id.Port <= 0xff {
			fill(r, a)
			continue
		}
		keys = append(keys, k)
		idx = append(idx, i)
	}
	for k, a := range query.ReadPortCounters(ctx, tap, keys) {
		fill(recs[idx[k]], a)
	}
	return len(keys)
}
