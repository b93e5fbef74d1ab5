package cmdutil

import (
	"errors"

	"github.com/ibkey/ibkey/internal/query"
)

// HostPartial splits the error of a host read. A *query.PartialError (a device or port
// could not be read, the rest could) is warned about on n, one line per part not read
// (query.PartialError.Lines: a few, then a count), and comes back as after: exit 4, to
// return once the rest has been shown, with what was not read as a document's
// incomplete (kind unread-device). Any other error comes back as fatal, to return at
// once.
func HostPartial(n *Notices, err error) (incomplete []Incomplete, after, fatal error) {
	var pe *query.PartialError
	if !errors.As(err, &pe) {
		return nil, nil, err
	}
	for _, l := range pe.Lines() {
		n.Warn("not read: " + l)
	}
	for _, u := range pe.Unread {
		incomplete = append(incomplete, Incomplete{IncompleteUnreadDevice, "not read: " + u.What + ": " + u.Err.Error()})
	}
	return incomplete, Exit(ExitIncomplete), nil
}

// Then is err, or after when err is nil: a partial read's exit 4 after the output.
func Then(err, after error) error {
	if err != nil {
		return err
	}
	return after
}
