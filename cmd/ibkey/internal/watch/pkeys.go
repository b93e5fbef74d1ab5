package watch

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/query"
)

// PKeysOptions holds `ibkey watch pkeys`'s flags and dependencies. It reads sysfs only:
// no MAD flags.
type PKeysOptions struct {
	cmdutil.Deps
	Host func() *query.Host
	Sampling
}

// NewCmdPKeys builds `ibkey watch pkeys`; runF, when not nil, runs instead of runPKeys
// (tests of flag parsing).
func NewCmdPKeys(f *cmdutil.Factory, runF func(*PKeysOptions) error) *cobra.Command {
	o := &PKeysOptions{Host: f.Host, Sampling: Sampling{Now: f.Now}}
	c := &cobra.Command{
		Use:   "pkeys [DEV[/PORT]...]",
		Short: "Print P_Key table changes as they happen",
		Long: `Poll the P_Key tables every --interval and print one event per changed entry
(index, old value, new value, what changed), as a program sees IBV_EVENT_PKEY_CHANGE
when the Subnet Manager reprograms a table. Each pkeys/ file is read once per poll.
The first poll is the baseline and prints nothing on stdout. DEV may also be an IPoIB
interface (ib0.8001): its port is watched.

Lines: TIME DEV/PORT index=I old=OLD new=NEW CHANGE: DESCRIPTION
(OLD and NEW are 0x%04x, "unreadable" or "absent"; CHANGE is added, removed,
membership, replaced, unreadable, readable, port_error or port_back).
JSON (-o json; schemas/watch-pkeys.schema.json), one object per event per line:
{"schema_version","seen_at","device","port","index","old","new","change",
"description"}; old/new are null when absent or unreadable, index is null for a
port_error or port_back event. When a device, port or table asked for could not be
read at the start (named on stderr; the exit is then 4), the first line says so
in-band, since a watch may run until interrupted: {"schema_version","seen_at",
"incomplete":[{"kind","message"}]}, as 'ibkey pkeys' names them. A table or
entry that cannot be read during the watch (a port_error or unreadable event) also
makes the exit 4 when the watch ends: a change there was not seen.`,
		Example: `  ibkey watch pkeys
  ibkey watch pkeys mlx5_0/1 --interval 200ms
  ibkey watch pkeys -o json --count 60`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completePortArgs(f),
		RunE:              cmdutil.RunE(f, o, &o.Deps, o.check, runF, runPKeys),
	}
	o.bind(c)
	return c
}

// P_Key table polling.

type pkeyEventJSON struct {
	Schema      cmdutil.SchemaVersion `json:"schema_version"`
	Time        string                `json:"seen_at"`
	Device      string                `json:"device"`
	Port        int                   `json:"port"`
	Index       *int                  `json:"index"`
	Old         *string               `json:"old"`
	New         *string               `json:"new"`
	Change      string                `json:"change"`
	Description string                `json:"description"`
}

// pkeyNotWatchedJSON is the first line of a watch that could not read something it
// was asked for at the start: a stream's exit comes only when it ends, so it says
// in-band what no event will cover (the kinds and messages of 'ibkey pkeys').
type pkeyNotWatchedJSON struct {
	Schema     cmdutil.SchemaVersion `json:"schema_version"`
	Time       string                `json:"seen_at"`
	Incomplete []cmdutil.Incomplete  `json:"incomplete"`
}

