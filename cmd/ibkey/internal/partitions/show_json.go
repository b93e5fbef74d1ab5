package partitions

import (
	"io"
	"runtime"
	"strconv"
	"sync/atomic"

	"github.com/ibkey/ibkey/internal/check"
	"github.com/ibkey/ibkey/internal/jsonw"
	"github.com/ibkey/ibkey/internal/partconf"
	"github.com/ibkey/ibkey/internal/query"
)

// writeJSON streams the document of `partitions show -o json` (schema
// schemas/partitions-show.schema.json) from the model's values: compact, or indented
// by two spaces. The bytes are what encoding/json writes for the document's structs
// (TestShowJSONMatchesStructs keeps them equal): building those structs for 20,000
// ports took seconds and gigabytes, the stream takes a 64 KiB buffer.
func (s *show) writeJSON(out io.Writer, indent bool) error {
	p := s.p
	in := ""
	if indent {
		in = "  "
	}
	e := showEncoder{w: jsonw.New(out, in), src: p.Config, compact: !indent}
	w := e.w
	w.BeginObject()
	w.Key("schema_version")
	w.Int(1)
	w.Key("file")
	w.String(p.Config.File)
	w.Key("rejected")
	w.Bool(p.Config.Rejected)
	if p.Config.Uncertain != "" {
		w.Key("uncertain")
		w.String(p.Config.Uncertain)
	}
	w.Key("applied")
	if p.Config.Rejected {
		w.String("opensm_default")
	} else {
		w.String("file")
	}
	if len(s.history) > 0 {
		w.Key("previous")
		w.String(s.history[len(s.history)-1])
	}
	w.Key("allow_both")
	w.Bool(p.Options.AllowBoth)
	w.Key("sm_guid")
	if p.Options.SMGUID != 0 {
		w.Hex(uint64(p.Options.SMGUID), 16)
	} else {
		w.Null()
	}
	w.Key("table_size")
	w.Int(int64(p.Options.TableSize))
	w.Key("partitions")
	parts := keyOrder(s.applied.Partitions)
	e.array(len(parts), 16, func(e *showEncoder, i int) { e.partition(parts[i], p.Options) })
	w.Key("ports")
	e.array(len(s.model.Ports), 64, func(e *showEncoder, i int) {
		t := s.p.PortTableReusing(s.model, s.prevModel, s.model.Ports[i], e.reuse)
		e.port(&t, s.names, p.Options.TableSize)
		e.reuse = t
	})
	w.EndObject()
	return w.End()
}

// arrayWorkers is how many goroutines array encodes with (a variable for the tests).
var arrayWorkers = func() int { return min(runtime.GOMAXPROCS(0), 4) }

// array writes an array of n elements, element i by enc. A large one is encoded by
// several goroutines at once, each taking runs of runLen elements in turn and
// encoding them with an encoder of its own into a buffer of its own (jsonw's Sub),
// which this goroutine splices into the document in order. At most two runs per
// goroutine are encoded and not yet written, which bounds the memory.
func (e *showEncoder) array(n, runLen int, enc func(e *showEncoder, i int)) {
	w := e.w
	w.BeginArray()
	defer w.EndArray()
	workers := arrayWorkers()
	runs := (n + runLen - 1) / runLen
	if workers < 2 || runs < 4 {
		for i := range n {
			enc(e, i)
		}
		return
	}
	done := make([]chan []byte, runs)
	for k := range done {
		done[k] = make(chan []byte, 1)
	}
	// A goroutine takes a token before it takes a run: runs are taken in order, so the
	// one written next always has its token and never waits for one.
	tokens := make(chan struct{}, 2*workers)
	// Buffers go round: a new one is made as large as the largest run so far, not
	// grown to it (a run of 64 ports is about 220 KB; growing one left as much garbage).
	free := make(chan []byte, 2*workers)
	var next, largest atomic.Int64
	for range workers {
		go func() {
			we := &showEncoder{src: e.src, compact: e.compact}
			for {
				tokens <- struct{}{}
				k := int(next.Add(1) - 1)
				if k >= runs {
					<-tokens
					return
				}
				var buf []byte
				select {
				case buf = <-free:
				default:
					buf = make([]byte, 0, largest.Load())
				}
				we.w = w.Sub(buf, k == 0)
				for i := k * runLen; i < min(n, (k+1)*runLen); i++ {
					enc(we, i)
				}
				done[k] <- we.w.Bytes()
			}
		}()
	}
	for k := range runs {
		b := <-done[k]
		w.Splice(b)
		if int64(cap(b)) > largest.Load() {
			largest.Store(int64(cap(b)))
		}
		select {
		case free <- b:
		default:
		}
		<-tokens
	}
}

