package check

import (
	"fmt"
	"strconv"
	"strings"
)

// EndpointKind says what the base of a can-talk endpoint names (ibkey-can-talk(1)).
type EndpointKind uint8

const (
	// EndpointPKey is a QP using that P_Key: "0x8001".
	EndpointPKey EndpointKind = iota + 1
	// EndpointPort is a local port, every valid entry of its table: "mlx5_0/1".
	EndpointPort
	// EndpointGUID is a port in a partitions.conf: "0x0002c90300000204", "guid=...".
	EndpointGUID
	// EndpointLID is a port read over MADs: "lid=3" (optionally ",port=P").
	EndpointLID
	// EndpointOptions is options only, a QP described by pkey=: "pkey=0x8001,qp=ud".
	EndpointOptions
	// EndpointNode is a port of a node found by a fabric sweep, by its node
	// description (or GUID): "node=HcaB" (optionally ",port=P").
	EndpointNode
)

// QPType is the transport of a QP. QPAny means not given: the rules then accept any type.
type QPType uint8

const (
	QPAny QPType = iota
	QPRC
	QPUC
	QPUD
)

func (t QPType) String() string {
	return [...]string{QPAny: "any", QPRC: "rc", QPUC: "uc", QPUD: "ud"}[t]
}

// EndpointForms is what ParseEndpoint accepts, for error messages.
const EndpointForms = "PKEY (0x8001, 8001, 80:01), DEV/PORT (mlx5_0/1 or mlx5_0:1), GUID (0x0002c90300000204, " +
	"0002:c903:0000:0204, guid=GUID), lid=N, node=NAME, or options only (pkey=0x8001,qp=ud,qkey=0x11), " +
	"then ,KEY=VALUE options"

// EndpointOptionForms is what may follow the base, for error messages.
const EndpointOptionForms = "pkey=PKEY, index=N (decimal), qp=rc|uc|ud, qkey=QKEY, wr_qkey=QKEY, port=P (with lid=N, node=NAME or a GUID)"

// Limits of the endpoint grammar.
const (
	// MaxDeviceName bounds a device name: 63 bytes. The kernel's IB_DEVICE_NAME_MAX,
	// 64, counts the NUL (char name[IB_DEVICE_NAME_MAX], include/rdma/ib_verbs.h), and
	// rdma-core's libibverbs drops a name that does not fit 64 bytes with its NUL
	// (ibdev_nl.c and init.c, check_snprintf into ibdev_name[IBV_SYSFS_NAME_MAX]).
	MaxDeviceName = 63
	// MaxPortNum is the largest port number (PortInfo's port is 8 bits; switch port 0
	// is the management port, so 0 is allowed).
	MaxPortNum = 255
	// MaxTableIndex is the largest P_Key table index (PartitionCap is 16 bits).
	MaxTableIndex = 0xffff
	// MaxUnicastLID is the top of the unicast LID range 0x0001-0xbfff.
	MaxUnicastLID = 0xbfff
	// MaxNodeName bounds node=NAME: NodeDescription is 64 bytes.
	MaxNodeName = 64
)

// EndpointSpec is one parsed can-talk endpoint. Fields that were not given are nil (or
// the zero value where noted). It says what the user asked for; resolving a port, GUID or
// LID to a table is the caller's job (see EndpointSpec.Endpoint).
type EndpointSpec struct {
	Kind EndpointKind
	// PKey is the base P_Key (EndpointPKey) or pkey= (any other kind; on a port it means
	// "a QP on this port using that partition").
	PKey   *PKey
	Device string // EndpointPort: the device name, a path component
	Port   int    // EndpointPort: the port number, 0-255
	GUID   GUID   // EndpointGUID: the port GUID, never 0
	LID    uint16 // EndpointLID: a unicast LID, 1-0xbfff
	Node   string // EndpointNode: a node description (or GUID) to find in a sweep
	// PortNum is port=P, with lid=N, node=NAME or a GUID.
	PortNum *int
	// Index is index=N: on a port it pins one table entry; on a QP it records the index
	// the QP uses.
	Index  *int
	QPType QPType // QPAny when qp= was not given
	QKey   *QKey  // qkey=: the QP context's Q_Key
	WRQKey *QKey  // wr_qkey=: the Q_Key in the send request
}

func endpointErr(token, problem string) error {
	return &ParseError{What: "endpoint", Input: token, Problem: problem, Accepted: EndpointForms}
}

func optionErr(token, problem string) error {
	return &ParseError{What: "endpoint option", Input: token, Problem: problem, Accepted: EndpointOptionForms}
}

