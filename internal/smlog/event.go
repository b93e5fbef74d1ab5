package smlog

import (
	"time"

	"github.com/ibkey/ibkey/internal/check"
)

// Kind is what happened: one per kind of partition or key event OpenSM logs.
type Kind string

// The kinds of event, with what OpenSM logs for each (OpenSM 3.3.23; docs/sm.md lists
// every message and where it comes from).
const (
	// KindBadPKey: trap 257, a port dropped a packet whose P_Key it does not accept.
	KindBadPKey Kind = "bad-pkey"
	// KindBadQKey: trap 258, a port dropped a datagram whose Q_Key its QP does not
	// accept.
	KindBadQKey Kind = "bad-qkey"
	// KindBadSwitchPKey: trap 259, a switch's external port dropped a packet whose
	// P_Key it does not pass (partition enforcement).
	KindBadSwitchPKey Kind = "bad-switch-pkey"
	// KindBadMKey: trap 256, a port refused an SMP with the wrong M_Key.
	KindBadMKey Kind = "bad-mkey"
	// KindPathRefused: the SA refused a PathRecord (or MultiPathRecord) for a
	// partition: ERR 1F1A, 1F1B, 1F1D, 1F1E, 4518, 4519, 451C, 451D.
	KindPathRefused Kind = "path-refused"
	// KindPathNoPartition: the SA answered a path with a P_Key for which OpenSM has no
	// partition (ERR 1F1C, 451A): the tables hold a key the configuration lacks.
	KindPathNoPartition Kind = "path-no-partition"
	// KindPathNoRoute: the SA refused a PathRecord (or MultiPathRecord) for want of
	// a route, not for a partition: a switch's forwarding table has no port for the
	// destination, the route leaves by a port with no link, ends at another port or
	// loops (ERR 1F02, 1F03, 1F05, 1F06, 1F07, 1F25; 4514, 4515, 4505, 4503, 4516,
	// 4520).
	KindPathNoRoute Kind = "path-no-route"
	// KindJoinRefused: the SA refused a multicast join for a partition reason: ERR
	// 1B14 (the port is not in the group's partition), 1B31, 1B32 (the request's
	// P_Key), 1B30 (its Q_Key), 1B11 for an IPoIB broadcast group (it does not exist,
	// and the join cannot create it), and the verbose "Port and requester don't share
	// PKey".
	KindJoinRefused Kind = "join-refused"
	// KindUntrusted: the SA refused a request that needs its SM_Key: ERR 4608
	// (P_KeyTableRecord), 430B (InformInfo for security traps).
	KindUntrusted Kind = "untrusted-request"
	// KindBadSMKey: the SA dropped a request whose SM_Key is neither 0 nor its own
	// (ERR 1A04): the asker gets no answer at all.
	KindBadSMKey Kind = "bad-sm-key"
	// KindSMKeyMismatch: another SM's SMInfo carries a different SM_Key (ERR 2F18).
	KindSMKeyMismatch Kind = "sm-key-mismatch"
	// KindConfigRejected: partitions.conf could not be parsed ("PARSE ERROR", then
	// "Partition configuration in error; retrying with default config"): OpenSM
	// applies Default=0x7fff, ipoib : ALL=full, and every partition of the file is gone.
	KindConfigRejected Kind = "partitions-rejected"
	// KindConfigMissing: partitions.conf is not there (verbose "is not accessible"):
	// OpenSM applies the same default.
	KindConfigMissing Kind = "partitions-missing"
	// KindConfigWarning: a line of partitions.conf OpenSM read but did not apply as
	// written: verbose PARSE WARN, a duplicated partition, an mgid that is not
	// multicast, an IP group whose P_Key, rate or MTU does not match its partition.
	KindConfigWarning Kind = "partitions-warning"
	// KindQoSRejected: OpenSM could not use its QoS policy file (ERR AC05 or AC10 to
	// AC13, then AC03 or AC04; AC01, the file not opened): it runs without a policy,
	// so no qos-level limits a path to its P_Keys (osm_qos_parser_y.y
	// osm_qos_parse_policy_file, osm_sa_path_record.c pr_rcv_get_path_parms).
	KindQoSRejected Kind = "qos-policy-rejected"
	// KindTableFull: a port is in more partitions than its P_Key table holds (ERR
	// 0512): OpenSM leaves the rest out.
	KindTableFull Kind = "pkey-table-full"
	// KindEnforcementOff: a switch port facing a CA cannot hold the CA's partitions
	// (ERR 0507): OpenSM switches its partition enforcement off.
	KindEnforcementOff Kind = "enforcement-off"
	// KindProgramFailed: OpenSM failed to program a P_Key table or the enforcement
	// bits (ERR 0502, 0503, 0505, 0506, 0508, 0509, 0510, 0511), or to create a
	// partition or its multicast group.
	KindProgramFailed Kind = "pkey-program-failed"
	// KindTableShrunk: a port's P_Key table is smaller than OpenSM had planned for
	// ("Max number of blocks reduced").
	KindTableShrunk Kind = "pkey-table-shrunk"
	// KindNoticeNotForwarded: OpenSM did not forward a notice to a subscriber outside
	// the notice's partition ("do not share same pkey"), or deleted a subscription
	// for it ("Need to remove this informInfo"), or a subscriber did not answer a
	// notice forwarded to it (ERR 1A06: gone, or its port no longer holds the P_Key
	// it subscribed with).
	KindNoticeNotForwarded Kind = "notice-not-forwarded"
	// KindGetTimeout: a Get OpenSM sent got no answer (ERR 3120, osm_sm_mad_ctrl.c
	// sm_mad_ctrl_send_err_cb), which OpenSM says may be a wrong M_Key.
	KindGetTimeout Kind = "get-timeout"
)

