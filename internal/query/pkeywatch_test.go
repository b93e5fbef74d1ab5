package query

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibkey/ibkey/internal/check"
)

// TestTableChanges: every kind of change between two reads of a table, and what is not
// a change.
func TestTableChanges(t *testing.T) {
	e := func(v uint16) Entry { return Entry{PKey: check.PKey(v)} }
	bad := Entry{Unreadable: "EIO"}
	tab := func(es ...Entry) *TableRead { return &TableRead{Entries: es} }
	cases := []struct {
		name     string
		old, cur *TableRead
		want     []string // "index kind old new"
	}{
		{"same", tab(e(0xffff), e(0x8001)), tab(e(0xffff), e(0x8001)), nil},
		{"removed", tab(e(0xffff), e(0x8001)), tab(e(0xffff), e(0)), []string{"1 removed 0x8001 0x0000"}},
		{"added", tab(e(0xffff), e(0)), tab(e(0xffff), e(0x0002)), []string{"1 added 0x0000 0x0002"}},
		{"membership", tab(e(0x0002)), tab(e(0x8002)), []string{"0 membership 0x0002 0x8002"}},
		{"replaced", tab(e(0x8001)), tab(e(0x8003)), []string{"0 replaced 0x8001 0x8003"}},
		{"unreadable", tab(e(0x8001)), tab(bad), []string{"0 unreadable 0x8001 -"}},
		{"readable again, empty", tab(bad), tab(e(0)), []string{"0 readable - 0x0000"}},
		{"readable again, a key", tab(bad), tab(e(0x8001)), []string{"0 readable - 0x8001"}},
		{"still unreadable", tab(bad), tab(bad), nil},
		{"invalid to invalid", tab(e(0)), tab(e(0x8000)), nil},
		{"grew by an empty entry", tab(e(0xffff)), tab(e(0xffff), e(0)), nil},
		{"shrank by an empty entry", tab(e(0xffff), e(0)), tab(e(0xffff)), nil},
		{"grew by a key", tab(e(0xffff)), tab(e(0xffff), e(0x8001)), []string{"1 added - 0x8001"}},
		{"several, index order", tab(e(0xffff), e(0x8001), e(0x0002)), tab(e(0x7fff), e(0x8001), e(0x8002)),
			[]string{"0 membership 0xffff 0x7fff", "2 membership 0x0002 0x8002"}},
		{"port error", tab(e(0xffff)), &TableRead{Err: "gone"}, []string{"-1 port_error - -"}},
		{"still an error", &TableRead{Err: "gone"}, &TableRead{Err: "gone"}, nil},
		{"port back, not read before", &TableRead{Err: "gone"}, tab(e(0xffff)), []string{"-1 port_back - -"}},
		{"port back, unchanged", &TableRead{Err: "gone", Before: []Entry{e(0xffff)}}, tab(e(0xffff)), []string{"-1 port_back - -"}},
		{"port back, changed while unreadable", &TableRead{Err: "gone", Before: []Entry{e(0xffff), e(0x8001), e(0x0002)}}, tab(e(0xffff), e(0), e(0x8002)),
			[]string{"-1 port_back - -", "1 removed 0x8001 0x0000", "2 membership 0x0002 0x8002"}},
	}
	str := func(p *check.PKey) string {
		if p == nil {
			return "-"
		}
		return p.String()
	}
	for _, c := range cases {
		got := TableChanges(c.old, c.cur)
		if len(got) != len(c.want) {
			t.Errorf("%s: %d changes %+v, want %v", c.name, len(got), got, c.want)
			continue
		}
		for i, ch := range got {
			s := fmt.Sprintf("%d %s %s %s", ch.Index, ch.Kind, str(ch.Old), str(ch.New))
			if w := c.want[i]; s != w {
				t.Errorf("%s: change %d is %q, want %q (%s)", c.name, i, s, w, ch.Description)
			}
			if ch.Description == "" {
				t.Errorf("%s: change %d has no description", c.name, i)
			}
		}
	}
}

