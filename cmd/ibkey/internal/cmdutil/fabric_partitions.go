package cmdutil

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// OpenSMFlags say how OpenSM runs with a partitions.conf: the flags of `ibkey
// partitions` subcommands and, for GUID endpoints, of `ibkey can-talk --partitions`.
type OpenSMFlags struct {
	AllowBoth bool   // opensm -W (allow_both_pkeys)
	QoS       bool   // opensm -Q (qos)
	SMGUID    string // the port OpenSM runs on: what SELF means
	TableSize int    // P_Key table length of the ports
	Conf      string // --opensm-conf: OpenSM's opensm.conf (AddConfFlag, LoadFile)
}

// AddConfFlag binds --opensm-conf: OpenSM's opensm.conf, read as OpenSM reads it
// (partconf.ParseOpenSMConf). Its allow_both_pkeys replaces --allow-both, its qos
// --qos (AddQoSFlag), its guid (when not 0) --sm-guid, and without a partitions file
// its partition_config_file is the file read (LoadFile). more is what else the
// command takes from it.
func (o *OpenSMFlags) AddConfFlag(c *cobra.Command, more string) {
	c.Flags().StringVar(&o.Conf, "opensm-conf", "", "read OpenSM's options from its opensm.conf (`FILE`): allow_both_pkeys replaces --allow-both, guid (not 0) --sm-guid"+more+"; without a partitions FILE, its partition_config_file is read")
	_ = c.MarkFlagFilename("opensm-conf")
}

// FileArg is the partitions FILE among a command's args: the first, or "" with
// --opensm-conf (its partition_config_file, LoadFile); without either, bad usage.
func (o *OpenSMFlags) FileArg(cmd string, args []string) (string, error) {
	if len(args) > 0 {
		return args[0], nil
	}
	if o.Conf == "" {
		return "", Usagef("%s needs FILE (a partitions.conf, - for standard input), or --opensm-conf FILE naming OpenSM's", cmd)
	}
	return "", nil
}

// ReadConf reads --opensm-conf (query.ReadOpenSMConf, which says what *file
// becomes), warns of the values OpenSM replaces, and sets the flags the file
// replaces: --allow-both, --qos, and --sm-guid from a guid not 0 (the port OpenSM
// binds to is SELF's; guid 0: OpenSM picks one, not known here).
func (o *OpenSMFlags) ReadConf(file *string, n *Notices) (osm *partconf.OpenSMConf, src query.ConfPartitions, err error) {
	if osm, src, err = query.ReadOpenSMConf(o.Conf, file); err != nil {
		return nil, 0, err
	}
	for _, w := range osm.Warnings {
		n.Warn(w)
	}
	o.AllowBoth, o.QoS = osm.AllowBoth, osm.QoS
	if osm.GUID != 0 {
		if given, err := check.ParseGUID(strings.TrimPrefix(o.SMGUID, "guid=")); o.SMGUID != "" && (err != nil || given != osm.GUID) {
			n.Warn(fmt.Sprintf("--sm-guid %s is replaced by guid %s of %s, the port OpenSM binds to", o.SMGUID, osm.GUID, o.Conf))
		}
		o.SMGUID = osm.GUID.String()
	}
	return osm, src, nil
}

// LoadFile is Load after --opensm-conf: the file's options win over the flags where
// they overlap (partconf.OpenSMConf.Options), and without a partitions file (*file is
// "") it reads the one OpenSM reads (query.ReadOpenSMConf), says so, and sets *file.
// An empty partition_config_file is OpenSM's own default partition alone
// (osm_prtn_make_partitions finds no file "" and calls prtn_make_default).
func (o *OpenSMFlags) LoadFile(file *string, d *Deps) (*query.Partitions, error) {
	if o.Conf == "" {
		return o.Load(*file, d.IO)
	}
	osm, src, err := o.ReadConf(file, d.Notices)
	if err != nil {
		return nil, err
	}
	var p *query.Partitions
	switch src {
	case query.ConfEmpty:
		d.Notices.Note(o.Conf + " sets partition_config_file empty: OpenSM reads no partitions.conf and programs its own Default=0x7fff, ipoib : ALL=full")
		var opt partconf.Options
		if opt, err = o.Options(); err == nil {
			p = query.NewPartitions(partconf.NoFile(), opt)
		}
	case query.ConfRelative:
		return nil, Usagef("%s names partition_config_file %s, relative to OpenSM's working directory, which ibkey cannot see: give FILE", o.Conf, osm.PartitionsFile())
	case query.ConfMissing:
		return nil, Usagef("%s names partition_config_file %s, which is not here: give FILE", o.Conf, osm.PartitionsFile())
	case query.ConfFound:
		d.Notices.Note("reading " + *file + ", the partition_config_file of " + o.Conf)
		fallthrough
	default:
		p, err = o.Load(*file, d.IO)
	}
	if err != nil {
		return nil, err
	}
	p.Options = osm.Options(p.Options)
	return p, nil
}

