package smlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// bufSize is how much of the log is read at once (256 KiB: the read and the scan
// of a piece stay in the cache). A line longer than that (no
// OpenSM line is: LOG_ENTRY_SIZE_MAX is 4096) is cut there and its rest skipped.
const bufSize = 1 << 18

// lineReader splits what it reads into lines and hands them to an Assembler, with a
// buffer of fixed size: memory does not grow with the log.
type lineReader struct {
	a    *Assembler
	buf  []byte
	n    int  // bytes held in buf
	skip bool // dropping the rest of an over-long line
	// Read counts the bytes read.
	Read int64
}

func newLineReader(a *Assembler) *lineReader {
	return &lineReader{a: a, buf: make([]byte, bufSize)}
}

// fill reads once from r into the buffer and hands over every whole line. It
// returns what Read returned.
func (lr *lineReader) fill(r io.Reader) (int, error) {
	m, err := r.Read(lr.buf[lr.n:])
	lr.n += m
	lr.Read += int64(m)
	data := lr.buf[:lr.n]
	start := 0
	for {
		i := bytes.IndexByte(data[start:], '\n')
		if i < 0 {
			break
		}
		line := data[start : start+i]
		start += i + 1
		if lr.skip {
			lr.skip = false
			continue
		}
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		lr.a.Line(line)
	}
	rest := copy(lr.buf, data[start:])
	lr.n = rest
	if lr.n == len(lr.buf) {
		// A line longer than the buffer: hand over what there is, drop the rest.
		if !lr.skip {
			lr.a.Line(lr.buf[:lr.n])
		}
		lr.n, lr.skip = 0, true
	}
	return m, err
}

// end hands over a last line without a newline.
func (lr *lineReader) end() {
	if lr.n > 0 && !lr.skip {
		lr.a.Line(lr.buf[:lr.n])
	}
	lr.n, lr.skip = 0, false
}

// Read reads a whole log from r into a, then flushes the events still pending.
// It stops early when ctx ends, returning its error.
//
// The reading is done ahead by a second goroutine (readAhead): the read calls (a
// copy out of the page cache, a fifth of the time on a log in tmpfs) overlap the
// parsing. Memory stays flat: aheadBufs buffers of bufSize.
func Read(ctx context.Context, r io.Reader, a *Assembler) error {
	err := readLines(ctx, r, a.Line)
	a.Flush()
	return err
}

// aheadBufs is how many buffers readAhead cycles through: one being read into, one
// waiting, one being parsed.
const aheadBufs = 3

// chunk is a piece of the log read ahead: whole lines, except for the last piece
// (final: a last line may lack its newline) and a piece of a line longer than the
// buffer (cut).
type chunk struct {
	data  []byte
	buf   []byte // the buffer data is in, to give back
	cut   bool
	final bool
	err   error // what ended the reading (nil on EOF), with final
}

// readLines hands every line of r (without its newline, nor a '\r' before it) to
// line, in order. A line longer than bufSize (no OpenSM line is: LOG_ENTRY_SIZE_MAX
// is 4096) is cut there and its rest skipped.
func readLines(ctx context.Context, r io.Reader, line func([]byte)) error {
	chunks := make(chan chunk, aheadBufs-1)
	free := make(chan []byte, aheadBufs)
	for range aheadBufs {
		free <- make([]byte, bufSize)
	}
	stop := make(chan struct{})
	defer close(stop)
	go readAhead(r, chunks, free, stop)
	skip := false // dropping the rest of a cut line
	hand := func(l []byte) {
		if len(l) > 0 && l[len(l)-1] == '\r' {
			l = l[:len(l)-1]
		}
		line(l)
	}
	for {
		var c chunk
		select {
		case c = <-chunks:
		case <-ctx.Done():
			return ctx.Err()
		}
		data := c.data
		if c.cut {
			if !skip {
				hand(data)
			}
			skip = true
			free <- c.buf
			continue
		}
		if skip {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				data = nil // the final piece: the cut line's end, without a newline
			} else {
				data = data[i+1:]
			}
			skip = false
		}
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				hand(data) // the last line, without a newline (final only)
				break
			}
			hand(data[:i])
			data = data[i+1:]
		}
		if c.final {
			return c.err
		}
		free <- c.buf
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// readAhead reads r into the free buffers and sends them as chunks of whole lines;
// the part of a line at a buffer's end is carried to the next buffer's start. It
// ends after the final chunk, or when stop is closed.
func readAhead(r io.Reader, chunks chan<- chunk, free chan []byte, stop <-chan struct{}) {
	carry := make([]byte, 0, 4096)
	send := func(c chunk) bool {
		select {
		case chunks <- c:
			return true
		case <-stop:
			return false
		}
	}
	for {
		var buf []byte
		select {
		case buf = <-free:
		case <-stop:
			return
		}
		n := copy(buf, carry)
		carry = carry[:0]
		m, err := r.Read(buf[n:])
		data := buf[:n+m]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			send(chunk{data: data, buf: buf, final: true, err: err})
			return
		}
		// Only the new bytes: the carried ones hold no newline. From the end, so
		// this looks at about one line.
		last := bytes.LastIndexByte(data[n:], '\n')
		if last >= 0 {
			last += n
		}
		switch {
		case last >= 0:
			carry = append(carry, data[last+1:]...)
			if !send(chunk{data: data[:last+1], buf: buf}) {
				return
			}
		case len(data) == len(buf):
			if !send(chunk{data: data, buf: buf, cut: true}) {
				return
			}
		default: // a piece of one line, short of the buffer: keep reading it
			carry = append(carry, data...)
			free <- buf
		}
	}
}

