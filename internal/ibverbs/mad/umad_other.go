//go:build !linux

package mad

import "errors"

// OpenUmad is only available on Linux.
func OpenUmad(device string, port int, opts UmadOptions) (*Umad, error) {
	return nil, errors.New("umad: the kernel umad interface needs Linux")
}
