package lab

import (
	"context"
	"testing"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// Dial attaches an in-process MAD client to this lab's ibsim at node ("" = the first
// node of the topology) and closes it when the test ends, so no ibsim slot (there are
// 10) is left held. A Close error fails the test unless ibsim itself has exited.
func (l *Lab) Dial(t testing.TB, node string, opts mad.Options) *mad.Ibsim {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tr, err := mad.DialIbsim(ctx, mad.IbsimOptions{SockName: l.SockName, Node: node, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tr.Close(); err != nil && !l.Exited() {
			t.Errorf("Close: %v", err)
		}
	})
	return tr
}
