package demo

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs"
)

//go:embed counters.txt
var countersTxt string

// Mover is one line of counters.txt: a counter whose value follows the elapsed time.
type Mover struct {
	Device     string
	Port       int
	Counter    string
	Start      uint64
	PerSecond  float64
	ResetEvery time.Duration // 0: never
}

// Value is the counter's value after elapsed, capped at its width's maximum.
func (m Mover) Value(elapsed time.Duration) uint64 {
	if elapsed < 0 {
		elapsed = 0
	}
	if m.ResetEvery > 0 {
		elapsed %= m.ResetEvery
	}
	v := float64(m.Start) + math.Floor(m.PerSecond*elapsed.Seconds())
	if w := ibverbs.CounterWidths[m.Counter]; w > 0 && w < 64 {
		if max := float64(uint64(1)<<w - 1); v > max {
			v = max
		}
	}
	return uint64(v)
}

func (m Mover) path() string {
	return path.Join(ibverbs.ClassInfiniBand, m.Device, "ports", strconv.Itoa(m.Port), "counters", m.Counter)
}

// ParseMovers reads the counters.txt format: PORT COUNTER START PER_SECOND RESET_EVERY
// (seconds), # comments.
func ParseMovers(r io.Reader) ([]Mover, error) {
	var out []Mover
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 5 {
			return nil, fmt.Errorf("counters.txt:%d: want PORT COUNTER START PER_SECOND RESET_EVERY, got %d fields", n, len(f))
		}
		dev, port, ok := strings.Cut(f[0], "/")
		p, err1 := strconv.Atoi(port)
		start, err2 := strconv.ParseUint(f[2], 10, 64)
		rate, err3 := strconv.ParseFloat(f[3], 64)
		every, err4 := strconv.ParseFloat(f[4], 64)
		if !ok || err1 != nil || err2 != nil || err3 != nil || err4 != nil || rate < 0 || every < 0 {
			return nil, fmt.Errorf("counters.txt:%d: bad line %q", n, sc.Text())
		}
		out = append(out, Mover{Device: dev, Port: p, Counter: f[1], Start: start, PerSecond: rate,
			ResetEvery: time.Duration(every * float64(time.Second))})
	}
	return out, sc.Err()
}

// Movers returns the embedded description.
func Movers() []Mover {
	m, err := ParseMovers(strings.NewReader(countersTxt))
	if err != nil {
		panic(err) // the embedded file is checked by TestMovers: cannot happen
	}
	return m
}

// LiveFS is the demo tree with the counters of counters.txt moving: an overlay that
// serves those files computed from now() - start and everything else from the tree.
func LiveFS(now func() time.Time) fs.FS {
	o := &overlay{base: FS(), now: now, start: now(), files: map[string]Mover{}}
	for _, m := range Movers() {
		o.files[m.path()] = m
	}
	return o
}

// LiveSysfs is the demo host with moving counters, read by the ordinary sysfs reader.
func LiveSysfs(now func() time.Time) *ibverbs.Sysfs {
	return ibverbs.FromFS(LiveFS(now), "demo:")
}

type overlay struct {
	base  fs.FS
	now   func() time.Time
	start time.Time
	files map[string]Mover
}

func (o *overlay) Open(name string) (fs.File, error) {
	m, ok := o.files[name]
	if !ok {
		return o.base.Open(name)
	}
	f, err := o.base.Open(name) // keeps the tree's mode and existence checks
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return nil, err
	}
	content := strconv.FormatUint(m.Value(o.now().Sub(o.start)), 10) + "\n"
	return &memFile{Reader: strings.NewReader(content), info: fi, size: int64(len(content))}, nil
}

type memFile struct {
	*strings.Reader
	info fs.FileInfo
	size int64
}

func (f *memFile) Stat() (fs.FileInfo, error) { return sizedInfo{f.info, f.size}, nil }
func (f *memFile) Close() error               { return nil }

type sizedInfo struct {
	fs.FileInfo
	size int64
}

func (i sizedInfo) Size() int64 { return i.size }
