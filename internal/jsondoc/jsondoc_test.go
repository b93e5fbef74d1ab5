package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"
)

type elem struct {
	Name  string         `json:"name"`
	Vals  []int          `json:"vals"`
	Sub   map[string]any `json:"sub,omitempty"`
	Empty []string       `json:"empty"`
}

type doc struct {
	Format string  `json:"format"`
	Num    float64 `json:"num"`
	Elems  []elem  `json:"elems"`
	Tags   []int   `json:"tags"`
	Last   *elem   `json:"last"`
}

var texts = []string{"", "a", "<b>&", "tab\tnl\n", "\x01\x7f", "bad\xffutf8", "日本 \u2028", `"quoted"`}

// TestWriterLaysOutAsEncoder: documents written field by field are byte for byte what
// json.Encoder with SetIndent("", "  ") writes for the same object, empty arrays,
// nested values and odd strings included.
func TestWriterLaysOutAsEncoder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	text := func() string { return texts[r.IntN(len(texts))] }
	for round := range 300 {
		d := doc{Format: text(), Num: r.Float64() * 1e6, Elems: []elem{}, Tags: []int{}}
		for range r.IntN(4) {
			e := elem{Name: text(), Vals: []int{}, Empty: []string{}}
			for range r.IntN(3) {
				e.Vals = append(e.Vals, r.IntN(1000)-500)
			}
			if r.IntN(2) == 0 {
				e.Sub = map[string]any{text(): text(), "n": r.IntN(9), "list": []any{text(), nil, true}}
			}
			d.Elems = append(d.Elems, e)
		}
		for range r.IntN(3) {
			d.Tags = append(d.Tags, r.IntN(100))
		}
		if r.IntN(2) == 0 {
			d.Last = &elem{Name: text()}
		}
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", Indent)
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
		w := New(&got)
		w.Field("format", d.Format)
		w.Field("num", d.Num)
		w.Array("elems", len(d.Elems), func(i int) any { return d.Elems[i] })
		if round%2 == 0 {
			w.Array("tags", len(d.Tags), func(i int) any { return d.Tags[i] })
		} else { // the same array, its elements added as they come (OpenArray)
			a := w.OpenArray("tags")
			for _, tag := range d.Tags {
				a.Add(tag)
			}
			a.CloseArray()
		}
		w.Field("last", d.Last)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("round %d:\n%s\nwant\n%s", round, got.Bytes(), want.Bytes())
		}
	}
}

func TestEmptyObject(t *testing.T) {
	var b bytes.Buffer
	if err := New(&b).Close(); err != nil || b.String() != "{}\n" {
		t.Fatalf("%q, %v", b.String(), err)
	}
}

type failing struct{}

func (failing) MarshalJSON() ([]byte, error) { return nil, errors.New("no") }

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestErrors: the first error, of a value or of the writer, is what Close returns.
func TestErrors(t *testing.T) {
	var b bytes.Buffer
	w := New(&b)
	w.Field("a", 1)
	w.Array("b", 2, func(int) any { return failing{} })
	w.Field("c", 2)
	if err := w.Close(); err == nil || !bytes.Contains([]byte(err.Error()), []byte("no")) {
		t.Fatalf("Close = %v, want the marshal error", err)
	}
	w = New(errWriter{})
	w.Array("big", 100000, func(i int) any { return i })
	if err := w.Close(); err == nil || err.Error() != "disk full" {
		t.Fatalf("Close = %v, want disk full", err)
	}
}
