package partconf

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
)

// OpenSM's own configuration file (opensm.conf, `opensm -F FILE`; `opensm -c FILE`
// writes one with every default), as osm_subnet.c reads it (osm_subn_parse_conf_file,
// ParseOpenSMConf): per line of at most 1022 bytes, everything from '#' on is a
// comment, the first word (split on space, tab, newline) is the option name, the rest
// of the line, trimmed, its value; an unknown name is ignored. The options that decide what OpenSM programs into
// P_Key tables:
//
//   - partition_config_file PATH (default /etc/opensm/partitions.conf; -P);
//   - part_enforce both|in|out|off (default both; -Z): partition enforcement on
//     switch ports facing end ports; any other value is logged ("Invalid Cached Option
//     Value") and both is used (osm_subn_verify_config);
//   - no_partition_enforcement TRUE (deprecated; -N): part_enforce off, whatever
//     part_enforce says;
//   - allow_both_pkeys TRUE|FALSE (default FALSE; -W);
//   - keep_pkey_indexes TRUE|FALSE (default TRUE): keep a key at the index it has;
//   - qos TRUE|FALSE (default FALSE; -Q): with it a partition keeps its sl=
//     (partition_create in osm_prtn_config.c), without it the SL is 0;
//   - guid GUID (default 0; -g): the port OpenSM binds to, which SELF names. 0 lets
//     OpenSM choose (main.c get_port_guid: the only local port, else the first not
//     DOWN). opts_parse_net64 reads it with strtoull(base 0) and refuses an empty
//     value, text after the number and an overflow ("-E- Parsing error in field
//     guid"), keeping the value it had;
//   - log_file PATH (default /var/log/opensm.log; -f): where OpenSM logs what
//     `ibkey sm log` reads. osm_log_init_v2 (libopensm/osm_log.c) writes to stdout
//     for (null), - and stdout, to stderr for stderr, else opens the path.
//
// Booleans follow opts_parse_boolean: exactly "TRUE" is true, anything else false.
//
// A running OpenSM re-reads the file in every heavy sweep (kill -HUP;
// osm_subn_rescan_conf_files) and applies part_enforce, no_partition_enforcement and
// keep_pkey_indexes again (can_update in opt_tbl; allow_both_pkeys only at start), but
// only a value the file gives and gave otherwise before (opts_parse_boolean,
// opts_parse_charp): a line removed leaves the value as it was (lab, 3.3.23:
// keep_pkey_indexes FALSE, then the line removed, then kill -HUP: still FALSE,
// TestLabKeepPKeyIndexesRunning). So the file is what a new OpenSM runs with, and what
// a running one runs with when no option it once set has left the file.

// OpenSMConf is what an opensm.conf sets for the partition manager.
type OpenSMConf struct {
	// File is where it was read from, to name it.
	File string
	// PartEnforce is part_enforce as OpenSM applies it: both, in, out or off
	// (no_partition_enforcement TRUE is off; a value OpenSM refuses is both). With
	// both, in and out OpenSM programs the tables of the switch ports facing end ports
	// alike (pkey_mgr_update_peer_port tests for off only); they differ in the
	// PortInfo enforcement bits it sets there (pkey_mgr_enforce_partition: both 0xc,
	// in 0x8 inbound, out 0x4 outbound), which fabric.AuditOptions.PartEnforce takes.
	PartEnforce     string
	AllowBoth       bool
	KeepPKeyIndexes bool
	QoS             bool
	// PartitionConfigFile is partition_config_file as OpenSM holds it (what
	// `opensm -c` writes back); PartitionsFile is the file it then reads.
	PartitionConfigFile string
	// GUID is guid: the port OpenSM binds to (SELF), 0 when OpenSM chooses.
	GUID check.GUID
	// LogFile is log_file as OpenSM holds it (LogPath: where that is).
	LogFile string
	// Warnings: values OpenSM replaces with its default, with the line.
	Warnings []string
}

// Options are opt with the file's options, which win over hand-given flags where
// they overlap (AllowBoth, EnforceOff).
func (c *OpenSMConf) Options(opt Options) Options {
	opt.AllowBoth, opt.EnforceOff, opt.ForgetIndexes, opt.QoS = c.AllowBoth, c.PartEnforce == "off", !c.KeepPKeyIndexes, c.QoS
	return opt
}

// FabricModel is NewFabricModel with the file's options (Options): with
// keep_pkey_indexes FALSE the tables of the sweep do not decide where a key goes
// (Options.ForgetIndexes), they are still what a switch port facing an end port
// keeps when OpenSM does not write it.
func (c *OpenSMConf) FabricModel(conf *Config, f *fabric.Fabric, opt Options) *Model {
	return NewFabricModel(conf, f, c.Options(opt))
}

// defaultPartitionsFile is OSM_DEFAULT_PARTITION_CONFIG_FILE (Debian's build).
const defaultPartitionsFile = "/etc/opensm/partitions.conf"

// PartitionsFile is the partitions.conf OpenSM reads: "(null)" is no value
// (opts_parse_charp), which osm_prtn_make_partitions replaces with its default; ""
// is a path stat(2) never finds, so OpenSM reads no file and programs only its own
// default partition (prtn_make_default: Default=0x7fff, ipoib : ALL=full).
func (c *OpenSMConf) PartitionsFile() string {
	if c.PartitionConfigFile == "(null)" {
		return defaultPartitionsFile
	}
	return c.PartitionConfigFile
}