// ParseEndpoint reads a can-talk endpoint:
//
//	ENDPOINT := BASE { "," KEY "=" VALUE }
//	BASE     := PKEY | DEV "/" PORT | DEV ":" PORT | GUID | "guid=" GUID | "lid=" N | "node=" NAME | KEY "=" VALUE
//	KEY      := pkey | index | qp | qkey | wr_qkey | port (with lid=, node= or a GUID)
//
// NAME is a node description: 1-64 bytes, no comma or control character.
//
// A bare BASE is told apart like this, in order:
//   - it contains "=": an option (guid= and lid= are bases, the rest make an
//     options-only endpoint, which must include pkey=);
//   - it contains "/": DEV/PORT (a device name cannot contain "/");
//   - DEV:PORT (mlx5_0:1, NCCL_IB_HCA's and UCX_NET_DEVICES' spelling): one colon
//     after something that is not one hex byte, then a decimal port (SplitPort);
//   - it contains ":": one colon is the P_Key colon form 80:01, three colons the GUID
//     form 0002:c903:00a1:b2c4 (four groups of four hex digits), anything else an error;
//   - hex digits (optional 0x): a GUID when written with exactly 16 digits or when it has
//     more than 4 significant digits (leading zeros not counted), else a P_Key. So
//     0x00008001 is the P_Key 0x8001, 0x0000000000008001 and 0x2c90300000204 are GUIDs.
//
// Every error is a *ParseError naming the bad token and the accepted forms.
func ParseEndpoint(s string) (EndpointSpec, error) {
	var spec EndpointSpec
	if s == "" {
		return spec, endpointErr(s, "empty endpoint")
	}
	tokens := strings.Split(s, ",")
	seen := make(map[string]bool, len(tokens))
	base := tokens[0]
	opts := tokens[1:]
	if strings.Contains(base, "=") {
		key, value, _ := strings.Cut(base, "=")
		switch key {
		case "guid":
			g, err := ParseGUID(value)
			if err != nil {
				return spec, err
			}
			spec.Kind, spec.GUID = EndpointGUID, g
		case "lid":
			lid, err := ParseLID(value)
			if err != nil {
				return spec, err
			}
			spec.Kind, spec.LID = EndpointLID, lid
		case "node":
			if err := checkNodeName(base, value); err != nil {
				return spec, err
			}
			spec.Kind, spec.Node = EndpointNode, value
		default:
			spec.Kind = EndpointOptions
			opts = tokens // the base is the first option
		}
	} else if err := parseBase(base, &spec); err != nil {
		return spec, err
	}
	for _, tok := range opts {
		if tok == "" {
			return spec, endpointErr(s, "empty option between commas")
		}
		key, value, ok := strings.Cut(tok, "=")
		if !ok {
			return spec, optionErr(tok, "an option is KEY=VALUE; the base (P_Key, DEV/PORT, GUID, lid=) comes first")
		}
		if seen[key] {
			return spec, optionErr(tok, fmt.Sprintf("%s= given twice", key))
		}
		seen[key] = true
		if err := spec.setOption(tok, key, value); err != nil {
			return spec, err
		}
	}
	if spec.Kind == EndpointOptions && spec.PKey == nil {
		return spec, endpointErr(s, "an options-only endpoint needs pkey=")
	}
	return spec, nil
}

func (spec *EndpointSpec) setOption(tok, key, value string) error {
	switch key {
	case "pkey":
		if spec.Kind == EndpointPKey {
			return optionErr(tok, "P_Key given twice: as the base and as pkey=")
		}
		p, err := ParsePKey(value)
		if err != nil {
			return err
		}
		spec.PKey = &p
	case "index":
		n, ok := parseDecimal(value, MaxTableIndex)
		if !ok {
			return optionErr(tok, fmt.Sprintf("a P_Key table index is a decimal number 0-%d", MaxTableIndex))
		}
		spec.Index = &n
	case "qp":
		t, ok := map[string]QPType{"rc": QPRC, "uc": QPUC, "ud": QPUD}[strings.ToLower(value)]
		if !ok {
			return optionErr(tok, fmt.Sprintf("QP type %q is not rc, uc or ud", value))
		}
		spec.QPType = t
	case "qkey", "wr_qkey":
		q, err := ParseQKey(value)
		if err != nil {
			return err
		}
		if key == "qkey" {
			spec.QKey = &q
		} else {
			spec.WRQKey = &q
		}
	case "port":
		if spec.Kind != EndpointLID && spec.Kind != EndpointNode && spec.Kind != EndpointGUID {
			return optionErr(tok, "port= goes with lid=N, node=NAME or a GUID; a local port is written DEV/PORT, e.g. mlx5_0/1")
		}
		n, ok := parseDecimal(value, MaxPortNum)
		if !ok {
			return optionErr(tok, fmt.Sprintf("a port number is a decimal number 0-%d", MaxPortNum))
		}
		spec.PortNum = &n
	case "guid", "lid", "node":
		return optionErr(tok, key+"= is a base: put it first")
	default:
		return optionErr(tok, fmt.Sprintf("unknown option %q", key))
	}
	return nil
}

