package demo

import (
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/ibkey/ibkey/internal/ibverbs"
)

// Mover is a counter whose value follows the elapsed time (movers).
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

// movers are the counters that move while `ibkey --demo watch` runs. Each overrides
// one counters/NAME file of the embedded host with a value computed from the time
// elapsed since the demo host was opened, so every run shows the same story:
//
//	value(t) = Start + floor(PerSecond * (t mod ResetEvery))   (ResetEvery 0: never)
//
// capped at the counter's maximum (2^width - 1: error counters saturate, they do not
// wrap). Ports not listed here keep the embedded tree's values: they stay quiet.
var movers = []Mover{
	// Steady partition enforcement drops: a peer keeps sending with a P_Key this port
	// lacks.
	{Device: "mlx5_0", Port: 1, Counter: "port_rcv_constraint_errors", Start: 12, PerSecond: 1},
	{Device: "mlx5_0", Port: 1, Counter: "symbol_error", Start: 3, PerSecond: 0.2},
	// An 8-bit counter close to its maximum: saturates at 255 after 12 s.
	{Device: "mlx5_1", Port: 1, Counter: "port_xmit_constraint_errors", Start: 243, PerSecond: 1},
	// Drops cleared every 20 s (as by perfquery -R): the sampler reports a reset.
	{Device: "mlx5_1", Port: 1, Counter: "port_rcv_constraint_errors", PerSecond: 2, ResetEvery: 20 * time.Second},
	{Device: "mlx5_1", Port: 1, Counter: "port_xmit_discards", Start: 100, PerSecond: 5, ResetEvery: 20 * time.Second},
}

// LiveSysfs is the demo host with the movers moving, read by the ordinary sysfs
// reader: an overlay of the tree that serves their files computed from now() - start
// and everything else from the tree.
func LiveSysfs(now func() time.Time) *ibverbs.Sysfs {
	o := &overlay{base: FS(), now: now, start: now(), files: map[string]Mover{}}
	for _, m := range movers {
		o.files[m.path()] = m
	}
	return ibverbs.FromFS(o, "demo:")
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
	return &memFile{Reader: strings.NewReader(content), info: fi}, nil
}

type memFile struct {
	*strings.Reader
	info fs.FileInfo
}

func (f *memFile) Stat() (fs.FileInfo, error) { return sizedInfo{f.info, f.Size()}, nil }
func (f *memFile) Close() error               { return nil }

type sizedInfo struct {
	fs.FileInfo
	size int64
}

func (i sizedInfo) Size() int64 { return i.size }
