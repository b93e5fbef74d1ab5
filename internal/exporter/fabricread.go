package exporter

import (
	"context"
	"fmt"
	"sync"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
)

// portInfoTap is the transport the exporter's sweep goes through: it passes every MAD
// on unchanged and keeps the Q_KeyViolations of the PortInfo replies, which the
// swept fabric model (check.Port) does not keep, so the exporter does not read every
// port's PortInfo a second time. A directed route names one node (IBA 14.2.2: the
// route is the list of egress ports from the local node), so a PortInfo read
// through route R belongs to the node whose NodeInfo answered through R.
type portInfoTap struct {
	t mad.Transport

	mu     sync.Mutex
	nodeAt map[string]check.GUID // directed route → the node GUID NodeInfo returned there
	infos  []tappedPortInfo
}

type tappedPortInfo struct {
	route string
	port  int
	qkey  uint16
}

var _ mad.Exchanger = (*portInfoTap)(nil)

func newPortInfoTap(t mad.Transport) *portInfoTap {
	return &portInfoTap{t: t, nodeAt: map[string]check.GUID{}}
}

func (p *portInfoTap) Do(ctx context.Context, req mad.Request) (*mad.Packet, error) {
	pkt, err := p.t.Do(ctx, req)
	if err == nil {
		p.mu.Lock()
		p.observe(req, pkt.Data)
		p.mu.Unlock()
	}
	return pkt, err
}

func (p *portInfoTap) Exchange(ctx context.Context, calls []mad.Call) error {
	err := mad.Exchange(ctx, p.t, calls)
	p.mu.Lock()
	for i := range calls {
		if calls[i].Err == nil {
			p.observe(calls[i].Req, calls[i].Data())
		}
	}
	p.mu.Unlock()
	return err
}

// Close does not close the transport: the collector's caller owns it.
func (p *portInfoTap) Close() error { return nil }

func (p *portInfoTap) observe(req mad.Request, data []byte) {
	if !req.Addr.Directed || req.Method != mad.MethodGet {
		return
	}
	switch req.Attr {
	case mad.AttrNodeInfo:
		if ni, err := mad.ParseNodeInfo(data); err == nil {
			p.nodeAt[string(req.Addr.Path)] = check.GUID(ni.NodeGUID)
		}
	case mad.AttrPortInfo:
		if pi, err := mad.ParsePortInfo(data); err == nil {
			p.infos = append(p.infos, tappedPortInfo{route: string(req.Addr.Path), port: int(req.Modifier), qkey: pi.QKeyViolations})
		}
	}
}

// qkeyViolations returns the Q_KeyViolations of every port whose PortInfo the sweep
// read (the last read, when a port was read through two routes).
func (p *portInfoTap) qkeyViolations() map[check.PortID]uint16 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[check.PortID]uint16, len(p.infos))
	for _, pi := range p.infos {
		if g, ok := p.nodeAt[pi.route]; ok {
			out[check.PortID{Node: g, Port: pi.port}] = pi.qkey
		}
	}
	return out
}

// readPortCounters reads PMA PortCounters of every record that has a LID, as one batch
// through mad.Exchange (the transport's window keeps it full, as the sweep's batches
// do), and fills the records' constraint error readings.
func readPortCounters(ctx context.Context, fab *query.Fabric, recs []portRecord) {
	calls := make([]mad.Call, 0, len(recs))
	idx := make([]int, 0, len(recs))
	for i := range recs {
		r := &recs[i]
		if r.pmaLID == 0 {
			r.readings[0] = query.Reading{Unavailable: r.noPMA}
			r.readings[1] = r.readings[0]
			continue
		}
		calls = append(calls, mad.Call{Req: mad.Request{Addr: mad.LIDAddress(r.pmaLID), Class: mad.ClassPerf, Method: mad.MethodGet,
			Attr: mad.AttrPortCounters, Data: mad.PortCountersRequestData(uint8(r.id.Port))}})
		idx = append(idx, i)
	}
	_ = mad.Exchange(ctx, fab.T, calls) // each call carries its own error
	for k := range calls {
		r := &recs[idx[k]]
		pc, err := portCountersReply(&calls[k], uint8(r.id.Port))
		if err != nil {
			via := ""
			if fab.Via != "" {
				via = " via " + fab.Via
			}
			reading := query.Reading{Err: fmt.Sprintf("PortCounters of port %d from lid %d%s: %v", r.id.Port, r.pmaLID, via, err)}
			r.readings[0], r.readings[1] = reading, reading
			continue
		}
		r.readings[0] = query.Reading{Value: uint64(pc.PortRcvConstraintErrors)}
		r.readings[1] = query.Reading{Value: uint64(pc.PortXmitConstraintErrors)}
	}
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
