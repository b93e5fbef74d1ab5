package check

import "fmt"

// QKey is a 32-bit queue key, checked by UD QPs only (seed 003, keys.md).
type QKey uint32

const (
	// ControlledBit is bit 31: Q_Keys with it set are controlled (privileged). In a send
	// request it means "send the QP context's Q_Key instead of this one".
	ControlledBit QKey = 0x80000000
	// GSIQKey is the well-known Q_Key of QP1 (general services, management).
	GSIQKey QKey = 0x80010000
	// IPoIBQKey is OpenSM's default Q_Key for IPoIB multicast groups.
	IPoIBQKey QKey = 0x00000b1b

	generalUseFirst QKey = 0x80000000
	generalUseLast  QKey = 0x8000ffff
	reservedFirst   QKey = 0x80010000
	reservedLast    QKey = 0x8fffffff
)

// QKeyForms is what ParseQKey accepts, for error messages.
const QKeyForms = "hex 0x80010000 or 80010000, at most 0xffffffff"

// Controlled reports whether the top bit is set: only privileged code may put such a
// Q_Key in a QP context (Linux refuses it to unprivileged users since 2023 unless
// `rdma system set privileged-qkey on`).
func (q QKey) Controlled() bool { return q&ControlledBit != 0 }

func (q QKey) String() string { return fmt.Sprintf("0x%08x", uint32(q)) }

// QKeyRange names the range of the Q_Key space a value falls in.
type QKeyRange string

const (
	QKeyUnprivileged QKeyRange = "unprivileged"
	QKeyGeneralUse   QKeyRange = "general-use"
	QKeyReserved     QKeyRange = "reserved"
	QKeyControlled   QKeyRange = "controlled"
)

// Range classifies q (seed 003): 0x80000000-0x8000FFFF general use by applications,
// 0x80010000-0x8FFFFFFF reserved, the rest of the top-bit space controlled but unassigned.
func (q QKey) Range() QKeyRange {
	switch {
	case !q.Controlled():
		return QKeyUnprivileged
	case q >= generalUseFirst && q <= generalUseLast:
		return QKeyGeneralUse
	case q >= reservedFirst && q <= reservedLast:
		return QKeyReserved
	default:
		return QKeyControlled
	}
}

// ParseQKey reads a Q_Key: hexadecimal with or without 0x, at most 0xffffffff.
func ParseQKey(s string) (QKey, error) {
	v, problem := parseHex(s, 0xffffffff)
	if problem != "" {
		return 0, &ParseError{What: "Q_Key", Input: s, Problem: problem, Accepted: QKeyForms}
	}
	return QKey(v), nil
}

// QKeyDecoding is what `ibkey decode qkey` shows for one value (JSON per design.md).
type QKeyDecoding struct {
	Value      string    `json:"value"`
	Controlled bool      `json:"controlled"`
	WellKnown  string    `json:"well_known"` // "gsi", "ipoib" or ""
	Range      QKeyRange `json:"range"`
	Notes      []string  `json:"notes"`
}

// DecodeQKey explains a Q_Key value.
func DecodeQKey(q QKey) QKeyDecoding {
	d := QKeyDecoding{Value: q.String(), Controlled: q.Controlled(), Range: q.Range()}
	switch q {
	case GSIQKey:
		d.WellKnown = "gsi"
		d.Notes = append(d.Notes, "the well-known GSI Q_Key of QP1 (management datagrams: SA, PMA, CM)")
	case IPoIBQKey:
		d.WellKnown = "ipoib"
		d.Notes = append(d.Notes, "OpenSM's default Q_Key for IPoIB multicast groups")
	}
	switch d.Range {
	case QKeyUnprivileged:
		d.Notes = append(d.Notes, "unprivileged: any process may set it in a UD QP's context")
	case QKeyGeneralUse:
		d.Notes = append(d.Notes, "controlled, in 0x80000000-0x8000ffff (general use by applications): only privileged code may set it in a QP context")
	case QKeyReserved:
		d.Notes = append(d.Notes, "controlled, in the reserved range 0x80010000-0x8fffffff: only privileged code may set it in a QP context")
	default:
		d.Notes = append(d.Notes, "controlled (top bit set), outside the general-use and reserved ranges: only privileged code may set it in a QP context")
	}
	if d.Controlled {
		d.Notes = append(d.Notes, "in a send request the top bit means: put the QP context's own Q_Key on the wire instead of this value")
		d.Notes = append(d.Notes, "Linux refuses controlled Q_Keys to unprivileged users unless `rdma system set privileged-qkey on`")
	}
	d.Notes = append(d.Notes, "Q_Keys are checked by UD QPs only; RC and UC ignore them")
	return d
}
