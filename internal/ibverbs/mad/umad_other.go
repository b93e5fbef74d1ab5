//go:build !linux

package mad

import (
	"context"
	"errors"
)

// OpenUmad is only available on Linux.
func OpenUmad(device string, port int, opts UmadOptions) (*Umad, error) {
	return nil, errors.New("umad: the kernel umad interface needs Linux")
}

// DialIbsim is only available on Linux: ibsim's sockets live in Linux's
// abstract unix socket namespace.
func DialIbsim(ctx context.Context, opts IbsimOptions) (*Ibsim, error) {
	return nil, errors.New("ibsim: the simulator's abstract unix sockets need Linux")
}
