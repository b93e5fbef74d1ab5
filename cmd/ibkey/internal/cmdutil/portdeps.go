package cmdutil

import (
	"context"

	"github.com/ibkey/ibkey/internal/query"
)

// PortDeps are the dependencies of a command that reads ports, from sysfs or over
// MADs (devices, pkeys, can-talk, watch): its options struct embeds them.
type PortDeps struct {
	IO      *IOStreams
	Format  func() (Format, error)
	Notices func() *Notices
	Host    func() *query.Host
	// MAD holds the transport flags (AddMADFlags); Ctx is main's signal context, set
	// when the command runs.
	MAD *MADFlags
	Ctx context.Context
}

// NewPortDeps takes a port-reading command's dependencies from the Factory (MAD and
// Ctx are set later, when the flags are added and when the command runs).
func NewPortDeps(f *Factory) PortDeps {
	return PortDeps{IO: f.IOStreams, Format: f.Format, Notices: f.Notices, Host: f.Host}
}
