// Package devices is `ibkey devices`: one row per RDMA port, from sysfs or over MADs.
package devices

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"

	"github.com/ibkey/ibkey/internal/ibverbs"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// DevicesOptions holds `ibkey devices`'s flags and dependencies.
type DevicesOptions struct {
	cmdutil.Deps
	Host func() *query.Host
	// MAD holds the transport flags (AddMADFlags).
	MAD    *cmdutil.MADFlags
	Addr   cmdutil.AddressFlags
	Fabric []query.FabricSelector
}

// NewCmdDevices builds the command; runF, when not nil, runs instead of runDevices (tests of flag parsing).
func NewCmdDevices(f *cmdutil.Factory, runF func(*DevicesOptions) error) *cobra.Command {
	o := &DevicesOptions{Host: f.Host}
	c := &cobra.Command{
		Use:   "devices",
		Short: "List RDMA ports: link layer, state, LID, rate, P_Key table use",
		Long: `List every port of every RDMA device: link layer, state, physical state, LID,
SM LID, rate, valid P_Keys / table size and port GUID (a table shows the rate as
"100G 4X EDR"; plain and JSON as the kernel prints it, "100 Gb/sec (4X EDR)"). A
value the kernel does not provide is shown as n/a (in JSON: null, with the reason
under "missing"). PKEYS is
"none" for a port that has no P_Key table (iWARP) and n/a, with the reason on
stderr, for a table that exists and was not read (a saved tree without pkeys/, a
pkeys/ that cannot be read; exit 4, as pkeys; a DOWN CA port's over the fabric,
which no SMP reaches, is n/a with a note and no gap, as in pkeys and fabric pkeys)
and for entries that could not be read the count is a lower bound, "4+/128"
(a warning says how many were not read). A device that cannot be read (a dangling
class/infiniband link) is named on stderr; the others are listed (exit 4).

JSON (-o json; schemas/devices.schema.json): {"schema_version","demo"?,"via"?,
"ports":[{"device","port","type","link_layer","state","phys_state","lid","sm_lid",
"rate","port_guid","table_size","valid_pkeys","unreadable_pkeys"?,"missing"?}],
"incomplete"?:[{"kind","message"}]} (incomplete: the devices, tables and entries
not read, exit 4);
type is "ca", "switch", "router" (or "rnic", ...); lid, sm_lid, table_size and
valid_pkeys are numbers, port_guid a "0x%016x" string; a value not read is null
with the reason under "missing".

Over the fabric (by SMPs; needs umad access or --ibsim): --lid LIDS, --dr PATH or
--guid GUID (a port or node GUID, found by a sweep, as in pkeys) lists every port
of the node at that address (--port P: one port), from NodeInfo,
NodeDescription, PortInfo and the P_Key table length. The device is the node
description. A switch's external ports have no LID, SM LID or GUID of their own
(they are port 0's, the switch's): empty ("-" in plain, null in JSON with the
reason), as in the fabric tables; a CA's ports other than the one the address
reaches are read through their own LIDs. JSON adds "node_desc", "node_guid" and
"address" per port (device repeats node_desc) and "via" at the top level. Of several addresses (--lid 1-40),
one that does not answer is not read: named on stderr and in incomplete
(unread-node), the others listed, exit 4; none answering is exit 3.`,
		Example:           "  ibkey devices\n  ibkey --demo devices -o json\n  ibkey devices --lid 2\n  ibkey --ibsim devices --dr 0,1",
		Args:              cmdutil.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: cmdutil.RunE(f, o, &o.Deps, func(_ *cobra.Command, args []string) error {
			fab, err := o.Addr.Selectors(args)
			if err != nil {
				return err
			}
			for i := range fab {
				if !fab[i].HasPort {
					fab[i].AllPorts = true
				}
			}
			o.Fabric = fab
			return nil
		}, runF, runDevices),
	}
	o.MAD = cmdutil.AddMADFlags(c, f)
	o.MAD.NeedsAddress(&o.Addr)
	o.Addr.RegisterFor(c, f)
	return c
}

// devicePortJSON is one row of `devices -o json` (the fields its help and man page list).
type devicePortJSON struct {
	Device     string  `json:"device"`
	Port       int     `json:"port"`
	Type       *string `json:"type"`
	LinkLayer  *string `json:"link_layer"`
	State      string  `json:"state"`
	PhysState  *string `json:"phys_state"`
	LID        *uint16 `json:"lid"`
	SMLID      *uint16 `json:"sm_lid"`
	Rate       *string `json:"rate"`
	PortGUID   *string `json:"port_guid"`
	TableSize  *int    `json:"table_size"`
	ValidPKeys *int    `json:"valid_pkeys"`
	// UnreadPKeys counts entries that could not be read: valid_pkeys may be short by
	// as many (omitted when every entry was read).
	UnreadPKeys int               `json:"unreadable_pkeys,omitempty"`
	Missing     map[string]string `json:"missing,omitempty"`
	// Over the fabric only.
	NodeDesc *string `json:"node_desc,omitempty"`
	NodeGUID string  `json:"node_guid,omitempty"`
	Address  string  `json:"address,omitempty"`
}

