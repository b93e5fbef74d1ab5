// Package hostlist expands Slurm hostlist expressions ("node[01-04,07]",
// $SLURM_JOB_NODELIST as Slurm writes it) into host names, in Slurm's order.
//
// The grammar is that of Slurm's src/common/hostlist.c (hostlist_create,
// _hostlist_create_bracketed, _next_tok, _push_range_list, _parse_single_range), for
// one-dimensional clusters:
//
//   - Hosts are separated by commas, spaces, tabs or newlines ("\t, \n"); a separator
//     inside brackets does not separate (node[1,3] is one token). Empty tokens are
//     skipped (a,,b is a and b).
//   - A token without '[' is a host name as written.
//   - In a token with '[', the last '[' and the first ']' after it enclose a list of
//     numbers and ranges (01-04,07); what follows the ']' is a suffix (gpu[1-2]-ib:
//     Slurm 23.02.5 and later); what precedes the '[' is the prefix. Each number is
//     printed with as many digits as the range's first number was written with
//     (zero padding: 01-10 gives 01..10, 1-10 gives 1..10, 9-011 gives 9, 10, 11).
//   - The prefix may hold further bracket groups (rack[1-2]-n[01-02]), expanded as
//     Slurm's _push_range_list does: the last group varies fastest, then the first,
//     the second, ... (a[1-2]b[3-4]c[5-6] is a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 ...).
//   - A range holds at most 65536 hosts (MAX_RANGE, MAX_SLURM_NODES), as do the
//     prefix groups (MAX_PREFIX_CNT); the lower bound may not exceed the upper.
//   - Duplicates are kept, as hostlist_create keeps them.
//
// Where Slurm accepts a range only because strtoul is lenient, this package refuses
// it: leading white space or a sign in a number ("[ 1]", "[+1]", Slurm reads 01),
// characters after the first number of a range ("[1a-3]", Slurm reads 01-03), and a
// range without its upper bound ("[1-]", Slurm reads 1). Slurm itself never writes
// these forms, so $SLURM_JOB_NODELIST always expands as Slurm expands it.
package hostlist

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxHosts bounds one range, the prefix groups of a token, and the whole list:
// Slurm's MAX_SLURM_NODES (slurm/slurm.h), its MAX_RANGE and MAX_PREFIX_CNT.
const MaxHosts = 64 * 1024

// separators are hostlist_create's token separators.
const separators = "\t, \n"

// Error is an expression Slurm's grammar does not accept.
type Error struct {
	Expr    string // the whole expression
	Token   string // the token that failed
	Problem string
}

func (e *Error) Error() string {
	if e.Token == e.Expr {
		return fmt.Sprintf("invalid hostlist %q: %s", e.Expr, e.Problem)
	}
	return fmt.Sprintf("invalid hostlist %q: %q: %s", e.Expr, e.Token, e.Problem)
}

// Expand returns the host names of expr in Slurm's order (duplicates kept).
func Expand(expr string) ([]string, error) {
	var out []string
	for _, tok := range tokens(expr) {
		bad := func(format string, a ...any) error {
			return &Error{Expr: expr, Token: tok, Problem: fmt.Sprintf(format, a...)}
		}
		open := strings.LastIndexByte(tok, '[')
		if open < 0 {
			out = append(out, tok)
			if len(out) > MaxHosts {
				return nil, bad("more than %d hosts", MaxHosts)
			}
			continue
		}
		closeAt := strings.IndexByte(tok[open:], ']')
		if closeAt < 0 {
			return nil, bad("'[' without ']'")
		}
		closeAt += open
		last, err := parseRanges(tok[open+1 : closeAt])
		if err != nil {
			return nil, bad("%v", err)
		}
		prefixes, err := expandPrefix(tok[:open])
		if err != nil {
			return nil, bad("%v", err)
		}
		suffix := tok[closeAt+1:]
		for _, p := range prefixes {
			for _, r := range last {
				for n := r.lo; n <= r.hi; n++ {
					out = append(out, p+r.format(n)+suffix)
					if len(out) > MaxHosts {
						return nil, bad("more than %d hosts", MaxHosts)
					}
				}
			}
		}
	}
	return out, nil
}

// tokens splits expr at separators outside brackets (_next_tok): from a '[' with a ']'
// after it, the token runs at least to that ']'.
func tokens(expr string) []string {
	var out []string
	start := -1
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		if strings.IndexByte(separators, c) >= 0 {
			if start >= 0 {
				out = append(out, expr[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
		if c == '[' {
			if j := strings.IndexByte(expr[i:], ']'); j > 0 {
				i += j
			}
		}
	}
	if start >= 0 {
		out = append(out, expr[start:])
	}
	return out
}

// expandPrefix expands the bracket groups of a token's prefix as _push_range_list
// does: the last '[' with the last ']' after it is a group; the text before it is
// expanded first (recursively), the groups nearest the end varying slowest. A '['
// without a ']' after it is text.
func expandPrefix(prefix string) ([]string, error) {
	open := strings.LastIndexByte(prefix, '[')
	if open < 0 {
		return []string{prefix}, nil
	}
	closeAt := strings.LastIndexByte(prefix[open:], ']')
	if closeAt < 0 {
		return []string{prefix}, nil
	}
	closeAt += open
	rs, err := parseRanges(prefix[open+1 : closeAt])
	if err != nil {
		return nil, err
	}
	count := 0
	for _, r := range rs {
		count += int(r.hi - r.lo + 1)
		if count > MaxHosts {
			return nil, fmt.Errorf("more than %d prefixes", MaxHosts)
		}
	}
	head, tail := prefix[:open], prefix[closeAt+1:]
	var out []string
	for _, r := range rs {
		for n := r.lo; n <= r.hi; n++ {
			p := head + r.format(n) + tail
			if strings.IndexByte(head, '[') < 0 {
				out = append(out, p)
				continue
			}
			more, err := expandPrefix(p)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
			if len(out) > MaxHosts {
				return nil, fmt.Errorf("more than %d prefixes", MaxHosts)
			}
		}
	}
	return out, nil
}

// span is one number or range of a bracket: lo..hi printed with width digits.
type span struct {
	lo, hi uint64
	width  int
}

func (r span) format(n uint64) string { return fmt.Sprintf("%0*d", r.width, n) }

// parseRanges reads "01-04,07" (_parse_range_list, _parse_single_range).
func parseRanges(s string) ([]span, error) {
	var out []span
	for _, piece := range strings.Split(s, ",") {
		r, err := parseSpan(piece)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func parseSpan(piece string) (span, error) {
	bad := func(why string) (span, error) {
		return span{}, fmt.Errorf("invalid range %q: %s (accepted: N or N-M, decimal digits, e.g. 01-04)", piece, why)
	}
	if piece == "" {
		return bad("empty")
	}
	lo, hi, isRange := strings.Cut(piece, "-")
	// strconv.ParseUint in base 10 takes decimal digits only: no sign, no space.
	a, err := strconv.ParseUint(lo, 10, 64)
	if err != nil {
		return bad(fmt.Sprintf("%q is not a number", lo))
	}
	b := a
	if isRange {
		if b, err = strconv.ParseUint(hi, 10, 64); err != nil {
			return bad(fmt.Sprintf("%q is not a number", hi))
		}
		if a > b {
			return bad("it ends below its start")
		}
	}
	if b-a >= MaxHosts {
		return bad(fmt.Sprintf("more than %d hosts", MaxHosts))
	}
	return span{lo: a, hi: b, width: len(lo)}, nil
}
