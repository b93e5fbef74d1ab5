package partitions

import (
	"fmt"
	"io"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/jsondoc"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// The document of `partitions show -o json` (schema schemas/partitions-show.schema.json):
// {"schema_version", "file", "rejected", "uncertain"?, "applied", "previous"?,
// "previous_files"?, "restarted"?,
// "allow_both", "sm_guid", "table_size", "partitions": [partitionJSON],
// "ports": [portTableJSON]}.

type memberJSON struct {
	Member     string `json:"member"`
	Kind       string `json:"kind"`
	Rule       string `json:"rule"`
	Membership string `json:"membership"`
	// Written is the membership as written when OpenSM applies another: "both"
	// without allow_both_pkeys (-W) gives a full entry only.
	Written string `json:"written_membership,omitempty"`
	At      string `json:"at"`
}

type groupJSON struct {
	MGID      string `json:"mgid"`
	QKey      string `json:"qkey"`
	MTU       int    `json:"mtu"`
	Rate      int    `json:"rate"`
	SL        int    `json:"sl"`
	Scope     int    `json:"scope"`
	Broadcast bool   `json:"broadcast"`
	At        string `json:"at"`
}

type partitionJSON struct {
	Key       string       `json:"key"`
	Name      string       `json:"name"`
	Flags     []string     `json:"flags"`
	IPoIB     bool         `json:"ipoib"`
	DefinedAt []string     `json:"defined_at"`
	Members   []memberJSON `json:"members"`
	Groups    []groupJSON  `json:"groups"`
}

type tableEntryJSON struct {
	Index      int     `json:"index"`
	PKey       string  `json:"pkey"`
	Key        string  `json:"key"`
	Membership *string `json:"membership"`
	Valid      bool    `json:"valid"`
	Partition  *string `json:"partition"`
	DecidedBy  *string `json:"decided_by"`
	At         *string `json:"at"`
	Hole       bool    `json:"hole,omitempty"`
	Before     *string `json:"before,omitempty"`
	Kept       *bool   `json:"kept,omitempty"`
}

type droppedJSON struct {
	PKey       string `json:"pkey"`
	Membership string `json:"membership"`
	Partition  string `json:"partition"`
	DecidedBy  string `json:"decided_by"`
	At         string `json:"at"`
}

type portTableJSON struct {
	PortGUID  string           `json:"port_guid"`
	NodeDesc  *string          `json:"node_desc,omitempty"` // --fabric-file, a port it holds
	Type      string           `json:"type"`
	InFile    bool             `json:"in_file"`
	SM        bool             `json:"sm"`
	TableSize int              `json:"table_size"`
	Entries   []tableEntryJSON `json:"entries"`
	Dropped   []droppedJSON    `json:"dropped"`
	// AsRouter: the port's type was not given (--router, --fabric-file) and it is
	// shown as a CA port; as a router port it would hold these keys instead.
	AsRouter []string `json:"as_router,omitempty"`
}

// writeJSON writes the document. The ports are encoded one at a time, each table built
// as it is written (jsondoc): 100,000 ports of 11 entries are about 400 MB of JSON,
// which encoding/json would hold whole, twice.
func (s *show) writeJSON(out io.Writer, incomplete []cmdutil.Incomplete) error {
	p := s.p
	d := jsondoc.New(out)
	d.Field("schema_version", cmdutil.SchemaVersion{})
	d.Field("file", p.Config.File)
	d.Field("rejected", p.Config.Rejected)
	if p.Config.Uncertain != "" {
		d.Field("uncertain", p.Config.Uncertain)
	}
	if p.Config.Rejected {
		d.Field("applied", "opensm_default")
	} else {
		d.Field("applied", "file")
	}
	if len(s.history) > 0 {
		d.Field("previous", s.history[len(s.history)-1])
		d.Field("previous_files", s.history)
		d.Field("restarted", s.restarted)
	}
	d.Field("allow_both", p.Options.AllowBoth)
	d.Field("qos", p.Options.QoS)
	if p.Options.SMGUID != 0 {
		d.Field("sm_guid", p.Options.SMGUID)
	} else {
		d.Field("sm_guid", nil)
	}
	d.Field("table_size", p.Options.TableSize)
	parts := keyOrder(s.applied.Partitions)
	d.Array("partitions", len(parts), func(i int) any { return s.partitionJSON(parts[i]) })
	d.Array("ports", len(s.model.Ports), func(i int) any {
		t := p.PortTable(s.model, s.prevModel, s.model.Ports[i])
		return s.portJSON(&t)
	})
	if len(incomplete) > 0 {
		d.Field("incomplete", incomplete) // what the exit 4 rests on (stderr says it too)
	}
	return d.Close()
}

func (s *show) partitionJSON(part *partconf.Partition) partitionJSON {
	p := s.p
	pj := partitionJSON{Key: part.Key.String(), Name: part.Name, Flags: partitionFlags(part), IPoIB: part.IPoIB,
		DefinedAt: []string{}, Members: []memberJSON{}, Groups: []groupJSON{}}
	for _, d := range part.Defs {
		pj.DefinedAt = append(pj.DefinedAt, p.Config.PosText(d.Pos))
	}
	for mi := range part.Members {
		m := &part.Members[mi]
		mj := memberJSON{Member: m.Text(), Kind: m.Kind.String(), Rule: memberRule(m, p.Options.SMGUID),
			Membership: m.Membership.String(), At: p.Config.PosText(m.Pos())}
		if eff := m.Membership.Effective(p.Options.AllowBoth); eff != m.Membership {
			mj.Membership, mj.Written = eff.String(), mj.Membership
		}
		pj.Members = append(pj.Members, mj)
	}
	for _, g := range part.Groups {
		pj.Groups = append(pj.Groups, groupJSON{MGID: g.MGID.String(), QKey: fmt.Sprintf("0x%08x", g.QKey), MTU: int(g.MTU), Rate: int(g.Rate),
			SL: int(g.SL), Scope: int(g.Scope), Broadcast: g.Broadcast, At: p.Config.PosText(g.Pos)})
	}
	return pj
}

func (s *show) portJSON(t *query.PortTable) portTableJSON {
	p := s.p
	pj := portTableJSON{PortGUID: t.Port.GUID.String(), Type: string(t.Port.Type), InFile: t.InFile, SM: t.SM,
		TableSize: t.Size, Entries: make([]tableEntryJSON, 0, len(t.Slots)), Dropped: []droppedJSON{}}
	if name, ok := s.names[t.Port.GUID]; ok {
		pj.NodeDesc = &name
	}
	if r, ok := s.unknownType[t.Port.GUID]; ok {
		pj.AsRouter = stringsOf(r)
	}
	for _, sl := range t.Slots {
		ej := tableEntryJSON{Index: sl.Index, PKey: "0x0000", Key: "0x0000"}
		if e := sl.Entry; e != nil {
			ej = tableEntryJSON{Index: sl.Index, PKey: e.PKey.String(), Key: e.PKey.Partition().String(), Membership: new(e.PKey.Membership().String()), Valid: true,
				Partition: &e.Partition.Name, DecidedBy: new(e.DecidedBy.Text()), At: new(p.Config.PosText(e.DecidedBy.Pos()))}
		}
		if sl.Before.Valid() {
			ej.Before, ej.Kept = new(sl.Before.String()), new(sl.Kept)
		}
		ej.Hole = sl.Hole()
		pj.Entries = append(pj.Entries, ej)
	}
	for _, e := range t.Dropped {
		pj.Dropped = append(pj.Dropped, droppedJSON{e.PKey.String(), e.PKey.Membership().String(), e.Partition.Name, e.DecidedBy.Text(), p.Config.PosText(e.DecidedBy.Pos())})
	}
	return pj
}
