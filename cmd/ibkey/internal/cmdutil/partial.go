package cmdutil

import (
	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
)

// HostNotRead reports what a read of the host's ports did not read, by the one rule
// (query.NotRead): the devices, ports, interfaces and fabric addresses (unread-node)
// not read are warned on n, one line each ("not read: device mlx5_1: ..."; a few,
// then a count: query.PartialError.Lines), the tables and entries the command shows
// with their ports. Every one comes back as a document's incomplete and, when there
// is any, after is exit 4, to return once the rest has been shown. Any other error
// comes back as fatal, to return at once. views nil: only what err names.
func HostNotRead(n *Notices, views []*query.PortView, err error) (incomplete []Incomplete, after, fatal error) {
	unread, err := query.NotRead(views, err)
	if err != nil {
		return nil, nil, err
	}
	down := map[query.PortRef]bool{}
	for _, v := range views {
		if DownTableNotRead(v) {
			down[v.Ref()] = true
		}
	}
	var parts []query.Unread
	for _, u := range unread {
		if u.Table && down[query.PortRef{Device: u.Device, Port: u.Port}] {
			continue // part of no answer (DownTableNotRead): the command notes it
		}
		kind := IncompleteUnreadDevice
		if u.Address != nil {
			kind = IncompleteUnreadNode // a node of the fabric, as in a sweep
		}
		switch {
		case u.Table:
			kind = IncompleteUnreadTable
		case u.Entries:
			kind = IncompleteUnreadEntries
		default:
			parts = append(parts, u)
		}
		incomplete = append(incomplete, Incomplete{kind, u.Message()})
	}
	for _, l := range (&query.PartialError{Unread: parts}).Lines() {
		n.Warn("not read: " + l)
	}
	if len(incomplete) > 0 {
		after = Exit(ExitIncomplete)
	}
	return incomplete, after, nil
}

// DownTableNotRead reports whether v is a DOWN port read over the fabric whose P_Key
// table was not read. Nothing can read it: no SMP arrives on a DOWN port, and a CA
// answers P_KeyTable only for the port an SMP arrives on (IBA 14.2.5.7). And it is part
// of no answer: its contents are defined only while the port is ARMED or ACTIVE (IBA
// 10.9.2; ibv_query_pkey(3)), no packet passes a DOWN port, and the SM programs the
// table before the port becomes ACTIVE again. So it is shown n/a with the reason in a
// note, not a gap (no exit 4), as a sweep leaves DOWN ports out of what it did not
// read (fabric.Fabric.NotRead: fabric pkeys, fabric check, the exporter) and watch
// counters their PortCounters over the fabric; pkeys --find counts the port as not
// holding the key, as fabric pkeys --key leaves it out of the members. Its host's
// sysfs shows what the device holds.
func DownTableNotRead(v *query.PortView) bool {
	return v.Fabric != nil && v.Port != nil && v.Port.State.Num == ibverbs.StateDown && v.TableNotRead() != ""
}

// Then is err, or after when err is nil: a partial read's exit 4 after the output.
func Then(err, after error) error {
	if err != nil {
		return err
	}
	return after
}
