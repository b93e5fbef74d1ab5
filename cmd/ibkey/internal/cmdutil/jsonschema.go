package cmdutil

import "fmt"

// The JSON vocabulary of ibkey's documents (-o json). Every command follows it, so a
// script reads the same thing under the same name from every command; the JSON
// Schemas in the repository's schemas/ directory say it per command, and the tests
// validate every command's JSON output against them.
//
//   - schema_version: a number, the first member of every document (SchemaVersion).
//     It changes when a member is removed or renamed or changes meaning; members may
//     be added within a version (the schemas say which are required).
//   - Names are snake_case. A member that names a thing by reference says which:
//     node_guid, port_guid, system_image_guid, sm_guid; never a bare "guid" or
//     "device" for a node.
//   - GUIDs are strings, "0x" and 16 lower-case hex digits.
//   - type is the node type, always "ca", "switch" or "router" (check.NodeType) for a
//     fabric node; a local RDMA device may also be "rnic", "usnic", "usnic_udp" or
//     "unspecified" (devices). Never "CA" or a node_type member.
//   - device is a local RDMA device name (mlx5_0). A port read over the fabric is
//     named by its node's node_desc and node_guid; device repeats node_desc there,
//     so a script reads one member for both.
//   - port is always a port number (0 is a switch's management port), never a
//     boolean; a member saying whether something is a port is is_<what>.
//   - pkey is a 16-bit P_Key table value ("0x8001"); key is a 15-bit partition key
//     ("0x0001"); qkey is a Q_Key ("0x80010000"); membership is "full" or "limited"
//     ("both" where a port holds both entries of a key).
//   - node_desc is a node's NodeDescription (IBA 14.2.5.2), or its --node-name-map
//     name, passed through textsafe.String (terminal controls written as \xNN escapes
//     and a backslash as \\, so a script printing it is safe too, and the escapes are
//     never ambiguous). The fabric file (fabric discover -o json) holds the same text,
//     which --fabric-file reads back unchanged, and carries
//     "format": "ibkey-fabric" and "version" (2; version 1 files, whose nodes said
//     "description", are still read) instead of schema_version.
//   - lid is a number; null where the port has none (a switch's external port).
//   - Something not read is null, never 0, "" or [] (an empty list means "read, and
//     empty"); where the reason is known it is in <member>_error (pkeys_error) or
//     error. valid_pkeys of a table not read is null, not 0.
//   - severity is "error" or "warning"; rule is a stable kebab-case identifier;
//     message says what is wrong and action what to do about it.
//   - Times are RFC 3339 strings named *_at (swept_at); durations are numbers whose
//     name ends in their unit (duration_ms, interval_s).
//   - A command's schema is schemas/<command path joined by ->.schema.json
//     (fabric-pkeys.schema.json; a mode with another shape gets its own:
//     fabric-pkeys-key.schema.json); its tests validate every JSON output through
//     cmdutil/jsonschematest (Stdout in the test runner, Goldens over testdata).
//   - A command whose answer asked about something it could not read or check says
//     what in incomplete: a list of {"kind","message"} (Incomplete), present
//     whenever something was not: always on exit 4, on exit 1 when the definite no
//     was found in a partial read, never on exit 0 (devices, pkeys, can-talk, job,
//     fabric pkeys, fabric check, fabric diff). A stream (watch -o json, a document
//     a line) says it in-band, since its exit comes only when it ends: each watch
//     counters sample names what of it was not read, and watch pkeys starts with one
//     line naming what it does not watch. The fabric file (fabric
//     discover -o json) keeps its own "incomplete" string (why the sweep stopped) and
//     records every gap where it is (errors, pkeys_error, unreachable).
//   - File positions are "FILE:LINE:COLUMN" strings named at / defined_at, or file,
//     line and column members.

// SchemaVersionNumber is the schema_version every document carries.
const SchemaVersionNumber = 1

// SchemaVersion is the schema_version member of a document: a field of this type
// (`json:"schema_version"`) always writes SchemaVersionNumber, so a document cannot
// forget to set it.
type SchemaVersion struct{}

// MarshalJSON writes SchemaVersionNumber.
func (SchemaVersion) MarshalJSON() ([]byte, error) { return []byte{'0' + SchemaVersionNumber}, nil }

// UnmarshalJSON accepts SchemaVersionNumber only: a reader of this version does not
// guess at another.
func (SchemaVersion) UnmarshalJSON(b []byte) error {
	if string(b) != string([]byte{'0' + SchemaVersionNumber}) {
		return fmt.Errorf("schema_version %s, this ibkey reads %d", b, SchemaVersionNumber)
	}
	return nil
}

// Incomplete is one thing a command's answer asked about and could not read or check:
// the members of a document's "incomplete" list, present whenever there is one (on
// exit 4, and on exit 1 beside a definite no; never on exit 0), so a script tells a
// partial read from a complete one, and an entry not read from a verdict that needs a
// router, without parsing stderr.
type Incomplete struct {
	// Kind is one of the Incomplete* kinds.
	Kind string `json:"kind"`
	// Message says what was not read or checked, as stderr does.
	Message string `json:"message"`
}

// The kinds of Incomplete.
const (
	// IncompleteUnreadDevice: a device or port of the host could not be read; the
	// others are shown.
	IncompleteUnreadDevice = "unread-device"
	// IncompleteUnreadEntries: the answer depends on P_Key table entries that could
	// not be read.
	IncompleteUnreadEntries = "unread-entries"
	// IncompleteUnreadTable: a port's P_Key table was not read at all (can-talk:
	// also a switch port facing an end that lacks the key and whose enforcement bits
	// were not read, check.NotCheckedSwitchEnforcement).
	IncompleteUnreadTable = "unread-table"
	// IncompleteDifferentSubnets: the ports are on different subnets; only a router,
	// which is not checked, could join them.
	IncompleteDifferentSubnets = "different-subnets"
	// IncompleteNotChecked: a setting or rule that is not read or not interpreted
	// (job: a library's setting whose effect is not known here).
	IncompleteNotChecked = "not-checked"
	// IncompletePartialSweep: parts of the subnet were not swept (the sweep stopped
	// early, or links whose far end did not answer: the nodes behind them are
	// missing).
	IncompletePartialSweep = "partial-sweep"
	// IncompleteUnreadNode: a swept node's attributes or a port's PortInfo could not
	// be read, or a fabric address (--lid, one of several) did not answer; the rest
	// is shown.
	IncompleteUnreadNode = "unread-node"
	// IncompleteUnreadCounter: a counter a watch was asked for could not be read in
	// that sample (a read error), or the port has it and the sources used cannot read
	// it (n/a: sysfs has no PortInfo counters, PortCounters need a LID); the others
	// are shown.
	IncompleteUnreadCounter = "unread-counter"
)

// List is s for a JSON list member: [] when s is nil, never null (an empty list means
// "read, and empty"; null means not read).
func List[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
