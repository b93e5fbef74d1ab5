package query

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// FindOutcome is the answer to "which index holds this partition" on one port.
type FindOutcome uint8

const (
	// FindFound: a read entry holds the partition (Entry); FindResult.Known says
	// whether it is the entry the kernel picks whatever the entries not read hold.
	FindFound FindOutcome = iota
	// FindNotFound: every entry was read and none holds the partition: a definite no.
	FindNotFound
	// FindUnknown: no readable entry holds it, but some entries could not be read: the
	// partition may be in one of them.
	FindUnknown
	// FindNoTable: the table exists but was not read at all (PortView.TableMissing).
	// A port without a table (PortView.TableAbsent) is FindNotFound.
	FindNoTable
)

func (o FindOutcome) String() string {
	return [...]string{"found", "not-found", "unknown", "no-table"}[o]
}

// FindResult is FindPKey's answer for one port.
type FindResult struct {
	Outcome FindOutcome
	// Entry is the best read entry for the partition (FindFound), nil otherwise.
	Entry *Entry
	// Known: the kernel picks Entry (FindFound), or no entry (FindNotFound), whatever
	// the entries not read hold. False for FindUnknown and FindNoTable, and for a
	// FindFound that an entry not read may change (FindPKey).
	Known bool
	// Unread are the indexes of the entries that could not be read.
	Unread []int
	// Reason says why it was not found, or why the entry found may not be the one
	// used; "" for a plain find.
	Reason string
}

// FindPKey answers "which entry does a QP on this port use for key's partition", the
// one rule pkeys --find, can-talk's pkey= and the IPoIB interfaces follow. The kernel's
// ib_find_pkey (drivers/infiniband/core/device.c) takes the first entry whose 15-bit
// key matches and that is a full member, else the first limited one, else none. Entries
// not read may hold anything, so the entry it picks is known only when none of them
// could change it (Known): an entry not read before the first full match may be a
// full one (it would win), and beside a limited-only match any entry not read may be
// a full one. A key whose entries read hold no match, with entries not read, is
// FindUnknown, never a definite "not in the table". Key 0 matches nothing (check.
// FindPKeyIndex; the kernel would match an empty entry).
func FindPKey(v *PortView, key check.PKey) FindResult {
	if v.Table == nil {
		if v.TableAbsent {
			// No table at all (iWARP): the key is definitely not there.
			return FindResult{Outcome: FindNotFound, Known: true, Reason: v.TableMissing}
		}
		return FindResult{Outcome: FindNoTable, Reason: v.TableMissing}
	}
	r := FindResult{Unread: v.Table.Unread()}
	unread := unreadEntries(r.Unread)
	if !key.Valid() {
		r.Outcome, r.Known, r.Reason = FindNotFound, true, fmt.Sprintf("%s has key 0, which is invalid: it never matches a table entry", key)
		return r
	}
	// The entry a QP uses for key's partition, by the one rule shared with can-talk
	// (check.FindPKeyIndex: 15-bit match, a full entry preferred, as the kernel's
	// ib_find_pkey does; among equals the lowest index).
	idx, _, ok, known := findKnown(v.Table.checkEntries(), key)
	var e *Entry
	if ok {
		e = &v.Table.Entries[slices.IndexFunc(v.Table.Entries, func(e Entry) bool { return e.Index == idx })]
	}
	r.Known = known
	switch {
	case ok && e.PKey.IsFull():
		r.Outcome, r.Entry = FindFound, e
		if !r.Known {
			var before []int
			for _, i := range r.Unread {
				if i < e.Index {
					before = append(before, i)
				}
			}
			r.Reason = fmt.Sprintf("entry %d holds it as a full member, but %s before it could not be read (%s): a full entry there would be the one used",
				e.Index, textsafe.Plural(len(before), "entry", "entries"), indexList(before))
		}
	case ok:
		r.Outcome, r.Entry = FindFound, e
		if !r.Known {
			r.Reason = fmt.Sprintf("only a limited entry was found; %s: a full entry may be among them", unread)
		}
	case !r.Known:
		r.Outcome = FindUnknown
		r.Reason = fmt.Sprintf("partition %s is not in the entries that were read, but %s: it may be in one of them", key.Partition().String(), unread)
	default:
		r.Outcome = FindNotFound
		r.Reason = fmt.Sprintf("partition %s is not in the %s table", key.Partition().String(), v.Ref())
	}
	return r
}

// unreadEntries says that the entries at idx could not be read: "2 P_Key table
// entries could not be read (index 3, 9)"; "" for none.
func unreadEntries(idx []int) string {
	if len(idx) == 0 {
		return ""
	}
	return fmt.Sprintf("%s could not be read (%s)", textsafe.Plural(len(idx), "P_Key table entry", "P_Key table entries"), indexList(idx))
}

// indexList prints ascending indexes as "index 0, 1, 5" or "index 3-127", at most 8
// ranges (indexRanges).
func indexList(idx []int) string {
	return "index " + strings.Join(indexRanges(idx), ", ")
}

// indexRanges is IndexRanges cut at 8 ranges, then "and N more" (textsafe.Capped).
func indexRanges(idx []int) []string { return textsafe.Capped(IndexRanges(idx), 8) }

// IndexRanges turns ascending indexes 3 4 5 9 into "3-5", "9".
func IndexRanges(idx []int) []string {
	var out []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if j > i {
			out = append(out, fmt.Sprintf("%d-%d", idx[i], idx[j]))
		} else {
			out = append(out, strconv.Itoa(idx[i]))
		}
		i = j + 1
	}
	return out
}

