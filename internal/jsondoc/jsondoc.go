// Package jsondoc writes one JSON object too large to hold whole (a 5,000-node fabric
// file, the tables of 100,000 ports): its fields are written one after the other and an
// array field element by element, each value through encoding/json. The bytes are what
// json.Encoder with SetIndent("", "  ") writes for the same object, so a streamed
// document reads like every other ibkey document.
//
// encoding/json encodes a value whole, in memory, and indents it in a second buffer:
// for a 30 MB document that is about 200 MB allocated. Here each element is encoded
// and indented in buffers reused from one element to the next.
package jsondoc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// Indent is the indentation of every ibkey JSON document: two spaces per level.
const Indent = "  "

// Writer writes one JSON object, field by field. The first error is kept and returned
// by Close; later calls do nothing.
type Writer struct {
	w      *bufio.Writer
	buf    bytes.Buffer
	field  *json.Encoder // a field's value, one level deep
	elem   *json.Encoder // an array's element, two levels deep
	fields int
	err    error
}

// New starts an object on w.
func New(w io.Writer) *Writer {
	d := &Writer{w: bufio.NewWriterSize(w, 64<<10)}
	d.field = json.NewEncoder(&d.buf)
	d.field.SetIndent(Indent, Indent)
	d.elem = json.NewEncoder(&d.buf)
	d.elem.SetIndent(Indent+Indent, Indent)
	d.w.WriteByte('{')
	return d
}

// Field writes the field name with value v.
func (d *Writer) Field(name string, v any) {
	d.key(name)
	d.value(d.field, v)
}

// Array writes the field name with an array of n elements, element i being elem(i)
// (OpenArray, with the elements known).
func (d *Writer) Array(name string, n int, elem func(i int) any) {
	a := d.OpenArray(name)
	for i := 0; i < n && d.err == nil; i++ {
		a.Add(elem(i))
	}
	a.CloseArray()
}

// Close ends the object (and the line) and flushes it.
func (d *Writer) Close() error {
	if d.err != nil {
		return d.err
	}
	if d.fields == 0 {
		d.w.WriteByte('}')
	} else {
		d.w.WriteString("\n}")
	}
	d.w.WriteByte('\n')
	return d.w.Flush()
}

func (d *Writer) key(name string) {
	if d.err != nil {
		return
	}
	if d.fields > 0 {
		d.w.WriteByte(',')
	}
	d.fields++
	d.w.WriteString("\n" + Indent)
	d.value(d.field, name)
	d.w.WriteString(": ")
}

// value writes v as enc lays it out, without the newline json.Encoder ends a value with.
func (d *Writer) value(enc *json.Encoder, v any) {
	if d.err != nil {
		return
	}
	d.buf.Reset()
	if err := enc.Encode(v); err != nil {
		d.err = err
		return
	}
	if _, err := d.w.Write(bytes.TrimSuffix(d.buf.Bytes(), []byte("\n"))); err != nil {
		d.err = err
	}
}
