// Package check holds ibkey's pure rules: P_Key and Q_Key values, GUIDs and port
// names, how user input becomes them and what they mean, can-talk, the switch-port rule
// at a CA's first hop, and the one Severity and Finding of every check (the fabric
// audit, the fabric diff, the partitions.conf lint). It does no I/O and imports no other
// ibkey package; the swept-fabric model the audit runs on is internal/fabric.
//
// Sources: IBA vol. 1 §10.9 (partitioning) and §9.2 (BTH), OpenSM include/iba/ib_types.h
// (the P_Key and Q_Key constants), RDMAmojo's P_Key and Q_Key articles.
package check

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// PKey is a 16-bit partition key as it sits in a port's P_Key table or a packet's BTH.
type PKey uint16

const (
	// MembershipBit is bit 15: 1 = full member, 0 = limited member (IBA §10.9).
	MembershipBit PKey = 0x8000
	// KeyMask selects the 15-bit key, the partition's identity.
	KeyMask PKey = 0x7fff
	// DefaultFull is the default P_Key, full membership of the default partition.
	DefaultFull PKey = 0xffff
	// DefaultLimited is limited membership of the default partition.
	DefaultLimited PKey = 0x7fff
)

// Membership is full or limited membership of a partition.
type Membership uint8

const (
	Limited Membership = iota
	Full
)

func (m Membership) String() string {
	if m == Full {
		return "full"
	}
	return "limited"
}

// PartitionKey is a partition's 15-bit key, its identity: a P_Key without the
// membership bit (IBA §10.9). It prints as P_Keys do, 0x%04x.
type PartitionKey uint16

// DefaultPartition is the default partition's key (0xffff full, 0x7fff limited).
const DefaultPartition PartitionKey = 0x7fff

// String prints the key as 0x and four hex digits.
func (k PartitionKey) String() string { return fmt.Sprintf("0x%04x", uint16(k)) }

// PKey returns the P_Key of membership m in partition k.
func (k PartitionKey) PKey(m Membership) PKey { return PKey(k).WithMembership(m) }

// Partition returns the partition the P_Key is in: its 15-bit key. Two P_Keys that
// differ only in bit 15 are the same partition.
func (p PKey) Partition() PartitionKey { return PartitionKey(p & KeyMask) }

// Membership returns the membership encoded in bit 15.
func (p PKey) Membership() Membership {
	if p&MembershipBit != 0 {
		return Full
	}
	return Limited
}

// IsFull reports whether bit 15 (full membership) is set.
func (p PKey) IsFull() bool { return p&MembershipBit != 0 }

// Valid reports whether the entry holds a key: key 0 (0x0000 or 0x8000) marks an
// empty, invalid table entry (IBA §10.9).
func (p PKey) Valid() bool { return p.Partition() != 0 }

// IsDefault reports whether p belongs to the default partition (key 0x7fff).
func (p PKey) IsDefault() bool { return p.Partition() == DefaultPartition }

// WithMembership returns p with bit 15 set for Full and cleared for Limited.
func (p PKey) WithMembership(m Membership) PKey {
	if m == Full {
		return p | MembershipBit
	}
	return p &^ MembershipBit
}

// String prints the canonical form used everywhere in ibkey's output, 0x%04x.
func (p PKey) String() string { return fmt.Sprintf("0x%04x", uint16(p)) }

// PKeyForms is what ParsePKey accepts, for error messages.
const PKeyForms = "hex 0x8001, 8001 or colon form 80:01, at most 0xffff"

// ParseError is bad user input. It names the input and the accepted forms.
type ParseError struct {
	What     string // "P_Key", "Q_Key", ...
	Input    string
	Problem  string
	Accepted string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("invalid %s %q: %s (accepted: %s)", e.What, e.Input, e.Problem, e.Accepted)
}

// ParsePKey reads a P_Key as a user writes it: hexadecimal with or without 0x (any case),
// or the colon form "80:01" of switch CLIs (two bytes of one or two hex digits each).
// Signs, spaces, decimal suffixes, empty input and values over 0xffff are rejected.
func ParsePKey(s string) (PKey, error) {
	bad := func(problem string) (PKey, error) {
		return 0, &ParseError{What: "P_Key", Input: s, Problem: problem, Accepted: PKeyForms}
	}
	if hi, lo, ok := strings.Cut(s, ":"); ok {
		if strings.Contains(lo, ":") {
			return bad("the colon form has exactly two bytes")
		}
		h, err1 := parseHexByte(hi)
		l, err2 := parseHexByte(lo)
		if problem := cmp.Or(err1, err2); problem != "" {
			return bad(problem)
		}
		return PKey(h)<<8 | PKey(l), nil
	}
	v, problem := parseHex(s, 0xffff)
	if problem != "" {
		return bad(problem)
	}
	return PKey(v), nil
}

