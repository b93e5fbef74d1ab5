package smlog

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system CPU time: on a machine shared with other
// work, wall time per op says more about the others than about the code.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the CPU time per op and the throughput it allows.
func reportCPU(b *testing.B, start time.Duration, bytes int) {
	cpu := cpuTime() - start
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(bytes)*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
}

// benchLog is the lab's two recorded logs repeated to size bytes: mostly OpenSM's
// ordinary lines, with every kind of event the lab produced among them.
func benchLog(b *testing.B, size int) []byte {
	b.Helper()
	var chunk []byte
	for _, name := range []string{"lab-verbose.log", "lab.log"} {
		c, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		chunk = append(chunk, c...)
	}
	return bytes.Repeat(chunk, size/len(chunk)+1)[:size]
}

// BenchmarkRead reads a 64 MiB log into a summary, as sm log does (the summary's
// explanations aside): its throughput is what scripts/bench-smlog compares with
// grep -c P_Key on a 1 GB log.
func BenchmarkRead(b *testing.B) {
	log := benchLog(b, 64<<20)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		s := NewSummary()
		var a *Assembler
		a = NewAssembler(time.Now(), time.UTC, func(e *Event) {
			if s.Add(e).First != e {
				a.Recycle(e) // as sm log does: only a group's first event is kept
			}
		})
		a.NoLines = true // as sm log's summary: it prints no log lines
		if err := Read(context.Background(), bytes.NewReader(log), a); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start, len(log))
}

// BenchmarkReadQuiet is BenchmarkRead on the same log without its event lines: the
// cost of the lines that are not events.
func BenchmarkReadQuiet(b *testing.B) {
	var quiet []byte
	for _, l := range bytes.SplitAfter(benchLog(b, 8<<20), []byte("\n")) {
		if !bytes.Contains(l, []byte("ERR")) && !bytes.Contains(l, []byte("Notice")) && !bytes.Contains(l, []byte("PARSE")) && !bytes.Contains(l, []byte("Partition")) {
			quiet = append(quiet, l...)
		}
	}
	log := bytes.Repeat(quiet, (64<<20)/len(quiet)+1)[:64<<20]
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		var a *Assembler
		a = NewAssembler(time.Now(), time.UTC, func(e *Event) { a.Recycle(e) })
		a.NoLines = true
		if err := Read(context.Background(), bytes.NewReader(log), a); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start, len(log))
}

// stormLog is a trap storm: the lab's noisy trap (two error lines each, OpenSM no
// longer reports it) repeated to size bytes.
func stormLog(b *testing.B, size int) []byte {
	b.Helper()
	c, err := os.ReadFile(filepath.Join("testdata", "lab.log"))
	if err != nil {
		b.Fatal(err)
	}
	var storm []byte
	lines := bytes.SplitAfter(c, []byte("\n"))
	for i, l := range lines {
		// The last of the repeated trap's header and detail lines (no report).
		if bytes.Contains(l, []byte("QP1:0xcde")) && i+1 < len(lines) && !bytes.Contains(lines[i+1], []byte("Reporting")) {
			storm = append(append(storm, lines[i-1]...), l...)
			break
		}
	}
	if storm == nil {
		b.Fatal("no unreported trap in lab.log")
	}
	return bytes.Repeat(storm, size/len(storm)+1)[:size]
}

// BenchmarkReadStorm reads a 64 MiB trap storm: every line is an event's.
func BenchmarkReadStorm(b *testing.B) {
	log := stormLog(b, 64<<20)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		s := NewSummary()
		var a *Assembler
		a = NewAssembler(time.Now(), time.UTC, func(e *Event) {
			if s.Add(e).First != e {
				a.Recycle(e)
			}
		})
		a.NoLines = true
		if err := Read(context.Background(), bytes.NewReader(log), a); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start, len(log))
}

// BenchmarkGrepCount is bytes.Count of "P_Key" on the storm: what grep -c does at
// its core, for the ratio in-process.
func BenchmarkGrepCount(b *testing.B) {
	log := stormLog(b, 64<<20)
	b.SetBytes(int64(len(log)))
	start := cpuTime()
	for b.Loop() {
		_ = bytes.Count(log, []byte("P_Key"))
	}
	reportCPU(b, start, len(log))
}
