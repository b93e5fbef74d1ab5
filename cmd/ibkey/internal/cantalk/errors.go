package cantalk

import (
	"errors"
	"fmt"

	"github.com/ibkey/ibkey/internal/query"
)

// withSourceFlags gives an endpoint that cannot be resolved from the sources given
// (query.EndpointSourceError) a message naming can-talk's flags that supply them;
// other errors are returned as they are.
func withSourceFlags(err error) error {
	var e *query.EndpointSourceError
	if !errors.As(err, &e) {
		return err
	}
	msg := e.Error()
	switch {
	case errors.Is(e, query.ErrGUIDNeedsSource):
		hint := ""
		if e.MaybePKey() {
			hint = " (if you meant a P_Key: a P_Key is at most 0xffff)"
		}
		msg = fmt.Sprintf("endpoint %q is a port GUID (%s)%s: resolving a GUID needs --partitions FILE (the tables the SM would program), --fabric-file FILE (a saved sweep) or a fabric to sweep (--ibsim, --ca); or use DEV/PORT for a local port or a P_Key value",
			e.Token, e.Spec.GUID.String(), hint)
	case errors.Is(e, query.ErrLIDNeedsFabric):
		msg = fmt.Sprintf("endpoint %q is a port read over the fabric (LID %d): it needs fabric access (MADs via umad or --ibsim) or --fabric-file FILE; use DEV/PORT for a local port or the P_Key the remote QP uses",
			e.Token, e.Spec.LID)
	case errors.Is(e, query.ErrNodeNeedsSweep):
		msg = fmt.Sprintf("endpoint %q names a node of the fabric: it needs a sweep (fabric access via umad or --ibsim, or --fabric-file FILE)", e.Token)
	case errors.Is(e, query.ErrIndexNeedsSweep):
		msg = fmt.Sprintf("endpoint %q: index= and port= need a port of a sweep; with --partitions a GUID is a partitions.conf member, which has no table index", e.Token)
	}
	return &query.UsageError{Msg: msg, Err: e}
}
