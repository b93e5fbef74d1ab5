package query

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fsread"
	"github.com/ibkey/ibkey/internal/partconf"
)

// Partitions is an OpenSM partitions.conf read from a file, and how OpenSM runs with it.
// The ports it knows are the GUIDs the file names; others can be added (a port the file
// does not name gets what ALL / ALL_CAS give it).
type Partitions struct {
	Path    string
	Config  *partconf.Config
	Options partconf.Options
	// FileGUIDs are the port GUIDs named in the file, in order of first appearance
	// (Config.GUIDs).
	FileGUIDs []check.GUID
	// Types are the node types of ports that are known (--router, a saved sweep). A port not listed is of unknown type: it is modelled as a CA port, and
	// UnknownType says when being a router port would change its table (OpenSM
	// adds ALL_CAS and ALL_ROUTERS members by node type, osm_prtn_add_all).
	Types map[check.GUID]check.NodeType
	// TypesComplete: Types names every router port (--router, a saved sweep), so a
	// port not listed is a CA port, not of unknown type.
	TypesComplete bool
	// TableSizes are the P_Key table lengths of ports a saved sweep read (NodeInfo
	// PartitionCap); a port not listed has Options.TableSize.
	TableSizes map[check.GUID]int
}

// StdinName is how a partitions.conf read from standard input ("-") is named in
// findings and output, as compilers name it.
const StdinName = "<stdin>"

// ReadPartitions reads and parses path. A file that cannot be read is bad input (exit
// 2): the command line names it. Parse problems are in Config.Findings, never an error.
// The read is bounded by partconf.MaxFileSize (fsread). With stdin given, "-" is read
// from it, and a FIFO (a named pipe, `<(...)`, /dev/stdin on a pipe: `ssh sm01 cat
// /etc/opensm/partitions.conf | ibkey partitions check -`) is read as the stream it
// is, with the same bound; without it (shell completion, which must not block) both
// are refused, as devices and other special files always are.
func ReadPartitions(path string, stdin io.Reader, opt partconf.Options) (*Partitions, error) {
	data, name, err := ReadPartitionsText(path, stdin)
	if err != nil {
		return nil, err
	}
	return NewPartitions(partconf.ParseWith(name, data, opt), opt), nil
}

const partitionsWhat = "a partitions file (OpenSM's partitions.conf)"

// ReadPartitionsText is ReadPartitions' read, for a command that quotes the file's
// lines (sm log): the bytes and the name findings give them. Its errors are bad input
// (*UsageError) naming the file.
func ReadPartitionsText(path string, stdin io.Reader) ([]byte, string, error) {
	data, name, err := readPartitionsFile(path, stdin)
	if err != nil {
		return nil, "", &UsageError{Msg: fmt.Sprintf("partitions file: %v", err)}
	}
	return data, name, nil
}

func readPartitionsFile(path string, stdin io.Reader) ([]byte, string, error) {
	if path == "-" {
		if stdin == nil {
			return nil, "", errors.New("- (standard input) cannot be read here: give the file's path")
		}
		data, err := readStream(stdin, StdinName, partconf.MaxFileSize)
		return data, StdinName, err
	}
	if st, err := os.Stat(path); err == nil && st.Mode()&fs.ModeNamedPipe != 0 && stdin != nil {
		// A pipe is opened once, blocking (a named pipe waits for its writer, as cat
		// does): a probing open would take the writer's data and drop it on close.
		f, err := os.Open(path)
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		data, err := readStream(f, path, partconf.MaxFileSize)
		return data, path, err
	}
	data, err := fsread.ReadFile(path, partconf.MaxFileSize, partitionsWhat)
	return data, path, err
}

// readStream reads a stream to its end, bounded as files are: past limit bytes it is
// an error naming the bound, not a truncated file.
func readStream(r io.Reader, name string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fsread.TooLarge(name, limit, partitionsWhat)
	}
	return data, nil
}

// NewPartitions wraps a parsed config.
func NewPartitions(c *partconf.Config, opt partconf.Options) *Partitions {
	return &Partitions{Path: c.File, Config: c, Options: opt, FileGUIDs: c.GUIDs}
}

// InFile reports whether the file names this port GUID.
func (p *Partitions) InFile(guid check.GUID) bool {
	_, ok := p.Config.GUIDIndex(guid)
	return ok
}

// ModelOf models only these ports. A port's table depends only on the items that name it
// (its GUID, a keyword, SELF), not on the other ports, so answering for two ports of a
// 20,000-port file does not need 20,000 tables.
func (p *Partitions) ModelOf(guids ...check.GUID) *partconf.Model {
	return p.modelOf(p.Types, guids...)
}

// modelOf is ModelOf with these node types.
func (p *Partitions) modelOf(types map[check.GUID]check.NodeType, guids ...check.GUID) *partconf.Model {
	return partconf.NewModel(p.Config, p.typedPorts(types, guids), p.Options)
}

