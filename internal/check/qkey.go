package check

import "fmt"

// QKey is a 32-bit queue key, checked by UD QPs only (RDMAmojo, "Queue Key (Q_Key)",
// http://www.rdmamojo.com/2013/11/29/queue-key-q_key/; ibv_modify_qp(3)).
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

// Range classifies q (RDMAmojo's Q_Key article, after the IBA's Q_Key assignments): 0x80000000-0x8000FFFF general use by applications,
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

// QKeyDecoding is what `ibkey decode qkey` shows for one value (its JSON is the
// contract in ibkey-decode-qkey(1)).
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
		// The send rule is the device's (QKeyRuleFor): IBA 10.2.5 says the top bit
		// selects the QP context's Q_Key; rdma_rxe (rxe_req.c) sends the value as is.
		d.Notes = append(d.Notes, "in a send request (wr_qkey) the top bit's effect depends on the device: under the IBA rule (IBA 10.2.5) the channel adapter puts the QP context's own Q_Key on the wire instead of this value; Linux's software RoCE driver rdma_rxe sends this value verbatim, so the receiver must hold exactly it ('ibkey can-talk' with a local port says which rule its device follows)")
		// Measured in the kernel lab (internal/kernellab, TestControlledQKeyPrivilege;
		// Linux 6.1, Debian 6.1.0-56, rdma_rxe, as uid 65534): uverbs' modify_qp refuses
		// a controlled qkey without CAP_NET_RAW (drivers/infiniband/core/uverbs_cmd.c);
		// a work request's Q_Key is not checked.
		d.Notes = append(d.Notes, "privilege on Linux: an unprivileged process cannot put this Q_Key in a QP context (ibv_modify_qp fails with EPERM without CAP_NET_RAW; newer kernels allow it after `rdma system set privileged-qkey on`), but a send request may carry it unchecked: on a device that sends it verbatim (rdma_rxe) an unprivileged process reaches QP1 with the GSI Q_Key 0x80010000")
	}
	d.Notes = append(d.Notes, "Q_Keys are checked by UD QPs only; RC and UC ignore them")
	return d
}

// QKeyRule is how a sending device chooses the Q_Key it puts on the wire for a UD send
// request. The receive side is the same everywhere (the packet's Q_Key must equal the
// receiving QP's); the send side is not.
type QKeyRule int

const (
	// QKeyRuleAssumedIBA: the device is not known (a bare Q_Key, a port read over the
	// fabric, a device ibkey cannot identify); the IBA rule is assumed and the reasons
	// say so.
	QKeyRuleAssumedIBA QKeyRule = iota
	// QKeyRuleIBA (IBA 10.2.5, C10-15): a send request Q_Key with the top bit set makes
	// the channel adapter send the QP context's Q_Key instead.
	QKeyRuleIBA
	// QKeyRuleVerbatim: the send request's Q_Key goes on the wire as given, top bit or
	// not. Linux's software RoCE driver does this (drivers/infiniband/sw/rxe/rxe_req.c
	// copies wr.ud.remote_qkey into the DETH; measured on 6.1 with real traffic in the
	// kernel lab, internal/kernellab).
	QKeyRuleVerbatim
)

// qkeyRuleNames are each rule's name in reasons and in JSON.
var qkeyRuleNames = [...][2]string{QKeyRuleAssumedIBA: {"IBA rule (assumed)", "iba-assumed"},
	QKeyRuleIBA: {"IBA rule", "iba"}, QKeyRuleVerbatim: {"verbatim rule", "verbatim"}}

// String names the rule as reasons print it.
func (r QKeyRule) String() string { return qkeyRuleNames[r][0] }

// MarshalText: "iba", "verbatim" or "iba-assumed" in JSON.
func (r QKeyRule) MarshalText() ([]byte, error) { return []byte(qkeyRuleNames[r][1]), nil }

// QKeyDevice is what decides a device's Q_Key rule, read from sysfs
// (/sys/class/infiniband/NAME).
type QKeyDevice struct {
	Name string
	// Virtual: the device's sysfs directory is under /sys/devices/virtual (a software
	// device: rdma_rxe, siw), not under a bus.
	Virtual bool
	// Parent is the netdev a software device runs on (the `parent` file rxe and siw
	// have), "" when absent.
	Parent string
	// Driver is the kernel driver bound to the device's bus device (the basename of
	// device/driver, e.g. mlx5_core), "" when none or not read.
	Driver string
	// NodeType is node_type's number (1 CA, 4 RNIC), 0 when not read.
	NodeType int
	// LinkLayer of the port ("InfiniBand", "Ethernet"), "" when not read.
	LinkLayer string
}

