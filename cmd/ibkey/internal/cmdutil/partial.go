package cmdutil

import (
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
		if v.DownTableNotRead() {
			down[v.Ref()] = true
		}
	}
	var parts []query.Unread
	for _, u := range unread {
		if u.Table && down[query.PortRef{Device: u.Device, Port: u.Port}] {
			continue // part of no answer (query.PortView.DownTableNotRead): the command notes it
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
