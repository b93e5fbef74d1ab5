package demo

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// Transport answers Get MADs from the demo fabric as its nodes' agents would: the SMA
// (NodeInfo, NodeDescription, SwitchInfo, PortInfo, P_KeyTable) and the PMA
// (PortCounters), sent from one of the demo host's ports. It routes as the fabric
// does: a directed route leaves a CA only through the port it is sent from and
// crosses switches only (IBA C14-9), a LID reaches the end port that holds it; what
// would not arrive, or a node would not answer, times out. Nothing is sent anywhere.
type Transport struct {
	f     *fabric.Fabric
	local check.PortID
	live  *ibverbs.Sysfs // the demo host, counters moving (LiveSysfs)
}

// Via names the transport in messages.
const Via = "the demo fabric (embedded sample data, not a real fabric)"

// OpenTransport attaches to the demo fabric at the demo host's port device/port
// (mlx5_0/1 or mlx5_1/1, the ports cabled to it). now is the clock the demo host's
// counters move with (LiveSysfs), in its PortCounters too.
func OpenTransport(device string, port int, now func() time.Time) (*Transport, error) {
	devices := map[string]check.GUID{"mlx5_0": hca1Node, "mlx5_1": hca2Node}
	g, ok := devices[device]
	f := Fabric()
	if !ok {
		return nil, fmt.Errorf("the demo host's %s is not cabled to the demo fabric (its InfiniBand ports: mlx5_0/1, mlx5_1/1)", device)
	}
	p := f.Port(check.PortID{Node: g, Port: port})
	if p == nil || p.State != check.StateActive {
		return nil, fmt.Errorf("the demo host's %s/%d is not an ACTIVE port of the demo fabric (its InfiniBand ports: mlx5_0/1, mlx5_1/1)", device, port)
	}
	return &Transport{f: f, local: check.PortID{Node: g, Port: port}, live: LiveSysfs(now)}, nil
}

// Close implements mad.Transport.
func (t *Transport) Close() error { return nil }

// Do implements mad.Transport.
func (t *Transport) Do(ctx context.Context, req mad.Request) (*mad.Packet, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Method != mad.MethodGet {
		return nil, fmt.Errorf("demo: only Get is answered")
	}
	noAnswer := &mad.TimeoutError{Addr: req.Addr, Attr: req.Attr, Attempts: 1, Timeout: time.Second, Dropped: true}
	n, arrival, ok := t.route(req.Addr)
	if !ok {
		return nil, noAnswer
	}
	data, status := t.answer(req, n, arrival)
	if status != 0 {
		return nil, &mad.StatusError{Addr: req.Addr, Attr: req.Attr, Status: status}
	}
	class := req.Class
	if req.Addr.Directed && class == mad.ClassSubnLID {
		class = mad.ClassSubnDirected
	}
	return &mad.Packet{Class: class, Method: mad.MethodGetResp, Attr: req.Attr, Modifier: req.Modifier, Data: data}, nil
}

// route finds the node an address reaches and the port it arrives on.
func (t *Transport) route(a mad.Address) (*fabric.Node, int, bool) {
	n, arrival := t.f.Node(t.local.Node), t.local.Port
	if !a.Directed {
		if a.LID == 0 || a.LID >= 0xc000 {
			return nil, 0, false
		}
		// A LID reaches the ACTIVE end port that holds it (switch port 0 for a
		// switch); LID routing needs the SM's routes, which ACTIVE ports have.
		for _, n := range t.f.Nodes {
			for _, p := range n.Ports {
				if n.IsEndPort(p) && check.LIDRangeHolds(p.LID, p.LMC, a.LID) && p.State == check.StateActive {
					return n, p.Num, true
				}
			}
		}
		return nil, 0, false
	}
	for hop, out := range a.Path {
		if hop == 0 && n.Type != check.NodeSwitch && int(out) != t.local.Port {
			return nil, 0, false // C14-9:1: a CA sends only out of its own port
		}
		if hop > 0 && n.Type != check.NodeSwitch {
			return nil, 0, false // C14-9:2: a CA does not forward
		}
		p := n.Port(int(out))
		if p == nil || p.Peer == nil || p.State == check.StateDown {
			return nil, 0, false
		}
		n, arrival = t.f.Node(p.Peer.Node), p.Peer.Port
	}
	return n, arrival, true
}

