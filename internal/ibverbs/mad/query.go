package mad

import (
	"context"
	"fmt"
)

// get sends req as a Get and decodes the reply's data area with parse (for an SA
// reply, its first record). An SA reply cut to its first RMPP segment is
// ErrCutAnswer.
func get[T any](ctx context.Context, t Transport, req Request, parse func([]byte) (T, error)) (T, error) {
	req.Method = MethodGet
	p, err := t.Do(ctx, req)
	if err == nil && p.Cut {
		err = ErrCutAnswer
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return parse(p.Data)
}

// GetNodeInfo reads NodeInfo from the node at a.
func GetNodeInfo(ctx context.Context, t Transport, a Address) (NodeInfo, error) {
	return get(ctx, t, Request{Addr: a, Class: ClassSubnLID, Attr: AttrNodeInfo}, ParseNodeInfo)
}

// GetNodeDesc reads NodeDescription from the node at a.
func GetNodeDesc(ctx context.Context, t Transport, a Address) (string, error) {
	return get(ctx, t, Request{Addr: a, Class: ClassSubnLID, Attr: AttrNodeDescription}, ParseNodeDescription)
}

// GetPortInfo reads PortInfo of port (0 is a switch's management port) of
// the node at a.
func GetPortInfo(ctx context.Context, t Transport, a Address, port uint8) (PortInfo, error) {
	return get(ctx, t, Request{Addr: a, Class: ClassSubnLID, Attr: AttrPortInfo, Modifier: uint32(port)}, ParsePortInfo)
}

// GetSwitchInfo reads SwitchInfo from the switch at a. CAs answer with a
// *StatusError.
func GetSwitchInfo(ctx context.Context, t Transport, a Address) (SwitchInfo, error) {
	return get(ctx, t, Request{Addr: a, Class: ClassSubnLID, Attr: AttrSwitchInfo}, ParseSwitchInfo)
}

// maxPKeyTableLen: the table length is a 16-bit number.
const maxPKeyTableLen = 0xffff

// GetPKeyTable reads the first tableLen entries of port's P_Key table on the
// node at a, sending the ceil(tableLen/32) block reads as one batch (the
// transport's window bounds how many are in flight). For a CA the port in the
// modifier is ignored by the device: it answers for the port the SMP arrived
// on, so address each CA port through a route that ends on it.
func GetPKeyTable(ctx context.Context, t Transport, a Address, port uint8, tableLen int) ([]uint16, error) {
	calls, err := AppendPKeyTableCalls(nil, a, port, tableLen)
	if err != nil {
		return nil, err
	}
	if err := Exchange(ctx, t, calls); err != nil {
		return nil, err
	}
	return PKeyTableFromCalls[uint16](calls, port, tableLen)
}

// AppendPKeyTableCalls appends to dst the block reads of the first tableLen
// entries of port's P_Key table on the node at a, for Exchange (a sweep
// gathers every table of a level in one batch).
func AppendPKeyTableCalls(dst []Call, a Address, port uint8, tableLen int) ([]Call, error) {
	if tableLen < 0 || tableLen > maxPKeyTableLen {
		return dst, fmt.Errorf("mad: P_Key table length %d out of range 0-%d", tableLen, maxPKeyTableLen)
	}
	for b := range (tableLen + PKeysPerBlock - 1) / PKeysPerBlock {
		dst = append(dst, Call{Req: Request{Addr: a, Class: ClassSubnLID, Method: MethodGet, Attr: AttrPKeyTable, Modifier: PKeyTableModifier(uint16(b), port)}})
	}
	return dst, nil
}

// PKeyTableFromCalls assembles the table, as K (uint16 or a type of it), from the
// exchanged block reads of AppendPKeyTableCalls; the error names the first block
// that failed.
func PKeyTableFromCalls[K ~uint16](calls []Call, port uint8, tableLen int) ([]K, error) {
	table := make([]K, len(calls)*PKeysPerBlock)
	for b := range calls {
		err := calls[b].Err
		if err == nil {
			var blk [PKeysPerBlock]uint16
			if blk, err = ParsePKeyBlock(calls[b].Data()); err == nil {
				for i, k := range blk {
					table[b*PKeysPerBlock+i] = K(k)
				}
				continue
			}
		}
		return nil, fmt.Errorf("P_KeyTable block %d of port %d: %w", b, port, err)
	}
	return table[:tableLen], nil
}
