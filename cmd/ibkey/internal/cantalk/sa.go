package cantalk

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/fabric"
	"github.com/ibkey/ibkey/internal/ibverbs/mad"
	"github.com/ibkey/ibkey/internal/query"
	"github.com/ibkey/ibkey/internal/smlog"
)

// can-talk --sa: the Subnet Manager's own answer. The SA (OpenSM) gives a PathRecord
// in a partition only between two ports that both hold it, one of them a full member,
// as it believes the tables to be (osm_sa_path_record.c pr_rcv_get_path_parms,
// osm_pkey.c osm_physp_share_this_pkey): the P_Key rule can-talk applies, on the SM's
// view. Before that it answers only a requester that shares a partition with both
// ends, and only for ends that share one (pr_rcv_get_port_pair_paths,
// osm_port_share_pkey), and refuses silently otherwise: a refusal then says nothing of
// the two ports.

// saOptions are --sa and --sm-log.
type saOptions struct {
	Ask   bool
	SMLog string
}

func addSAFlags(c *cobra.Command, o *saOptions) {
	c.Flags().BoolVar(&o.Ask, "sa", false, "also ask the Subnet Manager (SubnAdmGet PathRecord in the ends' partition) and compare its answer; the ends are fabric ports (lid=, node=, a GUID) with pkey=")
	c.Flags().StringVar(&o.SMLog, "sm-log", "", "with --sa: OpenSM's log (`FILE`), to quote the line where it says why it refused (a refusal it says is for routing is not compared: it says nothing of the partition)")
	_ = c.MarkFlagFilename("sm-log")
}

// saAnswer is what the SM said and how it compares with the verdict.
type saAnswer struct {
	SMLID     uint16
	Requester string
	PKey      check.PKey
	SLID      uint16
	DLID      uint16
	// Path: the SA gave a path; Status its refusal ("" when it gave one).
	Path   bool
	Status string
	// Agrees: the SM's answer is the verdict's P_Key rule; Unknown: its answer
	// settles nothing (it did not answer for these ends, or could not be asked): a
	// yes then exits 4, a definite no still 1 (runCanTalk).
	// NotCompared: whether they agree is not known (Agrees means nothing): the SM
	// could not be asked, or the tables' P_Key rule was not decided (an entry or table
	// it needs not read).
	Agrees      bool
	NotCompared bool
	Unknown     bool
	// Unasked: the SM could not be asked (Unknown too): its answer was not read, so a
	// definite no carries it in incomplete; one it gave that disagrees was read.
	Unasked bool
	Reason  string
	LogLine string
}

// saEnd is an endpoint as --sa needs it: a port of a known fabric, one P_Key.
func saEnd(e query.ResolvedEndpoint) (*fabric.Fabric, *fabric.Port, check.PKey, error) {
	f, _ := e.Endpoint.Fabric.(*fabric.Fabric)
	// A QP whose table or entry was not read is asked about with its pkey=.
	inPartition := !e.Endpoint.Port && (len(e.Endpoint.Entries) == 1 || e.Spec.PKey != nil)
	if f == nil || e.Endpoint.At == nil || !inPartition {
		return nil, nil, 0, cmdutil.Usagef("--sa asks the Subnet Manager for a path between two ports of the fabric in one partition: %s is not a fabric port with pkey= (write lid=N,pkey=K, node=NAME,pkey=K or GUID,pkey=K)", e.Spec)
	}
	p := f.Port(*e.Endpoint.At)
	if p == nil {
		return nil, nil, 0, &query.EnvError{Msg: fmt.Sprintf("--sa: %s is not in the fabric read", e.Endpoint.Label)}
	}
	if e.Spec.PKey != nil {
		return f, p, *e.Spec.PKey, nil // the key as asked: what saquery --pkey sends
	}
	return f, p, e.Endpoint.Entries[0].PKey, nil
}

