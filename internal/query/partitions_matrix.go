package query

import (
	"cmp"
	"slices"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/partconf"
)

// This file builds what `ibkey partitions show` and `matrix` print, as values: the
// per-port P_Key tables and the pairs of the reachability grid. The commands only
// render them.

// TypedPorts are the file's GUIDs, then extra ones and the SM's port (--sm-guid) when
// the file does not name them, with the node type of each port taken from Types (a
// port not listed is a CA port) and its table length from TableSizes. A router port is named by ALL_ROUTERS and not by
// ALL_CAS (osm_prtn_config.c: partition_add_all, by node type), so a router's GUID
// must be told apart to predict its table.
func (p *Partitions) TypedPorts(extra ...check.GUID) []partconf.Port {
	return p.typedPorts(p.Types, slices.Concat(p.FileGUIDs, extra))
}

// PortTable is the P_Key table OpenSM programs on one port.
type PortTable struct {
	Port partconf.Port
	// InFile: the file names this port's GUID; SM: it is the SM's port (SELF).
	InFile, SM bool
	// Slots in index order through the last entry (empty entries have Entry nil).
	// After a previous configuration (PortTable's prev) Before and Kept say what each
	// index held; on a fresh port Before is 0.
	Slots []Slot
	// Dropped are the entries that did not fit the table (ERR 0512), in the order
	// OpenSM tried them.
	Dropped []partconf.Entry
	// Size is the table's length: what a saved sweep read (TableSizes), else
	// Options.TableSize.
	Size int
}

// PortTable is the table m predicts for one of its ports. With prev (the model of the
// configuration OpenSM applied before, on the same ports, of which m is the
// partconf.Reconfigure) each slot says what the index held before; without it, the
// table is a fresh port's.
func (p *Partitions) PortTable(m, prev *partconf.Model, port partconf.Port) PortTable {
	pt := PortTable{Port: port, InFile: p.InFile(port.GUID), SM: port.GUID == p.Options.SMGUID, Size: p.TableSize(port)}
	slots := m.Slots(port.GUID)
	var before []check.PKey
	if prev != nil {
		before = prev.TableValues(port.GUID)
	}
	// Through the last entry, and the last one removed: a hole at the end is news too.
	n := len(slots)
	for i := len(before) - 1; i >= n; i-- {
		if before[i].Valid() {
			n = i + 1
			break
		}
	}
	pt.Slots = make([]Slot, n)
	for i := range pt.Slots {
		sl := Slot{Index: i}
		if i < len(slots) && slots[i].PKey.Valid() {
			sl.Entry = &slots[i]
		}
		if i < len(before) {
			sl.Before = before[i]
			sl.Kept = sl.Entry != nil && sl.Before.Valid() && partconf.SameKey(sl.Before, sl.Entry.PKey, p.Options.AllowBoth)
		}
		pt.Slots[i] = sl
	}
	pt.Dropped = m.DroppedEntries(port.GUID)
	return pt
}

// TableSize is the length of port's table: what a saved sweep read (TableSizes,
// TypedPorts), else Options.TableSize.
func (p *Partitions) TableSize(port partconf.Port) int {
	return cmp.Or(port.TableSize, p.Options.TableSize)
}

// Pair is one cell of the who-can-talk grid.
type Pair struct {
	A, B check.GUID
	// Kind is can-talk's answer for the two ports (CanTalk): yes, no, or unknown
	// where an assumption not given (SELF without --sm-guid, a port type without
	// --router) decides it otherwise; NotChecked then says on what.
	Kind       check.VerdictKind
	NotChecked []check.NotChecked
	// Partitions are the keys in which they can talk, LimitedOnly those they share
	// where both are limited members; ascending, as the ends are taken.
	Partitions, LimitedOnly []check.PKey
	// NotKnown are the keys of either list whose working an assumption not given
	// decides otherwise (check.SharedPartition.WorksNotKnown).
	NotKnown []check.PKey
	// SharedAssumed: an assumption not given would give both one more partition
	// (check.Verdict.SharedAssumed).
	SharedAssumed bool
}

// Pairs is can-talk's answer (ResolveEndpointsFrom and CanTalk, with their
// alternatives) for every unordered pair of ports, in port order (a before b): the
// same rule, and the same assumptions not given, as ibkey can-talk --partitions.
func (p *Partitions) Pairs(ports []partconf.Port) ([]Pair, error) {
	specs := make([]check.EndpointSpec, len(ports))
	for i, port := range ports {
		specs[i] = check.EndpointSpec{Kind: check.EndpointGUID, GUID: port.GUID}
	}
	eps, err := ResolveEndpointsFrom(EndpointSources{Partitions: p}, specs...)
	if err != nil {
		return nil, err
	}
	var out []Pair
	for i, a := range eps {
		for _, b := range eps[i+1:] {
			v := CanTalk(a, b)
			pr := Pair{A: a.Spec.GUID, B: b.Spec.GUID, Kind: v.Kind, NotChecked: v.NotChecked, SharedAssumed: v.SharedAssumed}
			for _, s := range v.Shared { // in key order
				k := check.PKey(s.Key)
				if s.WorksHere() {
					pr.Partitions = append(pr.Partitions, k)
				} else {
					pr.LimitedOnly = append(pr.LimitedOnly, k)
				}
				if s.WorksNotKnown {
					pr.NotKnown = append(pr.NotKnown, k)
				}
			}
			out = append(out, pr)
		}
	}
	return out, nil
}

// Working are the partitions a pair talks in, for people: the default partition only
// when no other works (every port is in it, so it says nothing otherwise).
func (p Pair) Working() []check.PKey {
	var out []check.PKey
	for _, k := range p.Partitions {
		if !k.IsDefault() {
			out = append(out, k)
		}
	}
	if len(out) == 0 && len(p.Partitions) > 0 {
		return p.Partitions[:1:1]
	}
	return out
}