// typedPorts are guids, each once, then the SM's port (--sm-guid) when they do not
// name it, each of the node type types gives it; a port not listed is a CA port (a
// file names port GUIDs, not node types, so ALL_SWITCHES and ALL_ROUTERS name none of
// them).
func (p *Partitions) typedPorts(types map[check.GUID]check.NodeType, guids []check.GUID) []partconf.Port {
	seen := map[check.GUID]bool{}
	var ports []partconf.Port
	for _, g := range slices.Concat(guids, []check.GUID{p.Options.SMGUID}) {
		if g != 0 && !seen[g] {
			seen[g] = true
			t, ok := types[g]
			if !ok {
				t = check.NodeCA
			}
			ports = append(ports, partconf.Port{GUID: g, Type: t, TableSize: p.TableSizes[g]})
		}
	}
	return ports
}

// typeMatters reports whether the file can give a port other entries as a router port
// than as a CA port: whether it has ALL_CAS or ALL_ROUTERS items (OpenSM applies them
// by node type; every other item names a port whatever its type).
func (p *Partitions) typeMatters() bool {
	for _, c := range []*partconf.Config{p.Config.Applied(), p.Config} {
		for _, d := range c.Definitions {
			for _, m := range d.Members {
				if m.Kind == partconf.KindAllCAs || m.Kind == partconf.KindAllRouters {
					return true
				}
			}
		}
	}
	return false
}

// UnknownType are the ports of guids whose node type is not known (Types,
// TypesComplete) and whose table would differ as a router port, with that table (its
// valid entries in index order): the ports OpenSM's answer depends on the type of.
func (p *Partitions) UnknownType(guids ...check.GUID) map[check.GUID][]check.PKey {
	if p.TypesComplete || !p.typeMatters() {
		return nil
	}
	// A GUID named twice is modelled once (typedPorts).
	unknown := slices.DeleteFunc(slices.Clone(guids), func(g check.GUID) bool {
		_, known := p.Types[g]
		return known
	})
	if len(unknown) == 0 {
		return nil
	}
	asCA := p.modelOf(p.Types, unknown...)
	asRouter := p.modelOf(withTypes(p.Types, unknown, check.NodeRouter), unknown...)
	var out map[check.GUID][]check.PKey
	for _, g := range unknown {
		if r := asRouter.PKeys(g); !slices.Equal(asCA.PKeys(g), r) {
			if out == nil {
				out = map[check.GUID][]check.PKey{}
			}
			out[g] = r
		}
	}
	return out
}

// withTypes is types with guids set to t.
func withTypes(types map[check.GUID]check.NodeType, guids []check.GUID, t check.NodeType) map[check.GUID]check.NodeType {
	out := maps.Clone(types)
	if out == nil {
		out = map[check.GUID]check.NodeType{}
	}
	for _, g := range guids {
		out[g] = t
	}
	return out
}

// routerAlternatives gives each GUID endpoint resolved from parts whose node type is
// not known (UnknownType) the endpoint it would be as a router port: OpenSM gives a
// router port ALL_ROUTERS' entries, not ALL_CAS' (osm_prtn_add_all, by node type), and
// a router port left out of a Default line of ALL_CAS keeps the implicit 0x7fff (lab).
func routerAlternatives(parts *Partitions, out []ResolvedEndpoint, labels []string) {
	if parts == nil {
		return
	}
	var guids []check.GUID
	for _, r := range out {
		if r.Spec.Kind == check.EndpointGUID && r.Model != nil {
			guids = append(guids, r.Spec.GUID)
		}
	}
	unknown := parts.UnknownType(guids...)
	if len(unknown) == 0 {
		return
	}
	routers := slices.Collect(maps.Keys(unknown))
	m := parts.modelOf(withTypes(parts.Types, routers, check.NodeRouter), routers...)
	for i := range out {
		r := &out[i]
		if _, ok := unknown[r.Spec.GUID]; !ok || r.Spec.Kind != check.EndpointGUID || r.Model == nil {
			continue
		}
		r.addAlternative(labels[i], m, Alternative{If: r.Spec.GUID.String() + " is a router port",
			Why: fmt.Sprintf("%s gives a router port ALL_ROUTERS' entries, not ALL_CAS'; name the router ports with --router, or --router none", parts.Config.File)})
	}
}

// guidTable is the port's predicted entries as a can-talk table: every entry with Index
// NoIndex, since which index OpenSM uses depends on what the table held before.
func guidTable(m *partconf.Model, guid check.GUID) []check.TableEntry {
	t := m.Table(guid)
	out := make([]check.TableEntry, len(t))
	for i, e := range t {
		out[i] = check.TableEntry{Index: check.NoIndex, PKey: e.PKey, Readable: true}
	}
	return out
}

// Slot is one P_Key table index of a port's table, and what it held before (a
// reconfiguration: PortTable with prev).
type Slot struct {
	Index int
	// Entry is what OpenSM puts there; nil for an empty entry (0x0000).
	Entry *partconf.Entry
	// Before is what the index held before (0 when it was empty).
	Before check.PKey
	// Kept: the key was already at this index (its membership may have changed).
	Kept bool
}

// Hole reports an empty entry left where the previous table had a key.
func (s Slot) Hole() bool { return s.Entry == nil && s.Before.Valid() }
