package query

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/fsread"
	"github.com/ibkey/ibkey/internal/partconf"
)

// SetPortTypes sets p's Types, TableSizes and TypesComplete from the ports given on
// the command line (--router: the router ports; "none": there are none) and, f
// non-nil, every end port of the saved sweep f (CA and router ports, a switch's port
// 0). OpenSM gives a port ALL_CAS', ALL_ROUTERS' or ALL_SWITCHES' entries by its node
// type (osm_prtn_config.c, partition_add_all), so a GUID's type must not be guessed;
// and it fills a CA or router port, or a switch's port 0, up to its node's NodeInfo
// PartitionCap (osm_pkey_mgr.c, pkey_mgr_get_physp_max_pkeys), which the sweep read.
// The types are complete when --router or a sweep was given: a port they do not name
// is a CA port; otherwise its type is unknown.
func (p *Partitions) SetPortTypes(routers []string, f *fabric.Fabric) error {
	p.Types, p.TableSizes = map[check.GUID]check.NodeType{}, map[check.GUID]int{}
	if f != nil {
		for _, n := range f.Nodes {
			for _, port := range n.Ports {
				if port.GUID != 0 && n.IsEndPort(port) {
					p.Types[port.GUID] = n.Type
					if size := cmp.Or(port.TableSize, n.PartitionCap); size > 0 {
						p.TableSizes[port.GUID] = size
					}
				}
			}
		}
	}
	for _, s := range routers {
		if s == "none" {
			if len(routers) > 1 {
				return &UsageError{Msg: "--router none says there are no router ports: it cannot come with router GUIDs"}
			}
			continue
		}
		g, err := check.ParseGUID(strings.TrimPrefix(s, "guid="))
		if err != nil {
			return err
		}
		p.Types[g] = check.NodeRouter
	}
	p.TypesComplete = f != nil || len(routers) > 0
	return nil
}

// ConfPartitions is what an opensm.conf's partition_config_file gave a command given
// no partitions file (ReadOpenSMConf); each command says it in its own words.
type ConfPartitions int

const (
	ConfGiven    ConfPartitions = iota // a partitions file was given: the conf's is not asked for
	ConfFound                          // the conf's file, on this machine, is now the partitions file
	ConfEmpty                          // empty: OpenSM reads none and programs partconf.NoFile()
	ConfRelative                       // relative to OpenSM's working directory, which ibkey cannot see
	ConfMissing                        // not on this machine
)

// ReadOpenSMConf reads --opensm-conf FILE, OpenSM's options as it reads them
// (partconf.ParseOpenSMConf): a file that cannot be read is bad usage. When
// *partitions is "", it becomes the file's partition_config_file if that is on this
// machine (ConfFound; an audit may run elsewhere than OpenSM). An empty one, which
// OpenSM never finds, is ConfEmpty: OpenSM then programs partconf.NoFile(). A relative
// one is OpenSM's working directory's (osm_prtn_make_partitions stats it as given;
// daemonize does not chdir), which ibkey cannot see: none is taken (ConfRelative).
// osm.Warnings are the values OpenSM replaces with its defaults.
func ReadOpenSMConf(path string, partitions *string) (osm *partconf.OpenSMConf, src ConfPartitions, err error) {
	data, err := fsread.ReadFile(path, partconf.MaxOpenSMConfSize, "an opensm.conf")
	if err != nil {
		return nil, 0, &UsageError{Msg: fmt.Sprintf("--opensm-conf: %v", err)}
	}
	osm = partconf.ParseOpenSMConf(path, data)
	file := osm.PartitionsFile()
	switch {
	case *partitions != "":
		return osm, ConfGiven, nil
	case file == "":
		return osm, ConfEmpty, nil
	case !filepath.IsAbs(file):
		return osm, ConfRelative, nil
	}
	if _, err := os.Stat(file); err != nil {
		return osm, ConfMissing, nil
	}
	*partitions = file
	return osm, ConfFound, nil
}

// NotCompared reports whether the conf names a partitions file an audit could not
// compare with (relative, or not on this machine): fabric check exits 4 for it, the
// exporter warns.
func (src ConfPartitions) NotCompared() bool { return src == ConfRelative || src == ConfMissing }

// AuditNote is how a command that audits a sweep against the conf's partitions
// (fabric check, the exporter) says what src gave: which file it compares with, or
// why none ("" for ConfGiven). conf is the opensm.conf's path.
func (src ConfPartitions) AuditNote(conf string, osm *partconf.OpenSMConf) string {
	file := osm.PartitionsFile()
	switch src {
	case ConfFound:
		return fmt.Sprintf("comparing with %s (partition_config_file of %s)", file, conf)
	case ConfEmpty:
		return fmt.Sprintf("comparing with OpenSM's own Default=0x7fff, ipoib : ALL=full: %s sets partition_config_file empty, so OpenSM reads no partitions.conf", conf)
	case ConfRelative:
		return fmt.Sprintf("not compared with a partitions.conf: %s names %s, relative to OpenSM's working directory, which ibkey cannot see (give --partitions)", conf, file)
	case ConfMissing:
		return fmt.Sprintf("not compared with a partitions.conf: %s names %s, which is not here (give --partitions)", conf, file)
	}
	return ""
}
