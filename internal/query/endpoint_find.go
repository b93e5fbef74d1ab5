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
	// FindFound: an entry holds the partition (Entry); with Unread entries a better
	// (full) entry may be among them, which FindResult.Reason says.
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
	// Entry is the entry a QP should use (FindFound), nil otherwise.
	Entry *Entry
	// Unread are the indexes of the entries that could not be read.
	Unread []int
	// Reason says why it was not found, or what was not read; "" for a plain find.
	Reason string
}

// FindPKey answers `pkeys --find KEY` for one port with the rule can-talk uses
// (check.FindPKeyIndex), and never a definite "not in the table" when entries were not
// read: an unread entry may hold the key (then FindUnknown). pkeys --find exits 4 when
// any port's answer is not known (FindUnknown, FindNoTable, a found index an entry not
// read may change, a device not read), else 0 when a port has FindFound, else 1.
func FindPKey(v *PortView, key check.PKey) FindResult {
	if v.Table == nil {
		if v.TableAbsent {
			// No table at all (iWARP): the key is definitely not there.
			return FindResult{Outcome: FindNotFound, Reason: v.TableMissing}
		}
		return FindResult{Outcome: FindNoTable, Reason: v.TableMissing}
	}
	r := FindResult{Unread: v.Table.Unread()}
	unread := unreadEntries(r.Unread)
	switch {
	case !key.Valid():
		r.Outcome, r.Reason = FindNotFound, fmt.Sprintf("%s has key 0, which is invalid: it never matches a table entry", key)
	default:
		if e, ok := v.Table.FindIndex(key); ok {
			r.Outcome, r.Entry = FindFound, e
			if !e.PKey.IsFull() && unread != "" {
				r.Reason = fmt.Sprintf("only a limited entry was found; %s: a full entry may be among them", unread)
			}
		} else if unread != "" {
			r.Outcome = FindUnknown
			r.Reason = fmt.Sprintf("partition %s is not in the entries that were read, but %s: it may be in one of them", key.Partition().String(), unread)
		} else {
			r.Outcome = FindNotFound
			r.Reason = fmt.Sprintf("partition %s is not in the %s table", key.Partition().String(), v.Ref())
		}
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