// FollowOptions tune Follow.
type FollowOptions struct {
	// Poll is how often a quiet log is checked for growth, rotation and truncation
	// (default 250ms).
	Poll time.Duration
	// Quiet flushes events still waiting for lines after the log has been quiet
	// this long (default 1s): OpenSM writes an event's lines at once.
	Quiet time.Duration
	// FromEnd starts at the end of the file instead of its beginning.
	FromEnd bool
	// Wait waits for a log that is not there yet (the exporter started before
	// OpenSM) instead of returning the error.
	Wait bool
	// Notice receives what Follow noticed about the file (rotated, truncated,
	// missing), for a note on stderr; nil to ignore.
	Notice func(string)
}

// Follow reads the log at path as `tail -F` does, until ctx ends: to its end, then
// whatever is written after, surviving rotation. A log renamed away (logrotate's
// create mode, then OpenSM's SIGUSR1 reopening) is read to its end and the new file at
// path from its start; a log truncated in place (logrotate's copytruncate, OpenSM's
// own log_max_size) is read again from its start. A missing file is waited for.
func Follow(ctx context.Context, path string, a *Assembler, o FollowOptions) error {
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	if o.Quiet <= 0 {
		o.Quiet = time.Second
	}
	note := func(s string) {
		if o.Notice != nil {
			o.Notice(s)
		}
	}
	lr := newLineReader(a)
	var f *os.File
	var off int64
	open := func(fromEnd bool) error {
		nf, err := os.Open(path)
		if err != nil {
			return err
		}
		if fromEnd {
			if off, err = nf.Seek(0, io.SeekEnd); err != nil {
				nf.Close()
				return err
			}
		} else {
			off = 0
		}
		f = nf
		return nil
	}
	for {
		err := open(o.FromEnd)
		if err == nil {
			break
		}
		if !o.Wait || !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.Poll):
		}
	}
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	quietSince := time.Now()
	missing := false
	for {
		// Read what there is.
		for {
			m, err := lr.fill(f)
			off += int64(m)
			if m > 0 {
				quietSince = time.Now()
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("reading %s: %w", path, err)
			}
			if m == 0 {
				break
			}
			if err := ctx.Err(); err != nil {
				return nil
			}
		}
		if time.Since(quietSince) >= o.Quiet {
			a.Flush() // a partial last line stays: OpenSM may be writing it
		}
		select {
		case <-ctx.Done():
			lr.end()
			a.Flush()
			return nil
		case <-time.After(o.Poll):
		}
		// Rotated, truncated, or gone?
		cur, err := f.Stat()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		st, err := os.Stat(path)
		switch {
		case err != nil:
			if !missing {
				note(fmt.Sprintf("%s is gone (rotated?): waiting for it to come back", path))
				missing = true
			}
		case !sameFile(cur, st):
			// Renamed away and recreated: what was written to the old file after
			// the last read is read first, all of it.
			for {
				m, err := lr.fill(f)
				if m == 0 || err != nil {
					break
				}
			}
			lr.end()
			f.Close()
			f = nil
			if err := open(false); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			missing = false
			note(fmt.Sprintf("%s was rotated: reading the new file from its start", path))
		case cur.Size() < off:
			// Truncated in place.
			lr.end()
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			off = 0
			missing = false
			note(fmt.Sprintf("%s was truncated: reading it again from its start", path))
		default:
			missing = false
		}
	}
}

// sameFile: the same device and inode.
func sameFile(a, b os.FileInfo) bool { return os.SameFile(a, b) }