// ParsePartitionKey is ParsePKey for a flag that names a partition (pkeys --find,
// fabric pkeys --key, job --want): key 0 (0x0000, 0x8000) is an empty table entry,
// never a partition (IBA 10.9.1.2), so asking for its members or its index is bad
// input, not a question with an answer.
func ParsePartitionKey(s string) (PKey, error) {
	p, err := ParsePKey(s)
	if err == nil && !p.Valid() {
		return 0, &ParseError{What: "P_Key", Input: s, Problem: "key 0 is an empty table entry, not a partition",
			Accepted: "a P_Key whose low 15 bits are not all 0, e.g. 0x8001"}
	}
	return p, err
}

func parseHexByte(s string) (uint8, string) {
	if s == "" {
		return 0, "empty byte in colon form"
	}
	if len(s) > 2 {
		return 0, fmt.Sprintf("%q is more than one byte (two hex digits)", s)
	}
	var v uint8
	for i := 0; i < len(s); i++ {
		d, ok := HexDigit(s[i])
		if !ok {
			return 0, fmt.Sprintf("%q is not a hex digit", s[i:i+1])
		}
		v = v<<4 | d
	}
	return v, ""
}

// parseHex parses hex digits with an optional 0x/0X prefix and checks v <= max.
// Leading zeros are allowed ("0x00008001"); the problem string is "" on success.
func parseHex(s string, max uint64) (uint64, string) {
	if s == "" {
		return 0, "empty value"
	}
	digits := s
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		digits = s[2:]
		if digits == "" {
			return 0, "no hex digits after 0x"
		}
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		d, ok := HexDigit(digits[i])
		if !ok {
			c := digits[i : i+1]
			switch c {
			case "-", "+":
				return 0, "signs are not allowed"
			case " ", "\t", "\n":
				return 0, "spaces are not allowed"
			}
			return 0, fmt.Sprintf("%q is not a hex digit", c)
		}
		v = v<<4 | uint64(d)
		if v > max {
			if len(digits) == len(s) && isDecimal(s) {
				// 32769 is read as hex 0x32769, not decimal 32769 (0x8001).
				if d, err := strconv.ParseUint(s, 10, 64); err == nil && d <= max {
					return 0, fmt.Sprintf("read as hex 0x%s, larger than 0x%x (values are hex: decimal %s is 0x%x)", s, max, s, d)
				}
				return 0, fmt.Sprintf("read as hex 0x%s, larger than 0x%x (values are hex)", s, max)
			}
			return 0, fmt.Sprintf("larger than 0x%x", max)
		}
	}
	return v, ""
}

// isDecimal says whether s is all decimal digits.
func isDecimal(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// HexDigit is the value of one hex digit, either case, for the hex parsers here (P_Keys,
// Q_Keys, endpoints) and OpenSM log lines (internal/smlog).
func HexDigit(c byte) (uint8, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// PKeyDecoding is what `ibkey decode pkey` shows for one value (its JSON is the
// contract in ibkey-decode-pkey(1)).
type PKeyDecoding struct {
	Value      string `json:"value"`
	Key        string `json:"key"`
	Membership string `json:"membership"` // "" for key 0: a member of nothing
	Valid      bool   `json:"valid"`
	Default    bool   `json:"default"`
	// Notes are sentences that explain the value to a user.
	Notes []string `json:"notes"`
}

// DecodePKey explains a P_Key value.
func DecodePKey(p PKey) PKeyDecoding {
	d := PKeyDecoding{
		Value:   p.String(),
		Key:     p.Partition().String(),
		Valid:   p.Valid(),
		Default: p.IsDefault(), // key 0x7fff: never key 0
	}
	if p.Valid() {
		// Key 0 names no partition, so an empty entry is a member of nothing (as
		// `pkeys --all` shows it).
		d.Membership = p.Membership().String()
	}
	switch {
	case !p.Valid():
		d.Notes = append(d.Notes, "key 0 is invalid: 0x0000 and 0x8000 mark an empty P_Key table entry; no packet may use it")
	case p == DefaultFull:
		d.Notes = append(d.Notes, "the default P_Key: full member of the default partition; talks to every member of it")
	case p == DefaultLimited:
		d.Notes = append(d.Notes, "limited member of the default partition: talks only to full members (0xffff), e.g. the SM")
	case p.IsFull():
		d.Notes = append(d.Notes, fmt.Sprintf("full member of partition %s: talks to full and limited members of it", p.Partition().String()))
	default:
		d.Notes = append(d.Notes, fmt.Sprintf("limited member of partition %s: talks only to full members (%s), not to other limited members", p.Partition().String(), p.WithMembership(Full)))
	}
	if p.Valid() && p.IsFull() && !p.IsDefault() {
		d.Notes = append(d.Notes, fmt.Sprintf("IPoIB child interface for it: ib0.%04x (the interface name always carries the full bit)", uint16(p)))
	}
	return d
}
