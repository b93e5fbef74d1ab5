package query

import (
	"fmt"

	"github.com/ibkey/ibkey/internal/check"
)

// This file is `watch pkeys`' change detector: read a port's P_Key table as it is now,
// compare two reads, and say what each changed index means for the QPs using it.

// TableRead is one read of a port's P_Key table: its entries (DecodeTable's; an entry
// that could not be read has Unreadable set), or why it could not be read (Err).
type TableRead struct {
	Entries []Entry
	Err     string
	// Before, on a read that failed (Err), is the entries of the last read that did
	// not, if any: a watcher carries them across failed reads (Since), so that the
	// read after the failure is compared with the table as it last was.
	Before []Entry
}

// Since returns t with what a watcher needs to compare the read after a failure:
// on a failed read, the entries of prev or those prev carried (TableRead.Before).
func (t *TableRead) Since(prev *TableRead) *TableRead {
	if t.Err != "" && prev != nil {
		t.Before = prev.Entries
		if prev.Err != "" {
			t.Before = prev.Before
		}
	}
	return t
}

// known is the last table t knows: t itself, or on a failed read the entries it
// carried (nil when none).
func (t *TableRead) known() *TableRead {
	if t.Err == "" {
		return t
	}
	if t.Before == nil {
		return nil
	}
	return &TableRead{Entries: t.Before}
}

// ReadTable reads the P_Key table of port r on h now.
func ReadTable(h *Host, r PortRef) *TableRead {
	raw, err := h.Sys.PKeys(r.Device, r.Port)
	if err != nil {
		return &TableRead{Err: err.Error()}
	}
	return &TableRead{Entries: DecodeTable(raw).Entries}
}

// NotRead is what of port r's table t did not read, as NotRead names it for a view
// (its Table or Entries set), or nil when t read everything.
func (t *TableRead) NotRead(r PortRef) *Unread {
	return tableUnread(r, t.Err, t.table())
}

// table is t's entries as a Table, for the rules a view's table goes through.
func (t *TableRead) table() *Table { return &Table{Entries: t.Entries} }

// Table change kinds.
const (
	ChangePortError  = "port_error" // the table could not be read any more
	ChangePortBack   = "port_back"  // the table can be read again
	ChangeUnreadable = "unreadable" // an entry can no longer be read
	ChangeReadable   = "readable"   // an entry can be read again
	ChangeAdded      = "added"      // an empty index now holds a key
	ChangeRemoved    = "removed"    // a key left its index
	ChangeMembership = "membership" // same partition, full <-> limited
	ChangeReplaced   = "replaced"   // another partition at the same index
)

// TableChange is one change between two reads: of the whole table (Index -1: it became
// unreadable or readable again) or of one index, with the entry before and after (nil:
// absent or unreadable) and what it means.
type TableChange struct {
	Index       int
	Old, New    *check.PKey
	Kind        string
	Description string
}

// TableChanges compares two reads of one port's table: one change per changed index,
// in index order. Growing or shrinking by empty entries and one invalid value replacing
// another (0x0000 <-> 0x8000) are not changes. A table readable again after old failed
// is compared with the table as last read before (old.Before), and the port_back change
// says so: a change made while it could not be read is shown then.
func TableChanges(old, cur *TableRead) []TableChange {
	switch {
	case cur.Err != "" && old.Err == "":
		return []TableChange{{Index: -1, Kind: ChangePortError, Description: cur.Err}}
	case cur.Err != "":
		return nil
	case old.Err != "":
		back := TableChange{Index: -1, Kind: ChangePortBack, Description: fmt.Sprintf("the table is readable again (%d entries)", len(cur.Entries))}
		base := old.known()
		if base == nil {
			back.Description += "; it was not read before, so what changed is not known"
			return []TableChange{back}
		}
		changes := indexChanges(base, cur)
		if len(changes) == 0 {
			back.Description += "; unchanged since the last read before it could not be read"
		} else {
			back.Description += "; the changes that follow are since the last read before it could not be read"
		}
		return append([]TableChange{back}, changes...)
	}
	return indexChanges(old, cur)
}

// indexChanges are the changes of each index from old to cur, both read.
func indexChanges(old, cur *TableRead) []TableChange {
	var out []TableChange
	for i := 0; i < max(len(old.Entries), len(cur.Entries)); i++ {
		var a, b *Entry
		if i < len(old.Entries) {
			a = &old.Entries[i]
		}
		if i < len(cur.Entries) {
			b = &cur.Entries[i]
		}
		kind, desc := describeChange(a, b)
		if kind == "" {
			continue
		}
		out = append(out, TableChange{Index: i, Old: entryValue(a), New: entryValue(b), Kind: kind, Description: desc})
	}
	return out
}

