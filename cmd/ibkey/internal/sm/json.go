package sm

import (
	"time"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/smlog"
)

// endJSONv is one end of an event (schemas/sm-log.schema.json $defs/end): what is not
// known is null.
type endJSONv struct {
	LID       *uint16     `json:"lid"`
	PortGUID  *check.GUID `json:"port_guid"`
	NodeGUID  *check.GUID `json:"node_guid"`
	NodeDesc  *string     `json:"node_desc"`
	Port      *int        `json:"port"`
	QP        *uint32     `json:"qp"`
	QPBits    *int        `json:"qp_bits"`
	GID       *string     `json:"gid"`
	NamesFrom *string     `json:"names_from"`
}

func endJSON(e *smlog.End) *endJSONv {
	if e == nil {
		return nil
	}
	j := endJSONv{LID: nonZero(e.LID), PortGUID: nonZero(e.GUID), NodeGUID: nonZero(e.NodeGUID),
		NodeDesc: nonZero(e.NodeDesc), GID: nonZero(e.GID), NamesFrom: nonZero(e.From)}
	if e.Num >= 0 {
		j.Port = &e.Num
	}
	if e.QPKnown {
		qp, bits := e.QP, 24
		if e.QPLow12 {
			bits = 12
		}
		j.QP, j.QPBits = &qp, &bits
	}
	return &j
}

// eventFields are the members events and groups share.
type eventFields struct {
	Kind       string    `json:"kind"`
	Severity   string    `json:"severity"`
	Trap       *int      `json:"trap"`
	Code       *string   `json:"code"`
	KeyType    *string   `json:"key_type"`
	PKey       *string   `json:"pkey"`
	QKey       *string   `json:"qkey"`
	MKey       *string   `json:"mkey"`
	SMKey      *string   `json:"sm_key"`
	Key        *string   `json:"key"`
	Membership *string   `json:"membership"`
	SL         *int      `json:"sl"`
	From       *endJSONv `json:"from"`
	To         *endJSONv `json:"to"`
	Reporter   *endJSONv `json:"reporter"`
	Switch     *endJSONv `json:"switch"`
	MGID       *string   `json:"mgid"`
	QoSLevel   *string   `json:"qos_level"`
	ConfLine   *int      `json:"conf_line"`
	Fallback   bool      `json:"fallback"`
	Detail     *string   `json:"detail"`
	Rule       string    `json:"rule"`
	Fix        string    `json:"fix"`
	FixAt      *string   `json:"fix_at"`
	Notes      []string  `json:"notes"`
}

// nonZero is v, or nil (JSON null) when it is its type's zero: not known.
func nonZero[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

func fields(ev *smlog.Event, ex *smlog.Explanation) eventFields {
	f := eventFields{Kind: string(ev.Kind), Severity: smlog.SeverityOf(ev.Kind).String(), Code: nonZero(ev.Code),
		KeyType: nonZero(string(ev.KeyType)), From: endJSON(ex.From), To: endJSON(ex.To), Reporter: endJSON(ex.Reporter),
		Switch: endJSON(ex.Switch), MGID: nonZero(ev.MGID), QoSLevel: nonZero(ev.QoSLevel), Fallback: ev.Fallback,
		Detail: nonZero(ev.Detail), Rule: ex.Rule, Fix: ex.Fix, FixAt: nonZero(ex.FixAt), Notes: ex.Notes, Trap: nonZero(ev.Trap)}
	if f.Notes == nil {
		f.Notes = []string{}
	}
	if ev.SL >= 0 {
		f.SL = new(ev.SL)
	}
	if ev.ConfLine > 0 {
		f.ConfLine = new(ev.ConfLine)
	}
	key := nonZero(keyCell(ev))
	switch ev.KeyType {
	case smlog.KeyPKey:
		k := check.PKey(ev.Key)
		f.PKey, f.Key, f.Membership = key, nonZero(k.Partition().String()), nonZero(k.Membership().String())
	case smlog.KeyQKey:
		f.QKey = key
	case smlog.KeyMKey:
		f.MKey = key
	case smlog.KeySMKey:
		f.SMKey = key
	}
	return f
}

type eventJSONv struct {
	eventFields
	LoggedAt string   `json:"logged_at"`
	Line     int64    `json:"line"`
	Level    string   `json:"level"`
	LogLines []string `json:"log_lines"`
}

func eventJSON(ev *smlog.Event, ex *smlog.Explanation) eventJSONv {
	return eventJSONv{eventFields: fields(ev, ex), LoggedAt: ev.Time.Format(time.RFC3339Nano), Line: ev.Line, Level: ev.Level.String(), LogLines: ev.Lines}
}

type groupJSONv struct {
	eventFields
	Count     int      `json:"count"`
	FirstAt   string   `json:"first_at"`
	LastAt    string   `json:"last_at"`
	FirstLine int64    `json:"first_line"`
	LastLine  int64    `json:"last_line"`
	Keys      []string `json:"keys"`
}

func groupJSON(g *smlog.Group) groupJSONv {
	j := groupJSONv{eventFields: fields(g.First, g.Explanation), Count: g.Count, FirstAt: g.FirstAt.Format(time.RFC3339Nano),
		LastAt: g.LastAt.Format(time.RFC3339Nano), FirstLine: g.First.Line, LastLine: g.LastLine, Keys: []string{}}
	for _, k := range g.Keys {
		j.Keys = append(j.Keys, check.PKey(k).Partition().String())
	}
	return j
}
