package cmdutil

import (
	"errors"
	"fmt"

	"github.com/ibkey/ibkey/internal/query"
)

// HostPartial splits the error of a host read. A *query.PartialError (a device or port
// could not be read, the rest could) is warned about on n, one line per part not read
// (query.PartialError.Lines: a few, then a count), and comes back as after: exit 4, to
// return once the rest has been shown. Any other error comes back as fatal, to return
// at once.
func HostPartial(n *Notices, err error) (after, fatal error) {
	var pe *query.PartialError
	if !errors.As(err, &pe) {
		return nil, err
	}
	for _, l := range pe.Lines() {
		n.Warn("not read: " + l)
	}
	return Exit(ExitIncomplete), nil
}

// Then is err, or after when err is nil: a partial read's exit 4 after the output.
func Then(err, after error) error {
	if err != nil {
		return err
	}
	return after
}

// MaxWarnings is how many warnings WarnList prints before it counts the rest.
const MaxWarnings = 10

// WarnList prints msgs as warnings: the first MaxWarnings, then one line counting the
// others, which what says where to find ("-o json has them all"). Many ports of one
// broken tree are one screen of warnings, not one line each.
func (n *Notices) WarnList(msgs []string, what string) {
	for i, m := range msgs {
		if i == MaxWarnings && len(msgs) > MaxWarnings+1 {
			more := fmt.Sprintf("and %d more warnings", len(msgs)-MaxWarnings)
			if what != "" {
				more += " (" + what + ")"
			}
			n.Warn(more)
			return
		}
		n.Warn(m)
	}
}