// DefaultLogFile is where OpenSM logs unless told otherwise: OSM_DEFAULT_LOG_FILE
// (include/opensm/osm_base.h, Linux; opensm(8) -f).
const DefaultLogFile = "/var/log/opensm.log"

// LogPath is the file OpenSM logs to, or "" and the stream it writes instead
// (stdout, stderr: under systemd the journal) (osm_log_init_v2).
func (c *OpenSMConf) LogPath() (path, stream string) {
	switch c.LogFile {
	case "(null)", "-", "stdout":
		return "", "stdout"
	case "stderr":
		return "", "stderr"
	}
	return c.LogFile, ""
}

// NotMaster says, when c binds OpenSM to a port (guid) that is not the master SM's,
// the port the swept ports name by their SM LID (FabricPorts), that the tables are
// compared with a file the master may not read: a standby's or another subnet's
// conf. "" when they agree or either is not known.
func (c *OpenSMConf) NotMaster(f *fabric.Fabric) string {
	if c == nil || c.GUID == 0 {
		return ""
	}
	if _, master := FabricPorts(f); master != 0 && master != c.GUID {
		return fmt.Sprintf("%s binds OpenSM to port %s (guid), but the master SM the ports name runs on port %s: the tables are compared with what this file gives, which the master may not read", c.File, c.GUID, master)
	}
	return ""
}

// MaxOpenSMConfSize bounds what ParseOpenSMConf is given; OpenSM's own default file is
// about 40 KB.
const MaxOpenSMConfSize = 4 << 20

// ParseOpenSMConf reads an opensm.conf as osm_subn_parse_conf_file (osm_subnet.c)
// does: fgets(line, 1023) reads at most 1022 bytes, so a longer line is read as
// several; each is a C string (it ends at a NUL); from '#' on it is a comment;
// strtok_r(line, " \t\n") gives the name (a CR stays in it: "keep_pkey_indexes\r"
// is no option OpenSM knows); clean_val gives the value: the rest, without
// leading and trailing isspace, then one pair of matching quotes removed (a lone
// quote is both ends: nothing is left).
func ParseOpenSMConf(name string, data []byte) *OpenSMConf {
	c := &OpenSMConf{File: name, KeepPKeyIndexes: true, PartitionConfigFile: defaultPartitionsFile, LogFile: DefaultLogFile}
	partEnforce, noEnforce := "both", false
	lineNo := 1
	for len(data) > 0 {
		n := bytes.IndexByte(data, '\n') + 1
		if n == 0 {
			n = len(data)
		}
		n = min(n, 1022)
		chunk := string(data[:n])
		data = data[n:]
		at := lineNo
		if strings.HasSuffix(chunk, "\n") {
			lineNo++
		}
		if i := strings.IndexByte(chunk, 0); i >= 0 {
			chunk = chunk[:i]
		}
		if i := strings.IndexByte(chunk, '#'); i >= 0 {
			chunk = chunk[:i]
		}
		rest := strings.TrimLeft(chunk, " \t\n")
		if rest == "" {
			continue
		}
		key, val := rest, ""
		if i := strings.IndexAny(rest, " \t\n"); i >= 0 {
			key, val = rest[:i], rest[i+1:]
		}
		val = strings.Trim(val, " \t\n\v\f\r")
		if val != "" && (val[0] == '"' && val[len(val)-1] == '"' || val[0] == '\'' && val[len(val)-1] == '\'') {
			val = val[1:max(1, len(val)-1)]
		}
		switch key {
		case "part_enforce":
			partEnforce = val
		case "no_partition_enforcement":
			noEnforce = val == "TRUE"
		case "allow_both_pkeys":
			c.AllowBoth = val == "TRUE"
		case "keep_pkey_indexes":
			c.KeepPKeyIndexes = val == "TRUE"
		case "qos":
			c.QoS = val == "TRUE"
		case "partition_config_file":
			c.PartitionConfigFile = val
		case "log_file":
			c.LogFile = val
		case "guid":
			// opts_strtoull: the whole value is the number, and no overflow (strtoull's
			// ERANGE); "-1" is 0xffffffffffffffff, as strtoull wraps it.
			if v, n, erange := strtoullRange(val); val == "" || n != len(val) || erange {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s:%d: guid %s is not a number OpenSM reads: it logs a parsing error and keeps the port it had (%s)", name, at, strconv.Quote(val), c.GUID))
			} else {
				c.GUID = check.GUID(v)
			}
		}
		if (key == "allow_both_pkeys" || key == "keep_pkey_indexes" || key == "no_partition_enforcement" || key == "qos") && val != "TRUE" && val != "FALSE" {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s:%d: %s %s: OpenSM reads anything but TRUE as FALSE", name, at, key, strconv.Quote(val)))
		}
	}
	switch {
	case noEnforce || partEnforce == "off":
		c.PartEnforce = "off"
	case partEnforce == "both" || partEnforce == "in" || partEnforce == "out":
		c.PartEnforce = partEnforce
	default:
		c.PartEnforce = "both"
		c.Warnings = append(c.Warnings, fmt.Sprintf("%s: part_enforce %s is not both, in, out or off: OpenSM logs \"Invalid Cached Option Value\" and uses both", name, strconv.Quote(partEnforce)))
	}
	return c
}
