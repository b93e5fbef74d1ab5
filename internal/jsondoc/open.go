package jsondoc

// OpenArray starts the field name with an array whose elements are not known yet (the
// events of a log as it is read): Add writes each, CloseArray ends it. No other field
// may be written while it is open.
func (d *Writer) OpenArray(name string) *ArrayWriter {
	d.key(name)
	return &ArrayWriter{d: d}
}

// ArrayWriter writes one array's elements as they come (OpenArray).
type ArrayWriter struct {
	d *Writer
	n int
}

// Add writes the next element.
func (a *ArrayWriter) Add(v any) {
	d := a.d
	if d.err != nil {
		return
	}
	if a.n == 0 {
		d.w.WriteByte('[')
	} else {
		d.w.WriteByte(',')
	}
	a.n++
	d.w.WriteString("\n" + Indent + Indent)
	d.value(d.elem, v)
}

// CloseArray ends the array.
func (a *ArrayWriter) CloseArray() {
	if a.d.err != nil {
		return
	}
	if a.n == 0 {
		a.d.w.WriteString("[]")
		return
	}
	a.d.w.WriteString("\n" + Indent + "]")
}
