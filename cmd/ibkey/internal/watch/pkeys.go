package watch

import (
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
	IO      *cmdutil.IOStreams
	Format  func() (cmdutil.Format, error)
	Notices func() *cmdutil.Notices
	Host    func() *query.Host
	Sampling
}

// NewCmdPKeys builds `ibkey watch pkeys`; runF, when not nil, runs instead of runPKeys
// (tests of flag parsing).
func NewCmdPKeys(f *cmdutil.Factory, runF func(*PKeysOptions) error) *cobra.Command {
	o := &PKeysOptions{IO: f.IOStreams, Format: f.Format, Notices: f.Notices, Host: f.Host, Sampling: Sampling{Now: f.Now}}
	c := &cobra.Command{
		Use:   "pkeys [DEV[/PORT]...]",
		Short: "Print P_Key table changes as they happen",
		Long: `Poll the P_Key tables every --interval and print one event per changed entry
(index, old value, new value, what changed), as a program sees IBV_EVENT_PKEY_CHANGE
when the Subnet Manager reprograms a table. Each pkeys/ file is read once per poll.
The first poll is the baseline and prints nothing on stdout.

Lines: TIME DEV/PORT index=I old=OLD new=NEW CHANGE: DESCRIPTION
(OLD and NEW are 0x%04x, "unreadable" or "absent"; CHANGE is added, removed,
membership, replaced, unreadable, readable, port_error or port_back).
JSON (-o json), one object per event per line: {"time","device","port","index",
"old","new","change","description"}; old/new are null when absent or unreadable.`,
		Example: `  ibkey watch pkeys
  ibkey watch pkeys mlx5_0/1 --interval 200ms
  ibkey watch pkeys -o json --count 60`,
		Args:              cmdutil.UsageArgs(cobra.ArbitraryArgs),
		ValidArgsFunction: cmdutil.CompletePortArgs(f),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.check(c, args); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runPKeys(o)
		},
	}
	o.bind(c)
	return c
}

// P_Key table polling.

type pkeyEventJSON struct {
	Time        string  `json:"time"`
	Device      string  `json:"device"`
	Port        int     `json:"port"`
	Index       *int    `json:"index"`
	Old         *string `json:"old"`
	New         *string `json:"new"`
	Change      string  `json:"change"`
	Description string  `json:"description"`
}

// tableState is what one poll saw of a port: entries, or the reason it could not be read.
type tableState struct {
	entries []entryState
	err     string
}

type entryState struct {
	value    check.PKey
	readable bool
}

func runPKeys(o *PKeysOptions) error {
	f, err := o.Format()
	if err != nil {
		return err
	}
	host := o.Host()
	views, err := host.LoadMany(o.Selectors)
	if err != nil {
		return err
	}
	n := o.Notices()
	n.Label(host.Label)
	var refs []query.PortRef
	for _, v := range views {
		if !v.Port.HasPKeys {
			n.Note(fmt.Sprintf("%s: no P_Key table (no pkeys/ directory): not watched", v.Ref()))
			continue
		}
		refs = append(refs, v.Ref())
	}
	if len(refs) == 0 {
		return &query.EnvError{Msg: "no port with a P_Key table to watch"}
	}
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.String()
	}
	n.Note(fmt.Sprintf("watching the P_Key tables of %s every %s", strings.Join(names, ", "), o.Interval))
	prev := make([]*tableState, len(refs))
	return o.loop(o.Ctx, o.Count, func(int) error {
		now := o.Now()
		for i, r := range refs {
			cur := readTable(host, r)
			if prev[i] != nil {
				for _, ev := range tableEvents(r, prev[i], cur) {
					ev.Time = now.Format(time.RFC3339Nano)
					if err := printPKeyEvent(o.IO.Out, f, now, ev); err != nil {
						return err
					}
				}
			}
			prev[i] = cur
		}
		return nil
	})
}

func readTable(h *query.Host, r query.PortRef) *tableState {
	raw, err := h.Sys.PKeys(r.Device, r.Port)
	if err != nil {
		return &tableState{err: err.Error()}
	}
	t := &tableState{entries: make([]entryState, len(raw))}
	for i, e := range raw {
		t.entries[i] = entryState{value: check.PKey(e.Value), readable: e.Err == nil}
	}
	return t
}

// tableEvents compares two polls of a port's table: one event per changed index.
func tableEvents(r query.PortRef, old, cur *tableState) []pkeyEventJSON {
	base := pkeyEventJSON{Device: r.Device, Port: r.Port}
	switch {
	case cur.err != "" && old.err == "":
		ev := base
		ev.Change, ev.Description = "port_error", cur.err
		return []pkeyEventJSON{ev}
	case cur.err != "":
		return nil
	case old.err != "":
		ev := base
		ev.Change, ev.Description = "port_back", fmt.Sprintf("the table is readable again (%d entries)", len(cur.entries))
		return []pkeyEventJSON{ev}
	}
	var out []pkeyEventJSON
	for i := 0; i < max(len(old.entries), len(cur.entries)); i++ {
		var a, b *entryState
		if i < len(old.entries) {
			a = &old.entries[i]
		}
		if i < len(cur.entries) {
			b = &cur.entries[i]
		}
		change, desc := describeChange(a, b)
		if change == "" {
			continue
		}
		ev := base
		idx := i
		ev.Index, ev.Old, ev.New, ev.Change, ev.Description = &idx, entryValue(a), entryValue(b), change, desc
		out = append(out, ev)
	}
	return out
}

func entryValue(e *entryState) *string {
	if e == nil || !e.readable {
		return nil
	}
	s := e.value.String()
	return &s
}

func member(p check.PKey) string {
	return fmt.Sprintf("%s member of partition %s", p.Membership(), p.KeyString())
}

// describeChange says what a change of one entry means; "" when nothing changed.
func describeChange(a, b *entryState) (change, desc string) {
	valid := func(e *entryState) bool { return e != nil && e.readable && e.value.Valid() }
	switch {
	case a != nil && b != nil && a.readable == b.readable && (!a.readable || a.value == b.value):
		return "", ""
	case a == nil && b != nil && b.readable && !b.value.Valid():
		return "", "" // the table grew by an empty entry
	case b == nil && a != nil && a.readable && !a.value.Valid():
		return "", ""
	case b != nil && !b.readable:
		return "unreadable", "the entry can no longer be read"
	case a != nil && !a.readable && !valid(b):
		return "readable", "the entry can be read again: empty (invalid)"
	case a != nil && !a.readable:
		return "readable", "the entry can be read again: " + member(b.value)
	case !valid(a) && valid(b):
		return "added", member(b.value)
	case valid(a) && !valid(b):
		return "removed", member(a.value) + " (a QP using this index loses the partition)"
	case valid(a) && valid(b) && a.value.Key() == b.value.Key():
		return "membership", fmt.Sprintf("partition %s: %s -> %s member", b.value.KeyString(), a.value.Membership(), b.value.Membership())
	case valid(a) && valid(b):
		return "replaced", fmt.Sprintf("%s replaced by %s (a QP using this index now sends in another partition)", member(a.value), member(b.value))
	}
	return "", "" // invalid to another invalid value (0x0000 <-> 0x8000)
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
	} else if ev.Change == "readable" {
		old = "unreadable"
	}
	if ev.New != nil {
		cur = *ev.New
	} else if ev.Change == "unreadable" {
		cur = "unreadable"
	}
	_, err = fmt.Fprintf(w, "%s %s index=%d old=%s new=%s %s: %s\n", t, port, *ev.Index, old, cur, ev.Change, ev.Description)
	return err
}