func runPKeys(o *PKeysOptions) error {
	f := o.Format
	host := o.Host()
	n := o.Notices
	ifcLabels, err := o.resolveInterfaces(host, n)
	if err != nil {
		return err
	}
	views, err := host.LoadMany(o.Selectors)
	// The ports without pkeys/ are not watched: an iWARP port has no table, any
	// other port's table was not read (query.NoTableDir).
	for _, v := range views {
		if !v.Port.HasPKeys {
			v.TableMissing, v.TableAbsent = query.NoTableDir(v)
		}
	}
	// A device, port or table that cannot be read does not stop the watch of the
	// others: it is named, and the watch ends with exit 4 (cmdutil.HostNotRead).
	inc, partial, err := cmdutil.HostNotRead(n, views, err)
	if err != nil {
		return err
	}
	for _, l := range append([]string{host.Label}, ifcLabels...) {
		n.Label(l)
	}
	var refs []query.PortRef
	var names []string
	notRead := partial != nil
	for _, v := range views {
		switch {
		case v.TableNotRead() != "":
			n.Warn(fmt.Sprintf("%s: %s: not watched", v.Ref(), v.TableMissing))
			notRead = true
		case v.TableAbsent:
			n.Note(fmt.Sprintf("%s: %s: not watched", v.Ref(), v.TableMissing))
		default:
			refs = append(refs, v.Ref())
			names = append(names, v.Ref().String())
		}
	}
	switch {
	case len(refs) == 0 && notRead:
		// What was not read may have a table: not "no table" (exit 3), not checked.
		fmt.Fprintln(o.IO.ErrOut, "ibkey: no P_Key table could be read: nothing is watched (the ports and devices above were not read)")
		return cmdutil.Exit(cmdutil.ExitIncomplete)
	case len(refs) == 0:
		return &query.EnvError{Msg: "no port with a P_Key table to watch"}
	}
	n.Note(fmt.Sprintf("watching the P_Key tables of %s every %s", strings.Join(names, ", "), o.Interval))
	// The IPoIB interfaces of each port, to name those a change hits.
	ifcs := make([][]query.IPoIB, len(refs))
	for i, r := range refs {
		if vs, err := host.Load(query.Selector{Device: r.Device, Port: r.Port, HasPort: true}, query.LoadOptions{Tables: true, Interfaces: true}); err == nil && len(vs) == 1 {
			ifcs[i] = vs[0].Interfaces
		}
	}
	prev := make([]*query.TableRead, len(refs))
	// lost: a table or an entry could not be read during the watch (a port_error or
	// unreadable event): a change there in that time was not seen, so the watch ends
	// with exit 4, as watch counters does for a port lost mid-watch (rule 1).
	lost := false
	err = o.loop(o.Ctx, o.Count, func(int) error {
		now := o.Now()
		first := prev[0] == nil
		for i, r := range refs {
			cur := query.ReadTable(host, r).Since(prev[i])
			if u := cur.NotRead(r); first && u != nil {
				// Not read at the start (a dangling entry, a table that fails): a
				// change there is not seen until it can be read, so the watch ends
				// with exit 4 (it ended with 0).
				n.Warn(u.Message() + ": a change there is not seen while it cannot be read")
				inc = append(inc, cmdutil.Incomplete{Kind: cmdutil.IncompleteUnreadEntries, Message: u.Message()})
				if u.Table {
					inc[len(inc)-1].Kind = cmdutil.IncompleteUnreadTable
				}
				partial = cmdutil.Exit(cmdutil.ExitIncomplete)
			}
			if prev[i] != nil {
				for _, ev := range tableEvents(r, prev[i], cur, ifcs[i]) {
					lost = lost || ev.Change == query.ChangePortError || ev.Change == query.ChangeUnreadable
					ev.Time = now.Format(time.RFC3339Nano)
					if err := printPKeyEvent(o.IO.Out, f, now, ev); err != nil {
						return err
					}
				}
			}
			prev[i] = cur
		}
		// The first line of a JSON stream says what no event will cover.
		if first && f == cmdutil.FormatJSON && len(inc) > 0 {
			return cmdutil.WriteJSONLine(o.IO.Out, pkeyNotWatchedJSON{Time: now.Format(time.RFC3339Nano), Incomplete: inc})
		}
		return nil
	})
	if err == nil && lost {
		n.Warn("a table or entry could not be read during the watch (the events say which): a change there in that time was not seen")
		return cmdutil.Exit(cmdutil.ExitIncomplete)
	}
	return cmp.Or(err, partial)
}

// tableEvents are query.TableChanges as watch pkeys prints them, with the IPoIB
// interfaces each change hits.
func tableEvents(r query.PortRef, old, cur *query.TableRead, ifcs []query.IPoIB) []pkeyEventJSON {
	changes := query.TableChanges(old, cur)
	out := make([]pkeyEventJSON, len(changes))
	for i, c := range changes {
		ev := pkeyEventJSON{Device: r.Device, Port: r.Port, Change: c.Kind, Description: c.Description}
		if fx := query.IPoIBEffects(ifcs, old, cur, c); len(fx) > 0 {
			ev.Description += "; " + strings.Join(fx, "; ")
		}
		if c.Index >= 0 {
			ev.Index, ev.Old, ev.New = new(c.Index), pkeyString(c.Old), pkeyString(c.New)
		}
		out[i] = ev
	}
	return out
}

func pkeyString(p *check.PKey) *string {
	if p == nil {
		return nil
	}
	return new(p.String())
}

func printPKeyEvent(w io.Writer, f cmdutil.Format, now time.Time, ev pkeyEventJSON) error {
	if f == cmdutil.FormatJSON {
		return cmdutil.WriteJSONLine(w, ev)
	}
	t := now.Format(lineTime)
	port := ev.Device + "/" + strconv.Itoa(ev.Port)
	var err error
	if ev.Index == nil {
		_, err = fmt.Fprintf(w, "%s %s %s: %s\n", t, port, ev.Change, ev.Description)
		return err
	}
	old, cur := "absent", "absent"
	if ev.Old != nil {
		old = *ev.Old
	} else if ev.Change == query.ChangeReadable {
		old = "unreadable"
	}
	if ev.New != nil {
		cur = *ev.New
	} else if ev.Change == query.ChangeUnreadable {
		cur = "unreadable"
	}
	_, err = fmt.Fprintf(w, "%s %s index=%d old=%s new=%s %s: %s\n", t, port, *ev.Index, old, cur, ev.Change, ev.Description)
	return err
}
