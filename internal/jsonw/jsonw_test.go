package jsonw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// The reference: a tree of values encoding/json writes with an Encoder. Objects keep
// their key order (obj marshals itself), so the two outputs can be compared byte for byte.
type kv struct {
	k string
	v any
}

type obj []kv

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type hexv struct {
	v      uint64
	digits int
}

func (h hexv) MarshalJSON() ([]byte, error) {
	return json.Marshal(fmt.Sprintf("0x%0*x", h.digits, h.v))
}

func write(w *Writer, v any) {
	switch v := v.(type) {
	case obj:
		w.BeginObject()
		for _, e := range v {
			w.Key(e.k)
			write(w, e.v)
		}
		w.EndObject()
	case []any:
		w.BeginArray()
		for _, e := range v {
			write(w, e)
		}
		w.EndArray()
	case string:
		w.String(v)
	case int64:
		w.Int(v)
	case uint64:
		w.Uint(v)
	case bool:
		w.Bool(v)
	case nil:
		w.Null()
	case hexv:
		w.Hex(v.v, v.digits)
	default:
		panic(fmt.Sprintf("%T", v))
	}
}

var oddStrings = []string{"", "plain", `q"uote`, `back\slash`, "<tag>&amp;", "\x00\x01\x1f\x7f", "\b\f\n\r\t",
	"héllo", "\u2028\u2029", "bad\xffutf8\xc3", "日本語", "emoji 🙂", "\xed\xa0\x80", strings.Repeat("long ", 50)}

func randValue(r *rand.Rand, depth int) any {
	n := r.IntN(10)
	if depth > 4 {
		n = 4 + r.IntN(6)
	}
	switch n {
	case 0, 1:
		o := obj{}
		for range r.IntN(4) {
			o = append(o, kv{oddStrings[r.IntN(len(oddStrings))], randValue(r, depth+1)})
		}
		return o
	case 2, 3:
		a := []any{}
		for range r.IntN(4) {
			a = append(a, randValue(r, depth+1))
		}
		return a
	case 4:
		return oddStrings[r.IntN(len(oddStrings))]
	case 5:
		return int64(r.Uint64())
	case 6:
		return r.Uint64() >> r.IntN(64)
	case 7:
		return r.IntN(2) == 1
	case 8:
		return nil
	}
	return hexv{r.Uint64() >> r.IntN(64), []int{1, 4, 16, 18}[r.IntN(4)]}
}

// TestWriterMatchesEncodingJSON: random documents, compact and indented, are byte for
// byte what json.Encoder writes.
func TestWriterMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		v := randValue(r, 0)
		for _, indent := range []string{"", "  ", "\t"} {
			want := encodeStd(t, v, indent)
			var got bytes.Buffer
			w := New(&got, indent)
			write(w, v)
			if err := w.End(); err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Fatalf("case %d indent %q:\n got %s\nwant %s", i, indent, got.String(), string(want))
			}
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
		var b bytes.Buffer
		w := New(&b, "")
		w.StringBytes([]byte(s))
		if err := w.Flush(); err != nil || b.String() != string(want) {
			t.Fatalf("StringBytes(%q): got %s, want %s", s, b.String(), want)
		}
	})
}

func TestAppendHex(t *testing.T) {
	for _, c := range []struct {
		v      uint64
		digits int
	}{{0, 4}, {0, 16}, {0x8001, 4}, {0x12345, 4}, {1<<64 - 1, 16}, {1<<64 - 1, 4}, {7, 20}, {0, 0}, {0xabc, 1}} {
		want := fmt.Sprintf("0x%0*x", c.digits, c.v)
		if got := string(AppendHex(nil, c.v, c.digits)); got != want {
			t.Errorf("AppendHex(%#x, %d) = %s, want %s", c.v, c.digits, got, want)
		}
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(b []byte) (int, error) {
	f.n++
	return 0, errors.New("disk full")
}

// TestWriteErrorKept: the first write error is what End returns, and the Writer stops
// writing after it.
func TestWriteErrorKept(t *testing.T) {
	fw := &failWriter{}
	w := New(fw, "")
	w.BeginArray()
	for range 100000 {
		w.String("0x0000000000000000")
	}
	w.EndArray()
	if err := w.End(); err == nil || err.Error() != "disk full" {
		t.Fatalf("End = %v, want disk full", err)
	}
	if fw.n != 1 {
		t.Errorf("%d writes after the error, want 1", fw.n)
	}
}

// writeSplit is write with the elements of every array split at random into runs,
// each written by a Sub of its own and spliced back in order.
func writeSplit(r *rand.Rand, w *Writer, v any) {
	a, ok := v.([]any)
	if !ok {
		if o, isObj := v.(obj); isObj {
			w.BeginObject()
			for _, e := range o {
				w.Key(e.k)
				writeSplit(r, w, e.v)
			}
			w.EndObject()
			return
		}
		write(w, v)
		return
	}
	w.BeginArray()
	first := true
	for i := 0; i < len(a); {
		n := 1 + r.IntN(len(a)-i)
		sub := w.Sub(make([]byte, r.IntN(8)), first)
		for _, e := range a[i : i+n] {
			writeSplit(r, sub, e)
		}
		w.Splice(sub.Bytes())
		first, i = false, i+n
	}
	w.EndArray()
}

// TestSubSplice: documents whose arrays are written in parts by Subs are byte for byte
// what json.Encoder writes, compact and indented, with a Splice now and then larger
// than the flush size.
func TestSubSplice(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		v := randValue(r, 0)
		if i%100 == 0 {
			big := make([]any, 3000)
			for j := range big {
				big[j] = strings.Repeat("x", j%50)
			}
			v = []any{v, big}
		}
		for _, indent := range []string{"", "  "} {
			want := encodeStd(t, v, indent)
			var got bytes.Buffer
			w := New(&got, indent)
			writeSplit(r, w, v)
			if err := w.End(); err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Fatalf("case %d indent %q:\n got %s\nwant %s", i, indent, got.String(), string(want))
			}
		}
	}
}

// TestPlain8: the eight-byte test passes exactly the words whose bytes htmlSafe passes
// one by one, on random words and on words of one odd byte among plain ones.
func TestPlain8(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	want := func(x uint64) bool {
		for k := range 8 {
			if b := byte(x >> (8 * k)); b >= utf8.RuneSelf || !htmlSafe[b] {
				return false
			}
		}
		return true
	}
	check := func(x uint64) {
		if got := plain8(x); got != want(x) {
			t.Fatalf("plain8(%#016x) = %v", x, got)
		}
	}
	for range 200000 {
		x := r.Uint64()
		check(x)
		check(x & 0x7f7f7f7f7f7f7f7f)
	}
	for b := range 256 {
		for k := range 8 {
			check(0x6161616161616161&^(0xff<<(8*k)) | uint64(b)<<(8*k))
		}
	}
}

// encodeStd is v as json.Encoder writes it with SetIndent("", indent): the reference.
func encodeStd(t *testing.T, v any, indent string) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