func entryValue(e *Entry) *check.PKey {
	if e == nil || !e.readable() {
		return nil
	}
	return new(e.PKey)
}

func (e *Entry) readable() bool { return e.Unreadable == "" }

func memberOf(p check.PKey) string {
	return fmt.Sprintf("%s member of partition %s", p.Membership(), p.Partition().String())
}

// describeChange says what a change of one entry means; "" when nothing changed.
func describeChange(a, b *Entry) (kind, desc string) {
	valid := func(e *Entry) bool { return e != nil && e.Valid() }
	switch {
	case a != nil && b != nil && a.readable() == b.readable() && (!a.readable() || a.PKey == b.PKey):
		return "", ""
	case a == nil && b != nil && b.readable() && !b.PKey.Valid():
		return "", "" // the table grew by an empty entry
	case b == nil && a != nil && a.readable() && !a.PKey.Valid():
		return "", ""
	case b != nil && !b.readable():
		return ChangeUnreadable, "the entry can no longer be read"
	case a != nil && !a.readable() && !valid(b):
		return ChangeReadable, "the entry can be read again: empty (invalid)"
	case a != nil && !a.readable():
		return ChangeReadable, "the entry can be read again: " + memberOf(b.PKey)
	case !valid(a) && valid(b):
		return ChangeAdded, memberOf(b.PKey)
	case valid(a) && !valid(b):
		return ChangeRemoved, memberOf(a.PKey) + " (a QP using this index loses the partition)"
	case valid(a) && valid(b) && a.PKey.Partition() == b.PKey.Partition():
		return ChangeMembership, fmt.Sprintf("partition %s: %s -> %s member", b.PKey.Partition().String(), a.PKey.Membership(), b.PKey.Membership())
	case valid(a) && valid(b):
		return ChangeReplaced, fmt.Sprintf("%s replaced by %s (a QP using this index now sends in another partition)", memberOf(a.PKey), memberOf(b.PKey))
	}
	return "", "" // invalid to another invalid value (0x0000 <-> 0x8000)
}

// unread counts the entries that could not be read.
func (t *TableRead) unread() int { return len(t.table().Unread()) }

// IPoIBEffects names the IPoIB interfaces of the port a change hits: those whose key
// the kernel found at the changed index in the old table (ib_find_pkey in
// drivers/infiniband/core/device.c: 15-bit match, a full entry preferred, as
// check.FindPKeyIndex), and what the new table means for each: the key gone (the
// interface cannot come up, its traffic stops), found elsewhere, or now limited.
func IPoIBEffects(ifcs []IPoIB, old, cur *TableRead, c TableChange) []string {
	old = old.known() // after a failed read, the table as last read before it
	if c.Index < 0 || old == nil || cur.Err != "" {
		return nil
	}
	var out []string
	for _, ifc := range ifcs {
		i, _, ok := check.FindPKeyIndex(old.table().checkEntries(), ifc.PKey)
		if !ok || i != c.Index {
			continue
		}
		j, p, ok, known := findKnown(cur.table().checkEntries(), ifc.PKey) // FindPKey's rule
		switch {
		case ok && !known:
			// An entry not read may be the one the kernel now picks (endpoint_find.go).
			out = append(out, fmt.Sprintf("IPoIB %s used this entry; its key %s is at index %d (%s) among the entries read, but %d could not be read and may hold the entry it now uses: not checked",
				ifc.Name, ifc.PKey, j, p.Membership(), cur.unread()))
		case !ok && cur.unread() > 0:
			// Not read is not absent: the key may sit in an entry that could not be read.
			out = append(out, fmt.Sprintf("IPoIB %s used this entry; its key %s is not among the entries read, but %d could not be read: not checked", ifc.Name, ifc.PKey, cur.unread()))
		case !ok:
			out = append(out, fmt.Sprintf("IPoIB %s loses its key %s: the interface cannot come up and its traffic stops", ifc.Name, ifc.PKey))
		case j != c.Index:
			out = append(out, fmt.Sprintf("IPoIB %s used this entry; its key %s is still at index %d (%s)", ifc.Name, ifc.PKey, j, p.Membership()))
		case p.Membership() == check.Limited:
			out = append(out, fmt.Sprintf("IPoIB %s now runs as a limited member of partition %s: it reaches only full members", ifc.Name, p.Partition().String()))
		}
	}
	return out
}