func runDevices(o *DevicesOptions) error {
	if o.Fabric != nil {
		return cmdutil.RenderFabricPorts(o.Ctx, o.MAD, o.Notices, &o.Addr, o.Fabric, func(views []*query.PortView, src cmdutil.Source, err error) error {
			return renderDevices(o, views, src, err, "")
		})
	}
	host := o.Host()
	views, err := host.Load(query.Selector{}, query.LoadOptions{Tables: true})
	// One device that cannot be read does not hide the others: they are shown, the
	// one not read is named on stderr (and in the JSON's incomplete), and the exit is 4.
	return renderDevices(o, views, cmdutil.Source{Demo: host.Label != ""}, err, host.Label)
}

// renderDevices shows views, read with err (a partial read), and what was not read
// (cmdutil.HostNotRead: the devices on stderr first, then the host's label, then each table and
// entries not read beside its row's n/a or count); exit 4 when anything was not.
func renderDevices(o *DevicesOptions, views []*query.PortView, src cmdutil.Source, err error, label string) error {
	incomplete, after, err := cmdutil.HostNotRead(o.Notices, views, err)
	if err != nil {
		return err
	}
	o.Notices.Label(label)
	src.Incomplete = incomplete
	rows := make([]devicePortJSON, len(views))
	for i, v := range views {
		rows[i] = devicePortRow(v)
		if n := rows[i].UnreadPKeys; n > 0 {
			o.Notices.Warn(fmt.Sprintf("%s: %s could not be read: its count of valid P_Keys may be short by as many (ibkey pkeys %s shows which)",
				v.Ref(), textsafe.Plural(n, "P_Key table entry", "P_Key table entries"), v.Ref()))
		}
		if why := v.TableNotRead(); why != "" && v.DownTableNotRead() {
			// No gap (query.PortView.DownTableNotRead): a note, no exit 4.
			o.Notices.Note(fmt.Sprintf("%s: PKEYS n/a: %s; a DOWN port's table is defined only once it is ARMED or ACTIVE, and its host's sysfs shows what the device holds", v.Ref(), why))
		} else if why != "" {
			o.Notices.Warn(fmt.Sprintf("%s: PKEYS n/a: %s", v.Ref(), why)) // many alike are summarised (Notices)
		}
	}
	// Rows with entries or a table not read are shown as read; the exit says so.
	return cmp.Or(writeDevices(o, rows, views, src), after)
}

func writeDevices(o *DevicesOptions, rows []devicePortJSON, views []*query.PortView, src cmdutil.Source) error {
	if o.Format == cmdutil.FormatJSON {
		return cmdutil.WriteJSON(o.IO.Out, struct {
			Schema     cmdutil.SchemaVersion `json:"schema_version"`
			Demo       bool                  `json:"demo,omitempty"`
			Via        string                `json:"via,omitempty"`
			Ports      []devicePortJSON      `json:"ports"`
			Incomplete []cmdutil.Incomplete  `json:"incomplete,omitempty"`
		}{cmdutil.SchemaVersion{}, src.Demo, src.Via, rows, src.Incomplete})
	}
	g := cmdutil.Grid{Header: []string{"DEVICE", "PORT", "LINK", "STATE", "PHYS", "LID", "SM_LID", "RATE", "PKEYS", "PORT_GUID"},
		// PORT_GUID last: over the fabric DEVICE is a node description, and a switch's
		// ("MF0;ib-leaf-r12-u40:MQM8790/U1") is one word that cannot wrap.
		Required: []string{"DEVICE", "PORT", "STATE"}, Optional: [][]string{{"PHYS"}, {"SM_LID"}, {"LINK"}, {"PORT_GUID"}},
		NoWrap: []string{"RATE"}}
	for i, r := range rows {
		pkeys := "n/a" // a table not read
		if views[i].TableAbsent {
			pkeys = "none" // no table at all (iWARP)
		}
		if r.TableSize != nil {
			// Not read is not absent: with entries not read the count is a lower
			// bound ("4+/128", query.ValidCount; a warning says how many).
			pkeys = fmt.Sprintf("%s/%d", query.ValidCount(*r.ValidPKeys, r.UnreadPKeys), *r.TableSize)
		}
		rate := str(r.Rate) // plain keeps the kernel's text (scripts read it)
		if p := views[i].Port; o.Format == cmdutil.FormatTable && p != nil && p.Rate.OK() {
			rate = shortRate(p.Rate.Value)
		}
		lid, smLID, guid := num(r.LID), num(r.SMLID), str(r.PortGUID)
		if r.Type != nil && *r.Type == "switch" && r.Port != 0 {
			// IBA 14.2.5.6: a switch's LID, SM LID and port GUID are port 0's (the
			// kernel's sysfs of a switch has only ports/0); its external ports have
			// none: empty, as in the fabric tables, not n/a (not read).
			lid, smLID, guid = "", "", ""
		}
		g.Add(r.Device, strconv.Itoa(r.Port), str(r.LinkLayer), r.State, str(r.PhysState),
			lid, smLID, rate, pkeys, guid)
	}
	return g.Render(o.IO.Out, o.Format)
}

