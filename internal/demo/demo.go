// Package demo embeds the demo host: a sysfs-shaped tree (written from
// fakesysfs.Demo by `make fixtures`) that the ordinary sysfs reader reads.
package demo

import (
	"embed"
	"io/fs"
)

//go:embed host
var tree embed.FS

// Label names the demo host in output, so nobody mistakes it for their machine.
const Label = "demo host (embedded sample data, not this machine)"

// FS returns the demo tree rooted like /sys.
func FS() fs.FS {
	sub, err := fs.Sub(tree, "host")
	if err != nil {
		panic(err) // "host" is a valid, embedded path: cannot happen
	}
	return sub
}
