package query

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fsread"
	"github.com/ibkey/ibkey/internal/partconf"
)

// AddPortTypes records in types the node types of the ports given on the command line
// (--router: the router ports; "none": there are none) and, f non-nil, of every end
// port of the saved sweep f (CA and router ports, a switch's port 0): OpenSM gives a
// port ALL_CAS', ALL_ROUTERS' or ALL_SWITCHES' entries by its node type
// (osm_prtn_config.c, partition_add_all), so a GUID's type must not be guessed. It
// reports whether the types are complete: --router or a sweep was given, so a port
// they do not name is a CA port; otherwise its type is unknown.
func AddPortTypes(types map[check.GUID]check.NodeType, routers []string, f *fabric.Fabric) (complete bool, err error) {
	if f != nil {
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				if p.GUID != 0 && n.IsEndPort(p) {
					types[p.GUID] = n.Type
				}
			}
		}
	}
	for _, s := range routers {
		if s == "none" {
			if len(routers) > 1 {
				return false, &UsageError{Msg: "--router none says there are no router ports: it cannot come with router GUIDs"}
			}
			continue
		}
		g, err := check.ParseGUID(strings.TrimPrefix(s, "guid="))
		if err != nil {
			return false, err
		}
		types[g] = check.NodeRouter
	}
	return f != nil || len(routers) > 0, nil
}

// ReadOpenSMConf reads --opensm-conf FILE, OpenSM's options as it reads them
// (partconf.ParseOpenSMConf), for every command that audits a sweep (fabric check, the
// exporter): a file that cannot be read is bad usage. When *partitions (--partitions)
// is "", it becomes the file's partition_config_file if that is on this machine (the
// audit may run elsewhere than OpenSM), and an empty partition_config_file, which
// OpenSM never finds, gives noFile: what OpenSM then programs. note says which
// partitions.conf that is, or why there is none; osm.Warnings are the values OpenSM
// replaces with its defaults. A relative partition_config_file is OpenSM's working
// directory's (osm_prtn_make_partitions stats it as given; daemonize does not chdir),
// which ibkey cannot see: none is taken.
func ReadOpenSMConf(path string, partitions *string) (osm *partconf.OpenSMConf, noFile *partconf.Config, note string, err error) {
	data, err := fsread.ReadFile(path, partconf.MaxOpenSMConfSize, "an opensm.conf")
	if err != nil {
		return nil, nil, "", &UsageError{Msg: fmt.Sprintf("--opensm-conf: %v", err)}
	}
	osm = partconf.ParseOpenSMConf(path, data)
	if *partitions != "" {
		return osm, nil, "", nil
	}
	file := osm.PartitionsFile()
	if file == "" {
		return osm, partconf.NoFile(), fmt.Sprintf("comparing with OpenSM's own Default=0x7fff, ipoib : ALL=full: %s sets partition_config_file empty, so OpenSM reads no partitions.conf", path), nil
	}
	if !filepath.IsAbs(file) {
		return osm, nil, fmt.Sprintf("not compared with a partitions.conf: %s names %s, relative to OpenSM's working directory, which ibkey cannot see (give --partitions)", path, file), nil
	}
	if _, err := os.Stat(file); err != nil {
		return osm, nil, fmt.Sprintf("not compared with a partitions.conf: %s names %s, which is not here (give --partitions)", path, file), nil
	}
	*partitions = file
	return osm, nil, fmt.Sprintf("comparing with %s (partition_config_file of %s)", *partitions, path), nil
}