// answer encodes the attribute the node's agent returns; nil when it has none.
func (t *Transport) answer(req mad.Request, n *fabric.Node, arrival int) ([]byte, uint16) {
	const statusInvalidField = 0x1c // IBA 13.4.7: invalid value in attribute/modifier
	be := binary.BigEndian
	d := make([]byte, 64)
	if req.Class == mad.ClassPerf {
		return t.portCounters(req, n)
	}
	switch req.Attr {
	case mad.AttrNodeInfo:
		d[0], d[1] = 1, 1
		d[2] = map[check.NodeType]byte{check.NodeCA: 1, check.NodeSwitch: 2, check.NodeRouter: 3}[n.Type]
		d[3] = byte(n.NumPorts)
		be.PutUint64(d[4:], uint64(n.SystemImageGUID))
		be.PutUint64(d[12:], uint64(n.GUID))
		portGUID := n.GUID
		if n.Type != check.NodeSwitch {
			portGUID = n.Port(arrival).GUID
		}
		be.PutUint64(d[20:], uint64(portGUID))
		be.PutUint16(d[28:], uint16(n.PartitionCap))
		be.PutUint16(d[30:], n.DeviceID)
		be.PutUint32(d[32:], 1)
		d[36] = byte(arrival)
		d[37], d[38], d[39] = byte(n.VendorID>>16), byte(n.VendorID>>8), byte(n.VendorID)
	case mad.AttrNodeDescription:
		copy(d, n.Description)
	case mad.AttrSwitchInfo:
		if n.Type != check.NodeSwitch {
			return nil, statusInvalidField
		}
		be.PutUint16(d[0:], 0xc000)                             // LinearFDBCap
		be.PutUint16(d[4:], 0x0400)                             // MulticastFDBCap
		be.PutUint16(d[14:], uint16(n.PartitionEnforcementCap)) // PartitionEnforcementCap
		d[16] = 0xc0                                            // inbound and outbound enforcement
	case mad.AttrPortInfo:
		num := int(req.Modifier & 0xff)
		if num == 0 && n.Type != check.NodeSwitch {
			num = arrival // a CA's modifier 0: the port the SMP arrived on
		}
		p := n.Port(num)
		if p == nil {
			return nil, statusInvalidField
		}
		if n.Type != check.NodeSwitch || p.Num == 0 {
			be.PutUint64(d[8:], uint64(p.GIDPrefix))
			be.PutUint16(d[16:], p.LID)
			be.PutUint16(d[18:], p.SMLID)
		}
		d[28] = byte(p.Num)
		d[31] = 2 // LinkWidthActive 4X
		state := map[string]byte{check.StateDown: 1, check.StateInit: 2, check.StateArmed: 3, check.StateActive: 4}[p.State]
		phys := map[string]byte{"Polling": 2, "Disabled": 3, "LinkUp": 5}[p.PhysState]
		d[32] = 0x70 | state // LinkSpeedSupported SDR/DDR/QDR
		d[33] = phys << 4
		d[34] = p.LMC & 0x07
		d[35] = 0x40 // LinkSpeedActive QDR
		// The demo host's own ports run at the rates its sysfs says (host/.../rate),
		// the rest of the demo fabric at 4X QDR.
		switch hostRates[check.PortID{Node: n.GUID, Port: p.Num}] {
		case "SDR":
			d[35] = 0x10
		case "EDR":
			be.PutUint32(d[20:], mad.CapExtendedSpeeds)
			d[62] = 2 << 4 // LinkSpeedExtActive EDR
		case "HDR":
			be.PutUint32(d[20:], mad.CapExtendedSpeeds)
			d[62] = 4 << 4 // LinkSpeedExtActive HDR
		}
		if e := p.Enforcement; e != nil {
			if e.Inbound {
				d[43] |= 0x08
			}
			if e.Outbound {
				d[43] |= 0x04
			}
		}
		be.PutUint16(d[46:], p.PKeyViolations)
	case mad.AttrPKeyTable:
		num := arrival // a CA answers for the port the SMP arrived on (IBA 14.2.5.7)
		if n.Type == check.NodeSwitch {
			num = int(req.Modifier >> 16 & 0xff)
		}
		p := n.Port(num)
		block := int(req.Modifier & 0xffff)
		if p == nil || p.PKeys == nil || block*mad.PKeysPerBlock >= p.TableSize {
			return nil, statusInvalidField
		}
		for i := 0; i < mad.PKeysPerBlock; i++ {
			if k := block*mad.PKeysPerBlock + i; k < len(p.PKeys) {
				be.PutUint16(d[2*i:], uint16(p.PKeys[k]))
			}
		}
	default:
		return nil, statusInvalidField
	}
	return d, 0
}