// Kinds lists every kind, for documentation, completion and the exporter.
var Kinds = []Kind{KindBadPKey, KindBadQKey, KindBadSwitchPKey, KindBadMKey, KindPathRefused, KindPathNoPartition,
	KindPathNoRoute, KindJoinRefused, KindUntrusted, KindBadSMKey, KindSMKeyMismatch, KindConfigRejected, KindConfigMissing,
	KindConfigWarning, KindQoSRejected, KindTableFull, KindEnforcementOff, KindProgramFailed, KindTableShrunk, KindNoticeNotForwarded, KindGetTimeout}

// KeyType says what Event.Key is.
type KeyType string

// Key types.
const (
	KeyPKey  KeyType = "pkey"
	KeyQKey  KeyType = "qkey"
	KeyMKey  KeyType = "mkey"
	KeySMKey KeyType = "sm_key"
)

// Port is one port an event names, with what the log said of it. Zero values are
// not known.
type Port struct {
	LID  uint16
	GUID check.GUID // the port GUID (a switch's for its ports)
	// NodeGUID is set where the log names a node, not a port (ERR 0512, 0507).
	NodeGUID check.GUID
	NodeDesc string // OpenSM's print_desc, as logged
	Num      int    // port number; -1 when not known
	// QP is a queue pair number; QPKnown says whether there is one, QPLow12 that the
	// log gave only its low 12 bits (the error-level trap line, osm_trap_rcv.c
	// log_trap_info prints QP1 & 0xfff) and no line had it whole.
	QP      uint32
	QPKnown bool
	QPLow12 bool
	GID     string // "::" when the trap carried none
}

func unknownPort() Port { return Port{Num: -1} }

// Event is one partition or key event, merged from every log line that says it.
type Event struct {
	Kind Kind
	// Time is when OpenSM logged the event's first line; the year is inferred (the
	// log has none).
	Time time.Time
	// Line is the line number of the event's first line in the log read (1-based).
	Line int64
	// Code is OpenSM's ERR code ("1F1A"), "" when the message has none.
	Code string
	// Trap is the trap number (256-259), 0 for other events.
	Trap int
	// Key is the key involved, KeyType what it is ("" when the event names none).
	Key     uint64
	KeyType KeyType
	// SL is the packet's service level; -1 when not known.
	SL int
	// From and To are the two ends: the packet's source and destination (traps),
	// the path's (SA refusals); a single port an event is about is From.
	From, To Port
	// Reporter is the port that sent the trap (its LID and GUID); for trap 259 the
	// switch, with SwitchPort the external port that dropped the packet.
	Reporter   Port
	SwitchPort int
	// MGID is the multicast group (joins, IP groups), "" when none.
	MGID string
	// QoSLevel names the QoS level of a QoS refusal (ERR 1F1D, 1F1E).
	QoSLevel string
	// ConfLine is the partitions.conf line a parse message names (0 none); Fallback
	// says OpenSM then applied its default configuration.
	ConfLine int
	Fallback bool
	// Detail is the message's own words where they say more than the fields (the
	// parse error's reason, a QoS level), as logged.
	Detail string
	// Level is the highest log level among the event's lines.
	Level Level
	// Lines are the log lines merged into the event, as logged.
	Lines []string
}

// SeverityOf says how bad an event of kind k is: an error is a partition or key
// problem that breaks or refuses communication, or leaves the fabric unlike its
// configuration; a warning is worth knowing (a group skipped, a notice not forwarded,
// a table smaller than planned, a path refused for routing, not for a partition: the
// command's exit 1 says the log has partition or key errors, and a reconverging
// fabric logs routing refusals until its next sweep).
func SeverityOf(k Kind) check.Severity {
	switch k {
	case KindConfigWarning, KindTableShrunk, KindNoticeNotForwarded, KindPathNoPartition, KindPathNoRoute:
		return check.SeverityWarning
	}
	return check.SeverityError
}
