package query

import (
	"fmt"
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
	e, ok := v.Table.FindIndex(key)
	switch {
	case ok && e.PKey.IsFull():
		r.Outcome, r.Entry, r.Known = FindFound, e, true
		var before []int
		for _, i := range r.Unread {
			if i < e.Index {
				before = append(before, i)
			}
		}
		if len(before) > 0 {
			r.Known = false
			r.Reason = fmt.Sprintf("entry %d holds it as a full member, but %s before it could not be read (%s): a full entry there would be the one used",
				e.Index, textsafe.Plural(len(before), "entry", "entries"), indexList(before))
		}
	case ok:
		r.Outcome, r.Entry, r.Known = FindFound, e, unread == ""
		if unread != "" {
			r.Reason = fmt.Sprintf("only a limited entry was found; %s: a full entry may be among them", unread)
		}
	case unread != "":
		r.Outcome = FindUnknown
		r.Reason = fmt.Sprintf("partition %s is not in the entries that were read, but %s: it may be in one of them", key.Partition().String(), unread)
	default:
		r.Outcome, r.Known = FindNotFound, true
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