// askSA asks the SA for the path from A to B in their partition and compares.
func (o *CanTalkOptions) askSA(eps []query.ResolvedEndpoint, v check.Verdict) (*saAnswer, error) {
	f, pa, ka, err := saEnd(eps[0])
	if err != nil {
		return nil, err
	}
	_, pb, kb, err := saEnd(eps[1])
	if err != nil {
		return nil, err
	}
	ans := &saAnswer{PKey: ka, SLID: pa.LID, DLID: pb.LID}
	for i, p := range []*fabric.Port{pa, pb} {
		if p.LID == 0 {
			// A port without a LID (DOWN, or not yet given one by the SM) exists: the
			// verdict stands (a port not ACTIVE is a no whatever the SM says), and
			// the SM, which answers by LID, could not be asked about it.
			ans.Unknown, ans.Unasked, ans.NotCompared = true, true, true
			ans.Reason = fmt.Sprintf("the Subnet Manager was not asked: %s has no LID in the fabric read (%s), and the SA answers by LID", eps[i].Endpoint.Label, cmp.Or(p.State, "state not read"))
			return ans, nil
		}
	}
	if ka.Partition() != kb.Partition() {
		ans.Agrees, ans.NotCompared = v.AToB.PKeyOK == check.RuleFails, v.AToB.PKeyOK == check.RuleNotKnown
		ans.Reason = fmt.Sprintf("not asked: %s and %s name different partitions (%s, %s), and the SA gives a path in one", eps[0].Endpoint.Label, eps[1].Endpoint.Label, ka.Partition(), kb.Partition())
		return ans, nil
	}
	var logFrom int64 = -1
	if o.SA.SMLog != "" {
		st, err := os.Stat(o.SA.SMLog)
		if err != nil {
			return nil, &query.UsageError{Msg: fmt.Sprintf("--sm-log: %v", err)}
		}
		logFrom = st.Size()
	}
	sent := false // the PathRecord query was sent: a timeout is the SA's silence
	err = o.MAD.With(o.Ctx, func(ctx context.Context, fab *query.Fabric) error {
		sm, err := mad.FindSA(ctx, fab.T)
		if err != nil {
			return err
		}
		ans.SMLID = sm
		if ni, err := mad.GetNodeInfo(ctx, fab.T, mad.DirectedRoute()); err == nil {
			ans.Requester = requesterLabel(f, check.GUID(ni.PortGUID), fab.Via)
			o.requester = check.GUID(ni.PortGUID)
		}
		sent = true
		err = mad.GetPathRecord(ctx, fab.T, sm, pa.LID, pb.LID, uint16(ka))
		switch st, ok := mad.SAStatus(err); {
		case err == nil:
			ans.Path = true
		case ok && st == mad.SAStatusNoRecords:
			ans.Status = mad.SAStatusText(uint16(st) << 8)
		default:
			return err
		}
		return nil
	})
	if err != nil {
		ans.Unknown, ans.Unasked, ans.NotCompared = true, true, true
		ans.Reason = unaskedReason(err, sent)
		return ans, nil
	}
	var why refusal
	if logFrom >= 0 && !ans.Path {
		why = findRefusal(o.SA.SMLog, logFrom, refusalEnds{pa.GUID, pb.GUID, pa.LID, pb.LID}, ka)
		ans.LogLine = why.Line
	}
	o.judgeSA(ans, f, eps, v, why, logFrom >= 0)
	return ans, nil
}