// TestIPoIBEffects: the IPoIB interfaces a change hits are those whose key the kernel
// found at that index (full preferred), and the new table says what happens to each.
func TestIPoIBEffects(t *testing.T) {
	e := func(v uint16) Entry { return Entry{PKey: check.PKey(v)} }
	tab := func(es ...Entry) *TableRead {
		for i := range es {
			es[i].Index = i // as ReadTable's entries (DecodeTable) are
		}
		return &TableRead{Entries: es}
	}
	ifcs := []IPoIB{{Name: "ib0.8001", PKey: 0x8001}, {Name: "ib0.8002", PKey: 0x8002}}
	cases := []struct {
		name     string
		old, cur *TableRead
		want     string // "" for no effect
	}{
		{"key gone", tab(e(0xffff), e(0x8001)), tab(e(0xffff), e(0)), "IPoIB ib0.8001 loses its key 0x8001"},
		{"key still elsewhere", tab(e(0xffff), e(0x8001), e(0x0001)), tab(e(0xffff), e(0), e(0x0001)), "IPoIB ib0.8001 used this entry; its key 0x8001 is still at index 2 (limited)"},
		{"now limited", tab(e(0xffff), e(0x8002)), tab(e(0xffff), e(0x0002)), "IPoIB ib0.8002 now runs as a limited member of partition 0x0002"},
		{"another entry changed", tab(e(0xffff), e(0x8001), e(0x8003)), tab(e(0xffff), e(0x8001), e(0)), ""},
		{"not the entry the kernel uses", tab(e(0x0001), e(0x8001)), tab(e(0), e(0x8001)), ""},
		// Wave 11: the entry the kernel now picks is not known (FindPKey's rule).
		{"limited elsewhere, an entry unread", tab(e(0xffff), e(0x8001), e(0x0001)), tab(e(0xffff), e(0), e(0x0001), Entry{Unreadable: "EIO"}), "IPoIB ib0.8001 used this entry; its key 0x8001 is at index 2 (limited) among the entries read, but 1 could not be read"},
		{"full elsewhere, an entry unread before it", tab(e(0xffff), e(0x8001), e(0), e(0x8001)), tab(e(0xffff), e(0), Entry{Unreadable: "EIO"}, e(0x8001)), "IPoIB ib0.8001 used this entry; its key 0x8001 is at index 3 (full) among the entries read"},
		{"full elsewhere, unread after it", tab(e(0xffff), e(0x8001), e(0x8001), e(0)), tab(e(0xffff), e(0), e(0x8001), Entry{Unreadable: "EIO"}), "IPoIB ib0.8001 used this entry; its key 0x8001 is still at index 2 (full)"},
		{"key gone, but an entry unread", tab(e(0xffff), e(0x8001), e(0)), tab(e(0xffff), e(0), Entry{Unreadable: "EIO"}), "IPoIB ib0.8001 used this entry; its key 0x8001 is not among the entries read, but 1 could not be read: not checked"},
	}
	for _, c := range cases {
		var got []string
		for _, ch := range TableChanges(c.old, c.cur) {
			got = append(got, IPoIBEffects(ifcs, c.old, c.cur, ch)...)
		}
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: %q, want no effect", c.name, got)
		case c.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], c.want)):
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestTableReadSince: a watcher's failed reads carry the table as last read, through
// several failures, so that the read after them is compared with it; the port_back
// change says which it is compared with.
func TestTableReadSince(t *testing.T) {
	e := func(v uint16) Entry { return Entry{PKey: check.PKey(v)} }
	table := func(es ...Entry) []Entry { // indexed, as DecodeTable's
		for i := range es {
			es[i].Index = i
		}
		return es
	}
	reads := []*TableRead{
		{Entries: table(e(0xffff), e(0x8001))},
		{Err: "gone"},
		{Err: "gone"},
		{Entries: table(e(0xffff), e(0x8003))},
	}
	var prev *TableRead
	var got []string
	for _, r := range reads {
		cur := r.Since(prev)
		if prev != nil {
			for _, c := range TableChanges(prev, cur) {
				got = append(got, c.Kind+": "+c.Description)
			}
		}
		prev = cur
	}
	want := []string{
		"port_error: gone",
		"port_back: the table is readable again (2 entries); the changes that follow are since the last read before it could not be read",
		"replaced: full member of partition 0x0001 replaced by full member of partition 0x0003 (a QP using this index now sends in another partition)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Failed from the first read: nothing to compare with, and the change says so.
	first := (&TableRead{Err: "gone"}).Since(nil)
	cs := TableChanges(first, (&TableRead{Entries: []Entry{e(0xffff)}}).Since(first))
	if len(cs) != 1 || !strings.Contains(cs[0].Description, "not read before, so what changed is not known") {
		t.Errorf("port back without a table before: %+v", cs)
	}
	// IPoIB on the replaced index: its effect is judged against the table before.
	ifcs := []IPoIB{{Name: "ib0.8001", PKey: 0x8001}}
	back, seen := reads[2], false
	for _, c := range TableChanges(back, reads[3]) {
		if c.Index != 1 {
			continue
		}
		seen = true
		if fx := IPoIBEffects(ifcs, back, reads[3], c); len(fx) != 1 || !strings.Contains(fx[0], "ib0.8001 loses its key 0x8001") {
			t.Errorf("IPoIB effects after port back: %v", fx)
		}
	}
	if !seen {
		t.Error("no change at index 1 after port back")
	}
}
