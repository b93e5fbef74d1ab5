package sm

import (
	"fmt"
	"strings"
	"time"

	"github.com/ibkey/ibkey/cmd/ibkey/internal/cmdutil"
	"github.com/ibkey/ibkey/internal/smlog"
	"github.com/ibkey/ibkey/internal/textsafe"
)

// unexplained collects the log's lines about partitions or keys that no event holds
// (smlog.Assembler.Unexplained), one group per ERR code (or, without one, per
// function), in the order they first appear. They are shown, and a log that has them
// and no error exits 4: its "nothing found" rests on lines ibkey did not understand.
type unexplained struct {
	groups []*unexplainedGroup
	by     map[string]*unexplainedGroup
}

type unexplainedGroup struct {
	First    smlog.Unexplained
	Count    int
	LastAt   time.Time
	LastLine int64
}

func (u *unexplained) add(l *smlog.Unexplained) {
	key := "ERR " + l.Code
	if l.Code == "" {
		key = l.Text()
	}
	g := u.by[key]
	if g == nil {
		if u.by == nil {
			u.by = map[string]*unexplainedGroup{}
		}
		g = &unexplainedGroup{First: *l}
		u.by[key] = g
		u.groups = append(u.groups, g)
	}
	g.Count++
	g.LastAt, g.LastLine = l.Time, l.Line
}

// lines is how many lines the groups hold.
func (u *unexplained) lines() int {
	n := 0
	for _, g := range u.groups {
		n += g.Count
	}
	return n
}

// what names the group: "ERR 0F12", else the function.
func (g *unexplainedGroup) what() string {
	if g.First.Code != "" {
		return "ERR " + g.First.Code
	}
	return g.First.Function
}

const unexplainedNote = "OpenSM logged this about partitions or keys and ibkey does not explain it (another OpenSM version's message, or one docs/sm.md does not cover): read it in the log; it is in neither the errors nor the warnings counted"

// summary is the stderr line, and the JSON's incomplete message, for u.
func (u *unexplained) summary(file string) string {
	var what []string
	for _, g := range u.groups {
		s := fmt.Sprintf("%s at line %d", g.what(), g.First.Line)
		if g.Count > 1 {
			s = fmt.Sprintf("%s x%d from line %d", g.what(), g.Count, g.First.Line)
		}
		what = append(what, s)
	}
	return fmt.Sprintf("%s: %s about partitions or keys not explained (%s): what ibkey found does not cover them",
		textsafe.String(file), textsafe.Plural(u.lines(), "line", "lines"), strings.Join(textsafe.Capped(what, 4), ", "))
}

// incomplete is what the JSON's incomplete says of u, nil when it is empty.
func (u *unexplained) incomplete(file string) *cmdutil.Incomplete {
	if len(u.groups) == 0 {
		return nil
	}
	return &cmdutil.Incomplete{Kind: cmdutil.IncompleteNotChecked, Message: u.summary(file)}
}

// unexplainedJSONv is one group of the JSON's not_explained list.
type unexplainedJSONv struct {
	Code      *string `json:"code"`
	Function  *string `json:"function"`
	Level     string  `json:"level"`
	Count     int     `json:"count"`
	FirstAt   string  `json:"first_at"`
	LastAt    string  `json:"last_at"`
	FirstLine int64   `json:"first_line"`
	LastLine  int64   `json:"last_line"`
	Message   string  `json:"message"`
}

func unexplainedJSON(g *unexplainedGroup) unexplainedJSONv {
	return unexplainedJSONv{Code: nonZero(g.First.Code), Function: nonZero(g.First.Function), Level: g.First.Level.String(),
		Count: g.Count, FirstAt: g.First.Time.Format(time.RFC3339Nano), LastAt: g.LastAt.Format(time.RFC3339Nano),
		FirstLine: g.First.Line, LastLine: g.LastLine, Message: g.First.Message}
}