// unaskedReason says why the SM's answer about the path was not had: err ended the
// exchange, after the PathRecord query was sent or before.
func unaskedReason(err error, sent bool) string {
	var se *mad.StatusError
	switch {
	case errors.As(err, &se) && se.Class == mad.ClassSubnAdm:
		// OpenSM sends other statuses for a query it cannot take (osm_sa.c
		// osm_sa_send_error): none is an answer about the path.
		return fmt.Sprintf("the Subnet Manager answered an error, neither a path nor a refusal: %v", err)
	case sent && errors.Is(err, mad.ErrTimeout):
		// OpenSM drops an SA request unanswered while it is not master or has not
		// finished its first sweep (osm_sa_mad_ctrl.c sa_mad_ctrl_rcv_callback), and
		// one from a port it does not know (osm_sa_path_record.c, ERR 1F16).
		return fmt.Sprintf("the Subnet Manager could not be asked: %v (OpenSM answers nothing while it is not the master SM or has not finished its first sweep, and nothing to a port it does not know: ERR 1F16 in its log)", err)
	}
	return fmt.Sprintf("the Subnet Manager could not be asked: %v", err)
}

// requesterLabel names the port the SA request came from.
func requesterLabel(f *fabric.Fabric, g check.GUID, via string) string {
	if ids := f.EndPorts(g); len(ids) > 0 {
		return f.Label(ids[0])
	}
	return fmt.Sprintf("%s (via %s)", g, via)
}

