//go:build linux

package mad

import (
	"context"
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"
)

// AbandonConnect sends ibsim a CONNECT the way DialIbsim does (pinned, as DialIbsim
// always does, or not) and closes the client's sockets at once without awaiting the
// answer: what a client that gave up, or was killed, right after its CONNECT leaves in
// the queue of a stopped ibsim. It returns the client id the CONNECT carried.
func AbandonConnect(sockName string, id uint32, pin bool) error {
	c := &ibsimClient{base: sockName, server: abstractAddr(sockName + ":ctl"), ctl: -1, data: -1, ev: -1, slot: -1}
	defer c.closeSockets()
	if err := c.bind(id); err != nil {
		return err
	}
	var m [ibsimCtlSize]byte
	ne := binary.NativeEndian
	ne.PutUint32(m[0:], ibsimMagic)
	ne.PutUint32(m[8:], ibsimCtlConnect)
	ne.PutUint32(m[12:], 44)
	ne.PutUint32(m[16:], id) // struct sim_client_info: id, qp, issm, nodeid (empty)
	if err := unix.Sendto(c.ctl, m[:], unix.MSG_DONTWAIT, c.server); err != nil {
		return err
	}
	if pin {
		return c.pinDataSocket(context.Background(), time.Now().Add(time.Second))
	}
	return nil
}