// SplitPort splits a local port written DEV/PORT (iproute2's rdma), or DEV:PORT as
// NCCL_IB_HCA and UCX_NET_DEVICES write it (mlx5_0:1). A colon form that looks like a
// P_Key (80:01: up to three hex digits, then one hex byte) is not a port, nor is a
// GUID's colon form.
func SplitPort(s string) (dev, port string, ok bool) {
	if dev, port, ok := strings.Cut(s, "/"); ok {
		return dev, port, true
	}
	dev, port, ok = strings.Cut(s, ":")
	if !ok || strings.Contains(port, ":") || port == "" || dev == "" {
		return "", "", false
	}
	if len(dev) <= 3 && allHex(dev) && len(port) <= 2 && allHex(port) {
		return "", "", false // the P_Key colon form (800:01 is a mistyped one)
	}
	if !isDecimal(port) {
		return "", "", false
	}
	return dev, port, true
}

// parseBase reads a BASE without "=": DEV/PORT (or DEV:PORT), a P_Key or a GUID
// (rules at ParseEndpoint).
func parseBase(base string, spec *EndpointSpec) error {
	if dev, port, ok := SplitPort(base); ok {
		if err := checkDevice(base, dev); err != nil {
			return err
		}
		if strings.Contains(port, "/") {
			return endpointErr(base, "a port is DEV/PORT (or DEV:PORT) with one \"/\"")
		}
		n, ok := parseDecimal(port, MaxPortNum)
		if !ok {
			return endpointErr(base, fmt.Sprintf("port %q is not a decimal number 0-%d", port, MaxPortNum))
		}
		spec.Kind, spec.Device, spec.Port = EndpointPort, dev, n
		return nil
	}
	// One colon is the P_Key colon form, three the GUID's; without one, hex digits
	// are a GUID when 16 of them or more than 4 significant ones.
	guid := false
	switch strings.Count(base, ":") {
	case 0:
		digits := strings.TrimPrefix(strings.TrimPrefix(base, "0x"), "0X")
		if digits != "" && allHex(digits) {
			guid = len(digits) == 16 || len(strings.TrimLeft(digits, "0")) > 4
		} else if digits != "" && !strings.ContainsAny(base, "+- \t\n") {
			// Not hex at all (mlx5_0): the likely mistake is a port without /PORT.
			return endpointErr(base, "not a P_Key or GUID (hex); a port is written DEV/PORT, e.g. mlx5_0/1")
		}
	case 1:
	case 3:
		guid = true
	default:
		return endpointErr(base, "colon form is 80:01 for a P_Key or 0002:c903:0000:0204 for a GUID")
	}
	if guid {
		g, err := ParseGUID(base)
		if err != nil {
			return err
		}
		spec.Kind, spec.GUID = EndpointGUID, g
		return nil
	}
	p, err := ParsePKey(base)
	if err != nil {
		return err
	}
	spec.Kind, spec.PKey = EndpointPKey, &p
	return nil
}

func checkNodeName(token, name string) error {
	switch {
	case name == "":
		return endpointErr(token, "empty node name after node=")
	case len(name) > MaxNodeName:
		return endpointErr(token, fmt.Sprintf("node name longer than %d bytes (a NodeDescription holds 64)", MaxNodeName))
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < ' ' || c == 0x7f {
			return endpointErr(token, "node name has a control character")
		}
	}
	return nil
}

func checkDevice(token, dev string) error {
	switch {
	case dev == "":
		return endpointErr(token, "empty device name before \"/\"")
	case dev == "." || dev == "..":
		return endpointErr(token, fmt.Sprintf("%q is not a device name", dev))
	case len(dev) > MaxDeviceName:
		return endpointErr(token, fmt.Sprintf("device name longer than %d bytes", MaxDeviceName))
	}
	for i := 0; i < len(dev); i++ {
		// Device names are sysfs path components: no NUL; no spaces or control
		// characters either, so that a name printed back is the name typed.
		if c := dev[i]; c <= ' ' || c == 0x7f {
			return endpointErr(token, "device name has a space or control character")
		}
	}
	return nil
}