// judgeSA compares the SA's answer with the verdict's P_Key rule for the partition,
// and says why the SA refused: why is the SM's log line about it, if one was found;
// logRead: its log was read (--sm-log).
func (o *CanTalkOptions) judgeSA(ans *saAnswer, f *fabric.Fabric, eps []query.ResolvedEndpoint, v check.Verdict, why refusal, logRead bool) {
	a, b := eps[0].Endpoint.Label, eps[1].Endpoint.Label
	key := ans.PKey.Partition()
	pkeyOK := v.AToB.PKeyOK == check.RulePasses && v.BToA.PKeyOK == check.RulePasses
	notKnown := v.AToB.PKeyOK == check.RuleNotKnown || v.BToA.PKeyOK == check.RuleNotKnown
	lids := fmt.Sprintf("from LID %d to LID %d", ans.SLID, ans.DLID)
	if o.Sweep.File != "" {
		lids += " (the LIDs in " + o.Sweep.File + ")"
	}
	asked := fmt.Sprintf("SubnAdmGet PathRecord %s with P_Key %s, to the SA at LID %d", lids, ans.PKey, ans.SMLID)
	tables, stale := o.tablesOf(f)
	var pkeyReasons []string
	for _, r := range v.Reasons {
		if !strings.HasPrefix(r, "Q_Key") && !strings.Contains(r, "Q_Key send rule") {
			pkeyReasons = append(pkeyReasons, r)
		}
	}
	// OpenSM refuses an asker that shares no partition with an end silently, before
	// it looks at the ends (pr_rcv_get_port_pair_paths).
	asker := o.requesterSharesNone(f, eps)
	switch {
	case why.Routing:
		// OpenSM walks the route before it looks at the partition (osm_sa_path_record.c
		// pr_rcv_get_path_parms): such a refusal says nothing of the partition, yes or no.
		ans.Unknown, ans.NotCompared = true, true
		ans.Reason = fmt.Sprintf("the Subnet Manager refuses a path in partition %s (%s: %s) for routing, not for a partition: its log says the route between the ends breaks, and it stops there before it checks partitions, so its answer neither confirms nor contradicts %s", key, asked, ans.Status, tables)
	case why.QoSLevel != "":
		// ERR 1F1D: the QoS level that matches the path does not list the P_Key asked
		// (1F1E: none it lists is shared). OpenSM looks at the level after its own
		// view of the tables passed the partition's rule (osm_sa_path_record.c
		// pr_rcv_get_path_parms), so a QoS refusal says nothing of the tables read.
		ans.Unknown, ans.NotCompared = true, true
		ans.Reason = fmt.Sprintf("the Subnet Manager refuses a path in partition %s (%s: %s) for its QoS policy, not for the partition: its log says QoS level %q does not allow P_Key %s between these ports, a rule of its QoS policy file that it applies after the partition's, so its answer neither confirms nor contradicts %s", key, asked, ans.Status, why.QoSLevel, ans.PKey, tables)
	case notKnown:
		ans.Unknown, ans.NotCompared = true, true
		gives := "gives a path"
		if !ans.Path {
			gives = "refuses a path (" + ans.Status + ")"
		}
		ans.Reason = fmt.Sprintf("the Subnet Manager %s in partition %s (%s); whether %s allow it is not known (what the P_Key rule needs was not read), so its answer confirms nothing", gives, key, asked, tables)
	case ans.Path && pkeyOK:
		ans.Agrees = true
		ans.Reason = fmt.Sprintf("the Subnet Manager gives a path in partition %s (%s): it agrees", key, asked)
		if v.Kind != check.VerdictYes {
			// OpenSM looks only at the two ends' tables (osm_sa_path_record.c
			// pr_rcv_get_path_parms, osm_physp_share_this_pkey): what else the
			// verdict rests on is not its to confirm.
			ans.Reason += " on the ends' P_Key tables, all a PathRecord looks at (not the switch ports' tables, not Q_Keys): its path does not undo the verdict"
		}
	case !ans.Path && !pkeyOK && why.Line == "" && asker != "":
		// OpenSM refused the asker before it looked at the ends
		// (pr_rcv_get_port_pair_paths): no answer about them, yes or no.
		ans.Unknown, ans.NotCompared = true, true
		ans.Reason = fmt.Sprintf("the Subnet Manager refuses a path in partition %s (%s: %s), but %s, so its refusal neither confirms nor contradicts %s", key, asked, ans.Status, asker, tables)
	case !ans.Path && !pkeyOK:
		ans.Agrees = true
		ans.Reason = fmt.Sprintf("the Subnet Manager refuses a path in partition %s too (%s: %s): %s", key, asked, ans.Status, strings.Join(pkeyReasons, "; "))
	case ans.Path:
		ans.Unknown = true
		ans.Reason = fmt.Sprintf("the Subnet Manager gives a path in partition %s (%s), but %s say no: %sits view of the tables is not what the ports hold (it has not swept since they changed, or it does not manage them)", key, asked, tables, stale)
	default:
		ans.Unknown = true
		ans.Reason = fmt.Sprintf("the Subnet Manager refuses a path in partition %s (%s: %s) that %s allow", key, asked, ans.Status, tables)
		silent := cmp.Or(endsShareNone(f, eps), asker)
		switch {
		case silent != "":
			ans.NotCompared = true
			ans.Reason += ": " + silent + "; its refusal says nothing of " + a + " and " + b
		case why.Line != "" || !logRead:
			// The line found is the SM's own partition refusal (ERR 1F1A), or no log
			// was read: a route that breaks and a QoS level are the other refusals
			// OpenSM logs (pr_rcv_get_path_parms).
			ans.Reason += ": " + stale + "its view of the tables is not what the ports hold (it has not swept since they changed, or it does not manage them)"
			if why.Line == "" {
				ans.Reason += ", or it refuses for a broken route or its QoS policy, which OpenSM logs (--sm-log quotes the line)"
			}
		default:
			// Its log says nothing: besides a stale view, the refusals OpenSM does
			// not log at its default level are a QoS SL that its SL-to-VL tables
			// drop ("All the SLs lead to VL15", debug) and an end's LID it does not
			// know ("No source port with LID", verbose; osm_pr_get_end_points).
			ans.Reason += ": " + stale + "its view of the tables is not what the ports hold (it has not swept since they changed, or it does not manage them, or it does not know an end's LID), or its QoS policy gives the path an SL that its SL-to-VL tables drop: it logged no reason"
		}
	}
}

// tablesOf names what the verdict read the ends' tables from, for the comparison with
// the SM: the tables read now, or with --fabric-file those of that saved sweep f, and
// then stale says it may be older than the fabric the SM answers about now (the SA
// is asked by its LIDs, too).
func (o *CanTalkOptions) tablesOf(f *fabric.Fabric) (tables, stale string) {
	if o.Sweep.File == "" {
		return "the tables read", ""
	}
	tables = "the tables in " + o.Sweep.File
	if !f.SweptAt.IsZero() {
		tables += " (swept " + f.SweptAt.UTC().Format(time.RFC3339) + ")"
	}
	return tables, o.Sweep.File + " may be older than the fabric the Subnet Manager answers about now (sweep again), or "
}