// SoftRoCE reports whether d is rdma_rxe, Linux's software RoCE: a virtual CA (siw, the
// software iWARP device, is an RNIC) on a parent netdev, on an Ethernet link layer.
func (d QKeyDevice) SoftRoCE() bool {
	return d.Virtual && d.Parent != "" && d.NodeType == 1 && d.LinkLayer == "Ethernet"
}

// QKeyRuleFor chooses the Q_Key send rule of a device and says why.
//
// A virtual CA on an Ethernet link layer with a parent netdev is the kernel's software
// RoCE driver, rdma_rxe (rdma link add NAME type rxe netdev IF): it sends the request's
// Q_Key verbatim (rxe_req.c; measured in the kernel lab). siw is virtual too, but an
// iWARP RNIC (node type 4) without UD QPs. Every other device is assumed to follow the
// IBA rule, which is what the specification requires of hardware; that is stated, as it
// was not measured here.
func QKeyRuleFor(d QKeyDevice) (QKeyRule, string) {
	switch {
	case d.SoftRoCE():
		return QKeyRuleVerbatim, fmt.Sprintf("%s is a software RoCE device (rdma_rxe on %s), which sends a send request's Q_Key verbatim, top bit or not", d.Name, d.Parent)
	case d.Driver != "":
		return QKeyRuleIBA, fmt.Sprintf("%s (driver %s) is assumed to follow the IBA rule: a send request Q_Key with the top bit set sends the QP's own Q_Key", d.Name, d.Driver)
	case d.Name != "":
		return QKeyRuleAssumedIBA, fmt.Sprintf("the Q_Key send rule of %s is not known: the IBA rule is assumed (a send request Q_Key with the top bit set sends the QP's own Q_Key)", d.Name)
	}
	return QKeyRuleAssumedIBA, "no device given: the IBA rule is assumed (a send request Q_Key with the top bit set sends the QP's own Q_Key; Linux's rdma_rxe instead sends it verbatim)"
}

// QKeyRuleDecides reports whether delivery from a UD QP with context Q_Key ctx and
// send request Q_Key wr to a QP holding acc depends on the sending device's Q_Key
// send rule, which is not known (QKeyRuleAssumedIBA): wr has the top bit set, so the
// IBA rule sends ctx (IBA 10.2.5, C10-15) and a device that sends it verbatim (Linux's
// rdma_rxe, kernel lab) sends wr, and acc accepts one of them only. A verdict about a
// real port must use what its device does (facts/keys.md): this one cannot say.
func QKeyRuleDecides(rule QKeyRule, ctx, wr, acc *QKey) bool {
	return rule == QKeyRuleAssumedIBA && wr != nil && wr.Controlled() && ctx != nil && acc != nil &&
		(*ctx == *acc) != (*wr == *acc)
}

// qkeyRuleSentence says why delivery from s to r is not known (QKeyRuleDecides); port:
// s is a port (its device's driver is not known), not a bare key.
func qkeyRuleSentence(s, r string, port bool, ctx, wr, acc QKey) string {
	fate := func(q QKey) string {
		if q == acc {
			return r + " accepts"
		}
		return r + " drops (it holds " + acc.String() + ")"
	}
	why := "no device given"
	if port {
		why = "the driver of its device is not known"
	}
	return fmt.Sprintf("%s's wr_qkey %s has the top bit set and its device's Q_Key send rule is not known (%s): under the IBA rule it sends its QP-context qkey %s, which %s; a device that sends the wr_qkey verbatim (Linux's rdma_rxe) sends %s, which %s", s, wr, why, ctx, fate(ctx), wr, fate(wr))
}

// WireQKey is the Q_Key a UD QP with context Q_Key ctx (nil: not known) puts on the wire
// for a send request with Q_Key wr (nil: not given, the context's is meant), and how it
// came about, in words. nil when it depends on a Q_Key not given.
func (r QKeyRule) WireQKey(ctx, wr *QKey) (*QKey, string) {
	switch {
	case wr == nil && ctx != nil:
		return ctx, "its QP-context qkey; no wr_qkey given"
	case wr == nil:
		return nil, ""
	case !wr.Controlled():
		if ctx != nil && *ctx != *wr {
			return wr, "its wr_qkey, not its QP-context qkey " + ctx.String()
		}
		return wr, "its wr_qkey"
	case r == QKeyRuleVerbatim:
		return wr, "its wr_qkey verbatim: this device does not replace a top-bit wr_qkey by the QP's own (" + r.String() + ")"
	case ctx != nil && r == QKeyRuleIBA:
		return ctx, "its QP-context qkey, because wr_qkey " + wr.String() + " has the top bit set (" + r.String() + ")"
	case ctx != nil:
		return ctx, "its QP-context qkey, because wr_qkey " + wr.String() + " has the top bit set"
	}
	return nil, ""
}