// showEncoder writes the parts of the document; scratch holds "file:line:col" texts.
// Compact, the objects there are millions of (members, table entries) are appended
// to obj whole and written as one value (jsonw's Raw), their keys as constant bytes.
type showEncoder struct {
	w       *jsonw.Writer
	src     *partconf.Config
	scratch []byte
	compact bool
	obj     []byte
	// escFile is `"` and escFor escaped as a JSON string, without the closing quote.
	escFile []byte
	escFor  string
	reuse   query.PortTable // the last table written, whose arrays the next one takes
}

// appendAt appends where an item is written as a JSON string (at's text).
func (e *showEncoder) appendAt(b []byte, pos partconf.Pos) []byte {
	if pos.Line == 0 {
		return jsonw.AppendString(b, posText(pos, e.src))
	}
	if e.escFile == nil || pos.File != e.escFor {
		// JSON escapes character by character: the file's escaped text followed by
		// ":LINE:COL" is the escaped "FILE:LINE:COL".
		q := jsonw.AppendString(nil, pos.File)
		e.escFile, e.escFor = q[:len(q)-1], pos.File
	}
	b = append(b, e.escFile...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(pos.Line), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(pos.Col), 10)
	return append(b, '"')
}

// memberObject is a member's object, compact.
func (e *showEncoder) memberObject(b []byte, m *partconf.Member, opt partconf.Options) []byte {
	b = append(b, `{"member":`...)
	b = jsonw.AppendString(b, m.Text())
	b = append(b, `,"kind":`...)
	b = jsonw.AppendString(b, m.Kind.String())
	b = append(b, `,"rule":`...)
	if m.Kind == partconf.KindGUID {
		b = append(b, '"')
		b = jsonw.AppendHex(b, uint64(m.GUID), 16)
		b = append(b, '"')
	} else {
		b = jsonw.AppendString(b, memberRule(m, opt.SMGUID))
	}
	b = append(b, `,"membership":`...)
	if m.Membership == partconf.FlagBoth && !opt.AllowBoth {
		b = append(b, `"full","written_membership":`...)
	}
	b = jsonw.AppendString(b, m.Membership.String())
	b = append(b, `,"at":`...)
	b = e.appendAt(b, m.Pos())
	return append(b, '}')
}

// entryObject is a table entry's object, compact.
func (e *showEncoder) entryObject(b []byte, sl *query.Slot) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(sl.Index), 10)
	if en := sl.Entry; en != nil {
		b = append(b, `,"pkey":"`...)
		b = jsonw.AppendHex(b, uint64(en.PKey), 4)
		b = append(b, `","key":"`...)
		b = jsonw.AppendHex(b, uint64(en.PKey.Partition()), 4)
		b = append(b, `","membership":`...)
		b = jsonw.AppendString(b, en.PKey.Membership().String())
		b = append(b, `,"valid":true,"partition":`...)
		b = jsonw.AppendString(b, en.Partition.Name)
		b = append(b, `,"decided_by":`...)
		b = jsonw.AppendString(b, en.DecidedBy.Text())
		b = append(b, `,"at":`...)
		b = e.appendAt(b, en.DecidedBy.Pos())
	} else {
		b = append(b, `,"pkey":"0x0000","key":"0x0000","membership":null,"valid":false,"partition":null,"decided_by":null,"at":null`...)
	}
	if sl.Hole() {
		b = append(b, `,"hole":true`...)
	}
	if sl.Before.Valid() {
		b = append(b, `,"before":"`...)
		b = jsonw.AppendHex(b, uint64(sl.Before), 4)
		b = append(b, `","kept":`...)
		b = strconv.AppendBool(b, sl.Kept)
	}
	return append(b, '}')
}

// at writes where an item is written, as posText prints it, without a string per item.
func (e *showEncoder) at(pos partconf.Pos) {
	if pos.Line == 0 {
		e.w.String(posText(pos, e.src))
		return
	}
	b := append(e.scratch[:0], pos.File...)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(pos.Line), 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(pos.Col), 10)
	e.scratch = b
	e.w.StringBytes(b)
}

