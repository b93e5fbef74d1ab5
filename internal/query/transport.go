package query

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
)

// TransportOptions say how to reach the fabric: through the ibsim simulator (Ibsim
// set) or a local port's umad device.
type TransportOptions struct {
	// Ibsim is the simulator's socket base name; "" selects umad.
	Ibsim string
	// SimNode is where to attach to the simulator ("" its first node).
	SimNode string
	// CA and CAPort are the local umad port; CA "" picks the host's first ACTIVE
	// InfiniBand port (Host is read then), CAPort 0 is port 1.
	CA     string
	CAPort int
	MAD    mad.Options
	// Host is the local host (its sysfs root is umad's, its ports the default).
	Host func() *Host
	// DialIbsim and OpenUmad replace the transports in tests; DialIbsim returns the
	// node it attached to.
	DialIbsim func(ctx context.Context, o mad.IbsimOptions) (mad.Transport, string, error)
	OpenUmad  func(dev string, port int, o mad.UmadOptions) (mad.Transport, error)
}

// NoLocalPortError says that no local port can send MADs: the host could not be read
// (Err), or it has no ACTIVE InfiniBand port (Ports lists what it has, "mlx5_0/1
// InfiniBand DOWN"). The command says which flags choose one.
type NoLocalPortError struct {
	Err   error
	Ports []string
}

func (e *NoLocalPortError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("no local port to send MADs from: %v", e.Err)
	}
	return fmt.Sprintf("no ACTIVE InfiniBand port to send MADs from (ports: %s)", strings.Join(e.Ports, ", "))
}

func (e *NoLocalPortError) Unwrap() error { return e.Err }

// OpenFabric opens the transport o selects and names it (Fabric.Via: `ibsim "sim" at
// HcaA`, "mlx5_0/1"). Failing to attach or open is an *EnvError wrapping the
// transport's error (mad.ErrNoUmadDevice, a permission error, ibsim's refusal); no
// usable local port is a *NoLocalPortError. The caller closes Fabric.T (ibsim has 10
// client slots and never frees the slot of a client that exits without disconnecting).
func OpenFabric(ctx context.Context, o TransportOptions) (*Fabric, error) {
	if o.Ibsim != "" {
		dial := o.DialIbsim
		if dial == nil {
			dial = dialIbsim
		}
		t, node, err := dial(ctx, mad.IbsimOptions{SockName: o.Ibsim, Node: o.SimNode, Options: o.MAD})
		if err != nil {
			return nil, &EnvError{Msg: err.Error(), Err: err}
		}
		return &Fabric{T: t, Via: fmt.Sprintf("ibsim %q at %s", o.Ibsim, node)}, nil
	}
	dev, port, err := umadPort(o)
	if err != nil {
		return nil, err
	}
	open := o.OpenUmad
	if open == nil {
		open = func(dev string, port int, uo mad.UmadOptions) (mad.Transport, error) {
			return mad.OpenUmad(dev, port, uo)
		}
	}
	t, err := open(dev, port, mad.UmadOptions{SysfsRoot: o.Host().Sys.Root, Options: o.MAD})
	if err != nil {
		return nil, &EnvError{Msg: err.Error(), Err: err}
	}
	return &Fabric{T: t, Via: fmt.Sprintf("%s/%d", dev, port)}, nil
}

func dialIbsim(ctx context.Context, o mad.IbsimOptions) (mad.Transport, string, error) {
	t, err := mad.DialIbsim(ctx, o)
	if err != nil {
		return nil, "", err
	}
	return t, t.Node, nil
}

// umadPort is o's CA and port, or the host's first ACTIVE InfiniBand port.
func umadPort(o TransportOptions) (string, int, error) {
	if o.CA != "" {
		return o.CA, cmp.Or(o.CAPort, 1), nil
	}
	views, err := o.Host().Load(Selector{}, LoadOptions{})
	if err != nil {
		return "", 0, &NoLocalPortError{Err: err}
	}
	var seen []string
	for _, v := range views {
		if v.LinkLayer() == "InfiniBand" && v.Port.State.Num == ibverbs.StateActive {
			return v.Port.Device, v.Port.Num, nil
		}
		seen = append(seen, fmt.Sprintf("%s %s %s", v.Ref(), v.LinkLayer(), v.Port.State.Name))
	}
	return "", 0, &NoLocalPortError{Ports: seen}
}
