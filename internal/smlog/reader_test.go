package smlog

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// refLines is what readLines must hand over for log: its lines without the newline
// and a '\r' before it, a line longer than bufSize cut to its first bufSize bytes.
func refLines(log []byte) [][]byte {
	var out [][]byte
	for len(log) > 0 {
		i := bytes.IndexByte(log, '\n')
		l := log
		if i >= 0 {
			l, log = log[:i], log[i+1:]
		} else {
			log = nil
		}
		if len(l) >= bufSize {
			l = l[:bufSize]
		}
		out = append(out, bytes.TrimSuffix(l, []byte("\r")))
	}
	return out
}

// chunkyReader returns at most a random number of bytes per Read.
type chunkyReader struct {
	r   io.Reader
	rnd *rand.Rand
	max int
}

func (c *chunkyReader) Read(p []byte) (int, error) {
	if n := 1 + c.rnd.IntN(c.max); n < len(p) {
		p = p[:n]
	}
	return c.r.Read(p)
}

// TestReadLines: the lines read ahead are the log's lines, whatever the sizes of
// the reads, with lines across buffers, lines longer than a buffer, CRLF, and a
// last line without a newline.
func TestReadLines(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for round := range 16 {
		var log []byte
		for range rnd.IntN(400) {
			n := rnd.IntN(300)
			switch rnd.IntN(50) {
			case 0:
				n = bufSize - 2 + rnd.IntN(4) // about a buffer
			case 1:
				n = bufSize*2 + rnd.IntN(1000) // longer than two
			}
			l := bytes.Repeat([]byte{'a' + byte(round%26)}, n)
			if rnd.IntN(5) == 0 {
				l = append(l, '\r')
			}
			log = append(append(log, l...), '\n')
		}
		if rnd.IntN(2) == 0 {
			log = append(log, "last line without newline"...)
		}
		want := refLines(log)
		readers := map[string]io.Reader{
			"whole":   bytes.NewReader(log),
			"chunks":  &chunkyReader{r: bytes.NewReader(log), rnd: rnd, max: 1 + rnd.IntN(70000)},
			"half":    iotest.HalfReader(bytes.NewReader(log)),
			"dataEOF": iotest.DataErrReader(bytes.NewReader(log)),
		}
		if len(log) < 40000 {
			readers["bytes"] = iotest.OneByteReader(bytes.NewReader(log))
		}
		for name, r := range readers {
			var got [][]byte
			if err := readLines(context.Background(), r, func(l []byte) { got = append(got, bytes.Clone(l)) }); err != nil {
				t.Fatalf("round %d %s: %v", round, name, err)
			}
			if len(got) != len(want) {
				t.Fatalf("round %d %s: %d lines, want %d", round, name, len(got), len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("round %d %s: line %d is %d bytes, want %d", round, name, i, len(got[i]), len(want[i]))
				}
			}
		}
	}
}

// TestReadLinesError: a read error ends the reading with that error, after the
// lines before it; a cancelled context ends it with the context's error.
func TestReadLinesError(t *testing.T) {
	r := io.MultiReader(bytes.NewReader([]byte("one\ntwo\nthr")), iotest.ErrReader(io.ErrUnexpectedEOF))
	var got []string
	err := readLines(context.Background(), r, func(l []byte) { got = append(got, string(l)) })
	if err != io.ErrUnexpectedEOF || len(got) != 3 || got[2] != "thr" {
		t.Fatalf("%q, %v", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pr, pw := io.Pipe()
	defer pw.Close()
	if err := readLines(ctx, pr, func([]byte) {}); err != context.Canceled {
		t.Fatalf("cancelled: %v", err)
	}
}
