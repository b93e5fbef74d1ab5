package query

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ibkey/ibkey/internal/check"
)

// LIDListForms says what a LID list may be, for messages.
const LIDListForms = "a LID 1-49151, a list 3,5,9 or a range 3-40"

// ParseLIDList reads "3", "3,5,9", "3-40" or a mix ("1,3-5"), decimal or 0x hex, each
// a unicast LID (check.ParseLID). Duplicates are kept once, in first-seen order, so a
// list holds at most the 49,151 unicast LIDs. The one parser of a LID list (--lid). An error names the input and why, and no flag:
// "\"5-3\": range 5-3 ends below its start (accepted: ...)"; the command adds the flag
// (cmdutil.ParseLIDFlag).
func ParseLIDList(s string) ([]uint16, error) {
	bad := func(why string) error { return fmt.Errorf("%q: %s (accepted: %s)", s, why, LIDListForms) }
	var out []uint16
	seen := map[uint16]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		lo, hi = strings.TrimSpace(lo), strings.TrimSpace(hi)
		a, err := check.ParseLID(lo)
		if err != nil {
			return nil, bad(lidProblem(lo, err))
		}
		b := a
		if isRange {
			if b, err = check.ParseLID(hi); err != nil {
				return nil, bad(lidProblem(hi, err))
			}
			if b < a {
				return nil, bad(fmt.Sprintf("range %s ends below its start", part))
			}
		}
		for l := int(a); l <= int(b); l++ {
			if !seen[uint16(l)] {
				seen[uint16(l)] = true
				out = append(out, uint16(l))
			}
		}
	}
	return out, nil
}

// lidProblem says why s is not a unicast LID (check.ParseLID's problem).
func lidProblem(s string, err error) string {
	if pe, ok := errors.AsType[*check.ParseError](err); ok {
		return fmt.Sprintf("%q is not a unicast LID: %s", s, pe.Problem)
	}
	return fmt.Sprintf("%q is not a unicast LID", s)
}