// GUIDForms is what a GUID may look like, for error messages.
const GUIDForms = "0x0002c90300000204 (up to 16 hex digits, 0x optional) or 0002:c903:0000:0204"

// ParseGUID reads a port or node GUID as a user writes it: hex with optional 0x (1-16
// digits) or the sysfs form of four colon-separated groups of four hex digits. GUID 0
// is not a port GUID. The error is a *ParseError naming the accepted forms.
func ParseGUID(s string) (GUID, error) {
	bad := func(problem string) (GUID, error) {
		return 0, &ParseError{What: "GUID", Input: s, Problem: problem, Accepted: GUIDForms}
	}
	var v uint64
	if strings.Contains(s, ":") {
		groups := strings.Split(s, ":")
		if len(groups) != 4 {
			return bad("the colon form has four groups")
		}
		for _, g := range groups {
			if len(g) != 4 || !allHex(g) {
				return bad(fmt.Sprintf("group %q is not four hex digits", g))
			}
			n, _ := strconv.ParseUint(g, 16, 16)
			v = v<<16 | n
		}
	} else {
		digits := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
		if len(digits) > 16 {
			return bad("more than 16 hex digits")
		}
		n, problem := parseHex(s, 1<<64-1)
		if problem != "" {
			return bad(problem)
		}
		v = n
	}
	if v == 0 {
		return bad("GUID 0 is not a port GUID")
	}
	return GUID(v), nil
}

// ParseLID reads a unicast LID, 1-49151: decimal, or hex after 0x. The one LID parser
// (--lid lists through query.ParseLIDList, an endpoint's lid=). A decimal with a
// leading 0 is refused: infiniband-diags reads it as octal (strtoul base 0, so
// smpquery's 010 is LID 8) and a reader as decimal, and no LID is worth the guess.
func ParseLID(s string) (uint16, error) {
	bad := &ParseError{What: "LID", Input: s, Problem: "not a unicast LID",
		Accepted: fmt.Sprintf("decimal 1-%d or hex 0x1-0x%x", MaxUnicastLID, MaxUnicastLID)}
	var n uint64
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		v, problem := parseHex(s, 0xffff)
		if problem != "" {
			bad.Problem = problem
			return 0, bad
		}
		n = v
	case len(s) > 1 && s[0] == '0' && strings.Trim(s, "0123456789") == "":
		bad.Problem = "a leading 0 is octal to infiniband-diags (010 is 8) and decimal to a reader: write the LID without it"
		return 0, bad
	default:
		v, ok := parseDecimal(s, 0xffff)
		if !ok {
			bad.Problem = "not a decimal or 0x-hex number"
			return 0, bad
		}
		n = uint64(v)
	}
	if n == 0 || n > MaxUnicastLID {
		bad.Problem = "outside the unicast range (0 is unassigned, 0xc000 and up are multicast/permissive)"
		return 0, bad
	}
	return uint16(n), nil
}

// parseDecimal reads plain decimal digits (no sign, no spaces) up to max.
func parseDecimal(s string, max int) (int, bool) {
	if len(s) > 12 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	return int(n), err == nil && n <= uint64(max)
}

// allHex says whether every byte of s is a hex digit, either case.
func allHex(s string) bool { return strings.Trim(s, "0123456789abcdefABCDEF") == "" }

// String prints the canonical form of the endpoint; ParseEndpoint reads it back to the
// same spec. Options come in a fixed order: port, pkey, index, qp, qkey, wr_qkey.
func (s EndpointSpec) String() string {
	var b strings.Builder
	opt := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	switch s.Kind {
	case EndpointPKey:
		if s.PKey != nil {
			b.WriteString(s.PKey.String())
		}
	case EndpointPort:
		b.WriteString(s.Device)
		b.WriteByte('/')
		b.WriteString(strconv.Itoa(s.Port))
	case EndpointGUID:
		b.WriteString(s.GUID.String())
	case EndpointLID:
		opt("lid", strconv.Itoa(int(s.LID)))
	case EndpointNode:
		opt("node", s.Node)
	}
	if s.PortNum != nil {
		opt("port", strconv.Itoa(*s.PortNum))
	}
	if s.PKey != nil && s.Kind != EndpointPKey {
		opt("pkey", s.PKey.String())
	}
	if s.Index != nil {
		opt("index", strconv.Itoa(*s.Index))
	}
	if s.QPType != QPAny {
		opt("qp", s.QPType.String())
	}
	if s.QKey != nil {
		opt("qkey", s.QKey.String())
	}
	if s.WRQKey != nil {
		opt("wr_qkey", s.WRQKey.String())
	}
	return b.String()
}