func (e *showEncoder) partition(part *partconf.Partition, opt partconf.Options) {
	w := e.w
	w.BeginObject()
	w.Key("key")
	w.Hex(uint64(part.Key), 4)
	w.Key("name")
	w.String(part.Name)
	w.Key("flags")
	w.BeginArray()
	for _, f := range partitionFlags(part) {
		w.String(f)
	}
	w.EndArray()
	w.Key("ipoib")
	w.Bool(part.IPoIB)
	w.Key("defined_at")
	w.BeginArray()
	for _, d := range part.Defs {
		e.at(d.Pos)
	}
	w.EndArray()
	w.Key("members")
	w.BeginArray()
	for mi := range part.Members {
		m := &part.Members[mi]
		if e.compact {
			e.obj = e.memberObject(e.obj[:0], m, opt)
			w.Raw(e.obj)
			continue
		}
		w.BeginObject()
		w.Key("member")
		w.String(m.Text())
		w.Key("kind")
		w.String(m.Kind.String())
		w.Key("rule")
		if m.Kind == partconf.KindGUID {
			w.Hex(uint64(m.GUID), 16)
		} else {
			w.String(memberRule(m, opt.SMGUID))
		}
		w.Key("membership")
		if m.Membership == partconf.FlagBoth && !opt.AllowBoth {
			w.String(partconf.FlagFull.String())
			w.Key("written_membership")
		}
		w.String(m.Membership.String())
		w.Key("at")
		e.at(m.Pos())
		w.EndObject()
	}
	w.EndArray()
	w.Key("groups")
	w.BeginArray()
	for _, g := range part.Groups {
		w.BeginObject()
		w.Key("mgid")
		w.String(g.MGID.String())
		w.Key("qkey")
		w.Hex(uint64(g.QKey), 8)
		w.Key("mtu")
		w.Int(int64(g.MTU))
		w.Key("rate")
		w.Int(int64(g.Rate))
		w.Key("sl")
		w.Int(int64(g.SL))
		w.Key("scope")
		w.Int(int64(g.Scope))
		w.Key("broadcast")
		w.Bool(g.Broadcast)
		w.Key("at")
		e.at(g.Pos)
		w.EndObject()
	}
	w.EndArray()
	w.EndObject()
}

func (e *showEncoder) port(t *query.PortTable, names map[check.GUID]string, tableSize int) {
	w := e.w
	w.BeginObject()
	w.Key("port_guid")
	w.Hex(uint64(t.Port.GUID), 16)
	if name, ok := names[t.Port.GUID]; ok {
		w.Key("node_desc")
		w.String(name)
	}
	w.Key("type")
	w.String(string(t.Port.Type))
	w.Key("in_file")
	w.Bool(t.InFile)
	w.Key("sm")
	w.Bool(t.SM)
	w.Key("table_size")
	w.Int(int64(tableSize))
	w.Key("entries")
	w.BeginArray()
	for i := range t.Slots {
		sl := &t.Slots[i]
		if e.compact {
			e.obj = e.entryObject(e.obj[:0], sl)
			w.Raw(e.obj)
			continue
		}
		w.BeginObject()
		w.Key("index")
		w.Int(int64(sl.Index))
		if en := sl.Entry; en != nil {
			w.Key("pkey")
			w.Hex(uint64(en.PKey), 4)
			w.Key("key")
			w.Hex(uint64(en.PKey.Partition()), 4)
			w.Key("membership")
			w.String(en.PKey.Membership().String())
			w.Key("valid")
			w.Bool(true)
			w.Key("partition")
			w.String(en.Partition.Name)
			w.Key("decided_by")
			w.String(en.DecidedBy.Text())
			w.Key("at")
			e.at(en.DecidedBy.Pos())
		} else {
			w.Key("pkey")
			w.String("0x0000")
			w.Key("key")
			w.String("0x0000")
			for _, k := range [...]string{"membership", "valid", "partition", "decided_by", "at"} {
				w.Key(k)
				if k == "valid" {
					w.Bool(false)
				} else {
					w.Null()
				}
			}
		}
		if sl.Hole() {
			w.Key("hole")
			w.Bool(true)
		}
		if sl.Before.Valid() {
			w.Key("before")
			w.Hex(uint64(sl.Before), 4)
			w.Key("kept")
			w.Bool(sl.Kept)
		}
		w.EndObject()
	}
	w.EndArray()
	w.Key("dropped")
	w.BeginArray()
	for _, d := range t.Dropped {
		w.BeginObject()
		w.Key("pkey")
		w.Hex(uint64(d.PKey), 4)
		w.Key("membership")
		w.String(d.PKey.Membership().String())
		w.Key("partition")
		w.String(d.Partition.Name)
		w.Key("decided_by")
		w.String(d.DecidedBy.Text())
		w.Key("at")
		e.at(d.DecidedBy.Pos())
		w.EndObject()
	}
	w.EndArray()
	w.EndObject()
}
