package query

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sync"

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
	// Types are the node types of ports known not to be CA ports (routers, from
	// --router or a saved sweep): ModelOf models them as such. A port not listed is
	// a CA port.
	Types map[check.GUID]check.NodeType

	unlMu       sync.Mutex
	unl, unlFor *partconf.Model // unlimited's model, and the model it is for
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
	data, name, err := readPartitionsFile(path, stdin)
	if err != nil {
		return nil, &UsageError{Msg: fmt.Sprintf("partitions file: %v", err)}
	}
	p := NewPartitions(partconf.ParseOwned(name, data), opt)
	if len(data) >= collectAfter {
		// The parser's scratch (maps and arrays outgrown, about half the size of
		// what it keeps) is garbage now, and the Go collector, paced at twice the
		// heap it last marked, would let the model or lint allocate on top of it:
		// one collection here keeps the peak near what is live (100,000 ports:
		// 98 -> 85 MB heap, for about 15 ms of CPU).
		runtime.GC()
	}
	return p, nil
}

const partitionsWhat = "a partitions file (OpenSM's partitions.conf)"

// readPartitionsFile is ReadPartitions' read: the bytes and the name findings give them.
func readPartitionsFile(path string, stdin io.Reader) ([]byte, string, error) {
	if path == "-" {
		if stdin == nil {
			return nil, "", errors.New("- (standard input) cannot be read here")
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

// collectAfter is the file size from which ReadPartitions collects the parser's
// garbage: below it the peak is small anyway and the collection not worth its time.
const collectAfter = 4 << 20

// NewPartitions wraps a parsed config.
func NewPartitions(c *partconf.Config, opt partconf.Options) *Partitions {
	return &Partitions{Path: c.File, Config: c, Options: opt, FileGUIDs: c.GUIDs}
}

// InFile reports whether the file names this port GUID.
func (p *Partitions) InFile(guid check.GUID) bool {
	_, ok := p.Config.GUIDIndex(guid)
	return ok
}

// Ports are the file's GUIDs, then extra ones and the SM's port (--sm-guid) when the file
// does not name them. Every port is taken for a CA port: a file names port GUIDs, not
// node types, so ALL_SWITCHES and ALL_ROUTERS name none of them.
func (p *Partitions) Ports(extra ...check.GUID) []partconf.Port {
	out := make([]partconf.Port, len(p.FileGUIDs), len(p.FileGUIDs)+len(extra)+1)
	for i, g := range p.FileGUIDs { // once each already
		out[i] = partconf.Port{GUID: g, Type: check.NodeCA}
	}
	seen := map[check.GUID]bool{}
	add := func(g check.GUID) {
		if g != 0 && !seen[g] && !p.InFile(g) {
			seen[g] = true
			out = append(out, partconf.Port{GUID: g, Type: check.NodeCA})
		}
	}
	for _, g := range extra {
		add(g)
	}
	add(p.Options.SMGUID)
	return out
}

// Model is what OpenSM programs on Ports(extra...).
func (p *Partitions) Model(extra ...check.GUID) *partconf.Model {
	return partconf.NewModel(p.Config, p.Ports(extra...), p.Options)
}

// ModelOf models only these ports. A port's table depends only on the items that name it
// (its GUID, a keyword, SELF), not on the other ports, so answering for two ports of a
// 20,000-port file does not need 20,000 tables.
func (p *Partitions) ModelOf(guids ...check.GUID) *partconf.Model {
	seen := map[check.GUID]bool{}
	var ports []partconf.Port
	for _, g := range append(guids, p.Options.SMGUID) {
		if g != 0 && !seen[g] {
			seen[g] = true
			t := check.NodeCA
			if typ, ok := p.Types[g]; ok {
				t = typ // a router port: ALL_ROUTERS names it, ALL_CAS does not
			}
			ports = append(ports, partconf.Port{GUID: g, Type: t})
		}
	}
	return partconf.NewModel(p.Config, ports, p.Options)
}

// GUIDTable is the port's predicted entries as a can-talk table: every entry with Index
// NoIndex, since which index OpenSM uses depends on what the table held before.
func GUIDTable(m *partconf.Model, guid check.GUID) []check.TableEntry {
	t := m.Table(guid)
	out := make([]check.TableEntry, len(t))
	for i, e := range t {
		out[i] = check.TableEntry{Index: check.NoIndex, PKey: e.PKey, Readable: true}
	}
	return out
}

// Slot is one P_Key table index after OpenSM reprogrammed a port that already held a
// table (Reprogram).
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

// Reprogram predicts the table OpenSM 3.3.23 programs on a port whose table holds before
// (index order, 0 for empty entries) when the new configuration gives the port entries
// next (a fresh Model's table, in the order OpenSM fills it). Lab-checked
// (cmd/ibkey/partitions_lab_test.go) and per osm_pkey_mgr.c:
//   - a key already in the table stays at its index (matched on the 15-bit key; with -W
//     on the exact value), its membership updated in place;
//   - a removed key leaves its index empty: a hole (0x0000);
//   - a new key goes after the highest index of the kept keys (OpenSM's last_pkey_idx,
//     which it sets while placing them; index 1 when none is kept), in map order, so a
//     hole below that index is not refilled until the end of the table is reached;
//     then the lowest free index from 1 is reused, and past that the entry is dropped
//     (ERR 0512). Lab: a removed key at the end of the table is refilled at once;
//   - a new default key (0x7fff) goes to index 0.
//
// The indx0 flag across a reconfiguration is not modelled (not lab-checked). size is
// the table length; 0 means unlimited. Slots run up to the last valid entry, before or
// after.
func Reprogram(before []check.PKey, next []partconf.Entry, size int, allowBoth bool) (slots []Slot, dropped []partconf.Entry) {
	match := func(p check.PKey) check.PKey {
		if allowBoth {
			return p
		}
		return check.PKey(p.Partition())
	}
	at := map[check.PKey]int{}
	for i, p := range before {
		if !p.Valid() {
			continue
		}
		k := match(p)
		if j, ok := at[k]; !ok || (!before[j].IsFull() && p.IsFull()) {
			at[k] = i
		}
	}
	n := size
	if n <= 0 {
		n = len(before) + len(next) + 1
	}
	table := make([]*partconf.Entry, max(n, len(before)))
	var fresh []int
	last := 0 // highest index of a kept entry: new ones go after it
	for i := range next {
		if j, ok := at[match(next[i].PKey)]; ok && j < n {
			table[j] = &next[i]
			last = max(last, j)
			continue
		}
		fresh = append(fresh, i)
	}
	for _, i := range fresh {
		e := &next[i]
		if e.PKey.IsDefault() && table[0] == nil && (!allowBoth || e.PKey == check.DefaultFull) {
			table[0] = e
			continue
		}
		idx := last + 1
		if idx >= n {
			idx = -1
			for j := 1; j < n; j++ {
				if table[j] == nil {
					idx = j
					break
				}
			}
		}
		if idx < 0 {
			dropped = append(dropped, *e)
			continue
		}
		table[idx] = e
		last = max(last, idx)
	}
	end := -1 // through the last entry, and the last removed one: a hole at the end is news too
	for i, p := range before {
		if p.Valid() {
			end = i
		}
	}
	for i, e := range table {
		if e != nil {
			end = max(end, i)
		}
	}
	for i := 0; i <= end; i++ {
		s := Slot{Index: i, Entry: table[i]}
		if i < len(before) {
			s.Before = before[i]
			s.Kept = s.Entry != nil && s.Before.Valid() && match(s.Before) == match(s.Entry.PKey)
		}
		slots = append(slots, s)
	}
	return slots, dropped
}