// portCounters is the PMA's PortCounters of the port the request selects: quiet
// error counters (ibkey decodes no data counters, mad.PortCounters). The demo host's
// own ports answer what its sysfs counters say (movers moves some of them).
func (t *Transport) portCounters(req mad.Request, n *fabric.Node) ([]byte, uint16) {
	if req.Attr != mad.AttrPortCounters || len(req.Data) < 2 {
		return nil, 0x1c
	}
	num := int(req.Data[1])
	p := n.Port(num)
	if p == nil || num == 0 && n.Type != check.NodeSwitch {
		return nil, 0x1c
	}
	d := make([]byte, 192)
	d[1] = byte(num)
	if dev := map[check.GUID]string{hca1Node: "mlx5_0", hca2Node: "mlx5_1"}[n.GUID]; dev != "" {
		t.hostCounters(d, dev, num)
	}
	return d, 0
}

// pmaOffsets are the byte offsets in the PortCounters data area (IBA 16.1.3.5) of the
// sysfs counter files (the kernel's drivers/infiniband/core/sysfs.c reads them from
// the PMA); their widths are ibverbs.CounterWidths.
var pmaOffsets = map[string]int{
	"symbol_error": 4, "link_error_recovery": 6, "link_downed": 7,
	"port_rcv_errors": 8, "port_rcv_remote_physical_errors": 10,
	"port_rcv_switch_relay_errors": 12, "port_xmit_discards": 14,
	"port_xmit_constraint_errors": 16, "port_rcv_constraint_errors": 17,
	"VL15_dropped": 22, "port_xmit_wait": 40,
}

// hostCounters writes what the demo host's sysfs counters of dev/port say (moving as
// movers say) into d, so --lid and the local view agree.
func (t *Transport) hostCounters(d []byte, dev string, port int) {
	for name, off := range pmaOffsets {
		c := t.live.ReadCounter(dev, port, name)
		if c.Err != nil || c.Unavailable != "" {
			continue
		}
		bits := ibverbs.CounterWidths[name]
		v := min(c.Value, uint64(1)<<bits-1) // counters saturate
		switch bits {
		case 8:
			d[off] = byte(v)
		case 16:
			binary.BigEndian.PutUint16(d[off:], uint16(v))
		case 32:
			binary.BigEndian.PutUint32(d[off:], uint32(v))
		}
	}
}

// hostRates are the 4X speeds of the demo host's ports in the demo fabric, as the
// demo host's sysfs rate files give them (TestDemoRatesAgree keeps them equal).
var hostRates = map[check.PortID]string{
	{Node: hca1Node, Port: 1}: "EDR", // mlx5_0/1: 100 Gb/sec (4X EDR)
	{Node: hca2Node, Port: 1}: "HDR", // mlx5_1/1: 200 Gb/sec (4X HDR)
	{Node: hca2Node, Port: 2}: "SDR", // mlx5_1/2: 10 Gb/sec (4X SDR)
}