// AddQoSFlag binds --qos, for the commands that show what a partition's sl= gives.
func (o *OpenSMFlags) AddQoSFlag(c *cobra.Command) {
	c.Flags().BoolVar(&o.QoS, "qos", false, "OpenSM runs with -Q (qos TRUE): a partition keeps its sl=")
}

// AddFlags binds --allow-both, --sm-guid and --table-size.
func (o *OpenSMFlags) AddFlags(c *cobra.Command) {
	c.Flags().BoolVar(&o.AllowBoth, "allow-both", false, "OpenSM runs with -W (allow_both_pkeys): both gives a full and a limited entry")
	c.Flags().StringVar(&o.SMGUID, "sm-guid", "", "port `GUID` of the port OpenSM runs on: what SELF means")
	c.Flags().IntVar(&o.TableSize, "table-size", 128, "P_Key table length of the ports (`N`; PartitionCap: 128 on mlx5, 64 in ibsim)")
}

// Options validates the flags.
func (o *OpenSMFlags) Options() (partconf.Options, error) {
	opt := partconf.Options{AllowBoth: o.AllowBoth, QoS: o.QoS, TableSize: o.TableSize}
	if o.TableSize < 1 || o.TableSize > 0xffff {
		return opt, Usagef("invalid --table-size %d (accepted: 1-65535, the port's PartitionCap)", o.TableSize)
	}
	if o.SMGUID != "" {
		g, err := check.ParseGUID(strings.TrimPrefix(o.SMGUID, "guid="))
		if err != nil {
			return opt, err
		}
		opt.SMGUID = g
	}
	return opt, nil
}

// Load reads the partitions file at path with the flags' options: "-" is the streams'
// stdin, and a pipe (`<(...)`, a named pipe) is read as a stream (query.ReadPartitions).
// Reading from a terminal says on stderr how to end the file.
func (o *OpenSMFlags) Load(path string, streams *IOStreams) (*query.Partitions, error) {
	opt, err := o.Options()
	if err != nil {
		return nil, err
	}
	if path == "-" && streams.InTTY {
		fmt.Fprintln(streams.ErrOut, "ibkey: reading a partitions.conf from the terminal; end it with Ctrl-D")
	}
	return query.ReadPartitions(path, streams.In, opt)
}

// FileGUIDCompletions offers the port GUIDs a partitions file names, each described by
// the partitions that name it; nothing when the file cannot be read.
func FileGUIDCompletions(path string) []cobra.Completion {
	p, err := query.ReadPartitions(path, nil, partconf.Options{}) // never blocks: no stdin, no pipes
	if err != nil {
		return nil
	}
	names := map[check.GUID][]string{}
	for _, part := range p.Config.Partitions {
		for mi := range part.Members {
			m := &part.Members[mi]
			if m.Kind == partconf.KindGUID {
				if l := names[m.GUID]; len(l) == 0 || l[len(l)-1] != part.Name {
					names[m.GUID] = append(l, part.Name)
				}
			}
		}
	}
	out := make([]cobra.Completion, 0, len(p.FileGUIDs))
	for _, g := range p.FileGUIDs {
		desc := "in " + strings.Join(names[g], ", ")
		if len(desc) > 60 {
			desc = desc[:57] + "..."
		}
		out = append(out, cobra.CompletionWithDesc(g.String(), desc))
	}
	return out
}

// Uncertain reports on w, after a command printed what it predicts from c, that what
// OpenSM does with c's file cannot be predicted (partconf.Config.Uncertain), and
// returns exit 4; nil when it can be. printed names what was printed ("the findings
// above are").
func Uncertain(w io.Writer, c *partconf.Config, printed string) error {
	u := UncertainIncomplete(c)
	if u == nil {
		return nil
	}
	fmt.Fprintf(w, "ibkey: %s: %s what it does if it reads the file as written, not a verdict (see 'ibkey partitions check %s')\n",
		u.Message, printed, c.File)
	return Exit(ExitIncomplete)
}

// UncertainIncomplete is the incomplete item of Uncertain's exit 4 (kind not-checked),
// nil when what OpenSM does with c's file can be predicted.
func UncertainIncomplete(c *partconf.Config) *Incomplete {
	msg := c.Unpredictable()
	if msg == "" {
		return nil
	}
	return &Incomplete{IncompleteNotChecked, msg}
}