// OpenSM refuses a PathRecord without looking at the partition asked for, and
// without logging why, when the requester shares no partition (with a full member)
// with an end, or the ends share none at all (osm_sa_path_record.c
// pr_rcv_get_port_pair_paths, osm_port_share_pkey). endsShareNone and
// requesterSharesNone say so, or "" when the tables read do not show it.

// wholePort is the port id of f with its whole table, as an endpoint; false when
// its table was not read.
func wholePort(f *fabric.Fabric, id check.PortID, label string) (check.Endpoint, bool) {
	p := f.Port(id)
	if p == nil || p.PKeys == nil {
		return check.Endpoint{}, false
	}
	return check.Endpoint{Label: label, Port: true, Entries: p.Entries()}, true
}

// sharePartition: x and y share a partition, one of them a full member. Not known
// (entries not read) may share: never said to share none.
func sharePartition(x, y check.Endpoint) bool {
	return check.CanTalk(x, y).AToB.PKeyOK != check.RuleFails
}

// wholeEnds are the two ends with their whole tables; false when one was not read.
func wholeEnds(f *fabric.Fabric, eps []query.ResolvedEndpoint) ([]check.Endpoint, bool) {
	ends := make([]check.Endpoint, 2)
	for i, e := range eps {
		w, ok := wholePort(f, *e.Endpoint.At, e.Endpoint.Label)
		if !ok {
			return nil, false
		}
		ends[i] = w
	}
	return ends, true
}

// endsShareNone: the ends share no partition at all.
func endsShareNone(f *fabric.Fabric, eps []query.ResolvedEndpoint) string {
	ends, ok := wholeEnds(f, eps)
	if !ok || sharePartition(ends[0], ends[1]) {
		return ""
	}
	return fmt.Sprintf("%s and %s share no partition in which one is a full member, and OpenSM refuses any path between such ports before it looks at the partition asked for, without logging it", ends[0].Label, ends[1].Label)
}

// requesterSharesNone: the port that asked shares no partition with an end.
func (o *CanTalkOptions) requesterSharesNone(f *fabric.Fabric, eps []query.ResolvedEndpoint) string {
	ends, ok := wholeEnds(f, eps)
	if !ok || o.requester == 0 {
		return ""
	}
	// Every port with the requester's GUID: on a fabric with duplicate port GUIDs any
	// of them may be the one that asked.
	for _, id := range f.EndPorts(o.requester) {
		req, ok := wholePort(f, id, f.Label(id))
		if !ok {
			continue
		}
		for i, e := range ends {
			// A port shares a partition with itself (osm_pkey.c
			// osm_physp_share_pkey: the same port is TRUE before any table).
			if id == *eps[i].Endpoint.At {
				continue
			}
			if !sharePartition(req, e) {
				return fmt.Sprintf("the port that asked, %s, shares no partition (with a full member) with %s, and OpenSM answers a PathRecord only to a requester that shares one with both ends, without logging why: ask from a port that does", req.Label, e.Label)
			}
		}
	}
	return ""
}

// refusal is the SM's log line refusing the path asked for and what it refused for:
// Routing, a route that breaks (path-no-route); QoSLevel, the level of its QoS
// policy that refused it (path-refused naming one: ERR 1F1D, 1F1E); neither, the
// partition (ERR 1F1A).
type refusal struct {
	Line     string
	Routing  bool
	QoSLevel string
}

// refusalEnds are the two ends of the path asked for, by port GUID and LID.
type refusalEnds struct {
	ga, gb check.GUID
	la, lb uint16
}