// shortRate is a rate as the table shows it, "100G 4X EDR" for the kernel's "100
// Gb/sec (4X EDR)" (drivers/infiniband/core/sysfs.c rate_show): the same facts in 11
// columns rather than 19, so that a row fits 80 columns on one line. Plain and JSON
// keep the kernel's text.
func shortRate(r ibverbs.Rate) string {
	return strings.TrimSpace(strconv.FormatFloat(r.Gbps, 'f', -1, 64) + "G " + r.Width + " " + r.Speed)
}

// nodeTypeNames are the JSON names of RDMA node type numbers: the kernel's enum
// rdma_node_type (include/rdma/ib_verbs.h, include/uapi/rdma/rdma_netlink.h; sysfs
// node_type prints "1: CA", "7: unspecified" for EFA) and, for 1-3, NodeInfo
// NodeType (IBA 14.2.5.3).
var nodeTypeNames = map[int]string{1: "ca", 2: "switch", 3: "router", 4: "rnic", 5: "usnic", 6: "usnic_udp", 7: "unspecified"}

func devicePortRow(v *query.PortView) devicePortJSON {
	p := v.Port
	r := devicePortJSON{Device: p.Device, Port: p.Num, State: p.State.Name, Missing: map[string]string{}}
	if !v.Device.NodeType.OK() {
		r.Missing["type"] = v.Device.NodeType.Missing
	} else if name, ok := nodeTypeNames[v.Device.NodeType.Value.Num]; ok {
		r.Type = &name
	} else {
		r.Missing["type"] = fmt.Sprintf("node type %d (%s) is not one the kernel defines", v.Device.NodeType.Value.Num, v.Device.NodeType.Value.Name)
	}
	r.LinkLayer = optPtr(p.LinkLayer.Value, p.LinkLayer.Missing, "link_layer", r.Missing)
	r.PhysState = optPtr(p.PhysState.Value.Name, p.PhysState.Missing, "phys_state", r.Missing)
	r.LID = optPtr(p.LID.Value, p.LID.Missing, "lid", r.Missing)
	r.SMLID = optPtr(p.SMLID.Value, p.SMLID.Missing, "sm_lid", r.Missing)
	r.Rate = optPtr(p.Rate.Value.Text, p.Rate.Missing, "rate", r.Missing)
	switch {
	case !p.GID0.OK():
		r.Missing["port_guid"] = p.GID0.Missing
	case !p.LinkLayer.OK():
		r.Missing["port_guid"] = "link_layer not read (" + p.LinkLayer.Missing + "): whether GID 0 holds a port GUID is not known"
	case p.LinkLayer.Value != "InfiniBand":
		r.Missing["port_guid"] = "not an InfiniBand port (GID 0 does not hold a port GUID)"
	default:
		r.PortGUID = new(p.GID0.Value.PortGUID().String())
	}
	if v.Table != nil {
		r.TableSize, r.ValidPKeys, r.UnreadPKeys = new(len(v.Table.Entries)), new(v.Table.Valid), len(v.Table.Unread())
	} else {
		r.Missing["table_size"] = v.TableMissing
	}
	if len(r.Missing) == 0 {
		r.Missing = nil
	}
	if v.Fabric != nil {
		r.NodeDesc, r.NodeGUID, r.Address = new(v.Device.NodeDesc.Value), v.Fabric.NodeGUID.String(), v.Fabric.Address
	}
	return r
}

// optPtr is v, or nil with missing recorded under name when it is absent (an
// ibverbs.Opt's Value and Missing).
func optPtr[T any](v T, missing, name string, into map[string]string) *T {
	if missing != "" {
		into[name] = missing
		return nil
	}
	return &v
}

func str(p *string) string {
	if p == nil {
		return "n/a"
	}
	return *p
}

func num(p *uint16) string {
	if p == nil {
		return "n/a"
	}
	return strconv.Itoa(int(*p))
}