// findKnown is FindPKey's rule on entries: the entry check.FindPKeyIndex finds among
// those read (ok), and known when ib_find_pkey picks it (or, !ok, none) whatever the
// entries not read hold: the first full match wins, so an entry not read before a
// full one may be one; a limited one is taken only when no full one exists, so beside
// it, or beside no match at all, any entry not read may change the pick.
func findKnown(entries []check.TableEntry, key check.PKey) (index int, p check.PKey, ok, known bool) {
	index, p, ok = check.FindPKeyIndex(entries, key)
	known = !slices.ContainsFunc(entries, func(t check.TableEntry) bool {
		return !t.Readable && (!ok || !p.IsFull() || t.Index < index)
	})
	return index, p, ok, known
}

// findEntry: pkey=K without index= on a port whose table was read uses the entry
// FindPKey finds. When entries not read may change the entry the kernel picks (not
// Known), r.EntryNotKnown says why, the entry's index is not said (check.NoIndex: null
// in JSON), and r gets each other entry the kernel may pick as an alternative, so
// CanTalk answers the verdict every one of them gives, a definite one when they agree
// (a no where no entry of the partition could make it work), else unknown naming them:
//   - a full entry found with entries not read before it: the kernel picks a full
//     entry of the key either way, the same P_Key; only the index is not known;
//   - only a limited entry found: the entry read (taken), or a full one not read;
//   - none found: a full entry not read (taken), a limited one, or none at all.
func (r *ResolvedEndpoint) findEntry(v *PortView) {
	s := r.Spec
	if s.PKey == nil || s.Index != nil || v == nil || v.Table == nil || v.TableNotRead() != "" || r.Endpoint.Port {
		return
	}
	fr := FindPKey(v, *s.PKey)
	if fr.Known || (fr.Outcome != FindFound && fr.Outcome != FindUnknown) {
		return
	}
	r.EntryNotKnown = fr.Reason
	full := s.PKey.WithMembership(check.Full)
	with := func(p check.PKey, none bool) check.Endpoint {
		e := r.Endpoint
		e.Notes, e.EntryNotRead = nil, ""
		e.Entries = []check.TableEntry{{Index: check.NoIndex, PKey: p, Readable: true}}
		if none {
			e.Entries = nil
		}
		return e
	}
	unread := indexList(fr.Unread)
	switch {
	case fr.Outcome == FindFound && fr.Entry.PKey.IsFull():
		r.Endpoint.Entries[0].Index = check.NoIndex // CanTalk's reasons say why
	case fr.Outcome == FindFound:
		got := fr.Entry
		r.Endpoint.Entries[0].Index = check.NoIndex // the limited entry read is only what is taken
		r.Alternatives = append(r.Alternatives, Alternative{Endpoint: with(full, false),
			If:     fmt.Sprintf("an entry of %s that could not be read (%s) holds %s", v.Ref(), unread, full),
			Taking: fmt.Sprintf("the limited entry %s read at %s index %d for the one a QP there uses", got.PKey, v.Ref(), got.Index)})
	default: // FindUnknown: no entry read holds it
		limited := s.PKey.WithMembership(check.Limited)
		taking := fmt.Sprintf("an entry of %s that could not be read (%s) holding %s for the one a QP there uses", v.Ref(), unread, full)
		r.Endpoint = with(full, false)
		r.Alternatives = append(r.Alternatives,
			Alternative{Endpoint: with(limited, false), Taking: taking,
				If: fmt.Sprintf("the entries of %s not read hold %s and no full one", v.Ref(), limited)},
			Alternative{Endpoint: with(0, true), Taking: taking,
				If: fmt.Sprintf("none of the entries of %s not read holds partition %s (no QP there can use it)", v.Ref(), s.PKey.Partition().String())})
	}
}

// entryTaken: r's pkey= entry is one not read, taken for the verdict (findEntry: none
// of the entries read holds the partition).
func (r ResolvedEndpoint) entryTaken() bool {
	if r.EntryNotKnown == "" || r.View == nil || r.View.Table == nil || r.Spec.PKey == nil {
		return false
	}
	_, _, ok := check.FindPKeyIndex(r.View.Table.checkEntries(), *r.Spec.PKey)
	return !ok
}

// SharedMayBeShort reports whether a partition the ends share may be missing from a
// verdict's Shared for want of what one end's port did not read (mayBeShort). Shared
// is then a lower bound, even on a yes that the entries not read could not change;
// never beside an end that holds no valid key (check.Keyless: it matches nothing, so
// no entry not read can be shared with it).
func SharedMayBeShort(eps []ResolvedEndpoint) bool {
	keyless := func(r ResolvedEndpoint) bool { return check.Keyless(r.Endpoint) }
	return slices.ContainsFunc(eps, ResolvedEndpoint.mayBeShort) && !slices.ContainsFunc(eps, keyless)
}

// mayBeShort: r's port did not read all it may share: a port's entries or table not
// read, an entry pinned (index=) that was not read, or a pkey= entry that none of
// those read holds.
func (r ResolvedEndpoint) mayBeShort() bool {
	e := r.Endpoint
	if e.TableNotRead != "" || e.EntryNotRead != "" || r.entryTaken() {
		return true
	}
	return e.Port && slices.ContainsFunc(e.Entries, func(t check.TableEntry) bool { return !t.Readable })
}