// findRefusal waits (up to 2 s) for the SM's log line refusing the path between the
// two ends, written after offset from, and returns it; Line "" when none comes. The
// line is a refusal in key's partition (path-refused: for the partition, or for a QoS
// level) or for routing (path-no-route: OpenSM walks the route before any partition
// check, and names the ends by LID, or only the destination for a dead end).
func findRefusal(path string, from int64, ends refusalEnds, key check.PKey) refusal {
	deadline := time.Now().Add(2 * time.Second)
	for {
		if r := scanRefusal(path, from, ends, key); r.Line != "" || time.Now().After(deadline) {
			return r
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func scanRefusal(path string, from int64, e refusalEnds, key check.PKey) (found refusal) {
	f, err := os.Open(path)
	if err != nil {
		return refusal{}
	}
	defer f.Close()
	if _, err := f.Seek(from, 0); err != nil {
		return refusal{}
	}
	// A line that names both ends beats one that names only the destination: ERR
	// 1F07 (and 4516) names the dead end's switch and the destination LID alone, so
	// another requester's path to the same LID, refused in the same moments, reads
	// the same. Among equals the last line read wins.
	best := 0
	take := func(ev *smlog.Event, rank int, isRouting bool) {
		if rank >= best {
			best = rank
			found = refusal{Line: ev.Lines[0], Routing: isRouting, QoSLevel: ev.QoSLevel}
		}
	}
	a := smlog.NewAssembler(time.Now(), time.Local, func(ev *smlog.Event) {
		if len(ev.Lines) == 0 {
			return
		}
		switch ev.Kind {
		case smlog.KindPathRefused:
			ends := (ev.From.GUID == e.ga && ev.To.GUID == e.gb) || (ev.From.GUID == e.gb && ev.To.GUID == e.ga)
			if ends && (ev.KeyType == "" || check.PKey(ev.Key).Partition() == key.Partition()) {
				take(ev, 3, false)
			}
		case smlog.KindPathNoRoute:
			// The route from the source LID to the destination's, the direction the
			// PathRecord asked (GetPathRecord): the ends by LID (ERR 1F07 names only
			// the destination) or by port GUID (1F25).
			switch {
			case ev.From.GUID != 0 && ev.From.GUID == e.ga && ev.To.GUID == e.gb:
				take(ev, 3, true)
			case ev.To.LID != 0 && ev.To.LID == e.lb && ev.From.LID == e.la:
				take(ev, 2, true)
			case ev.To.LID != 0 && ev.To.LID == e.lb && ev.From.LID == 0:
				take(ev, 1, true)
			}
		}
	})
	// A read error ends the scan: the refusal found before it, if any, is the answer.
	_ = smlog.Read(context.Background(), f, a)
	return found
}

// saJSON is the "sa" member of can-talk's JSON.
type saJSON struct {
	SMLID     *uint16 `json:"sm_lid"`
	Requester *string `json:"requester"`
	PKey      string  `json:"pkey"`
	SLID      uint16  `json:"slid"`
	DLID      uint16  `json:"dlid"`
	Path      bool    `json:"path"`
	Status    *string `json:"status"`
	Agrees    *bool   `json:"agrees"` // null: not compared
	Unknown   bool    `json:"unknown"`
	Reason    string  `json:"reason"`
	LogLine   *string `json:"log_line"`
}

func saToJSON(ans *saAnswer) *saJSON {
	j := &saJSON{PKey: ans.PKey.String(), SLID: ans.SLID, DLID: ans.DLID, Path: ans.Path, Unknown: ans.Unknown, Reason: ans.Reason}
	if !ans.NotCompared {
		j.Agrees = &ans.Agrees
	}
	if ans.SMLID != 0 {
		j.SMLID = &ans.SMLID
	}
	if ans.Requester != "" {
		j.Requester = &ans.Requester
	}
	if ans.Status != "" {
		j.Status = &ans.Status
	}
	if ans.LogLine != "" {
		j.LogLine = &ans.LogLine
	}
	return j
}
