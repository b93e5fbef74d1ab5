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

// splitter cuts what is read into lines, piece by piece (Read's and Follow's one
// way): whole lines are handed over where they lie; the start of a line whose newline
// has not come yet is kept (carry) until it does.
type splitter struct {
	line  func([]byte)
	carry []byte
	skip  bool // dropping the rest of a cut line
}

func (s *splitter) hand(l []byte) {
	if len(l) > bufSize {
		l = l[:bufSize]
	}
	if len(l) > 0 && l[len(l)-1] == '\r' {
		l = l[:len(l)-1]
	}
	s.line(l)
}

// feed hands over the lines that data completes.
func (s *splitter) feed(data []byte) {
	if len(s.carry) > 0 || s.skip {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			s.hold(data)
			return
		}
		if s.skip {
			s.skip = false
		} else {
			s.carry = append(s.carry, data[:i]...)
			s.hand(s.carry)
		}
		s.carry = s.carry[:0]
		data = data[i+1:]
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		s.hand(data[:i])
		data = data[i+1:]
	}
	s.hold(data)
}

// hold keeps part, the start of a line, cutting the line at bufSize.
func (s *splitter) hold(part []byte) {
	if s.skip || len(part) == 0 {
		return
	}
	if room := bufSize - len(s.carry); len(part) >= room {
		s.carry = append(s.carry, part[:room]...)
		s.hand(s.carry)
		s.carry, s.skip = s.carry[:0], true
		return
	}
	s.carry = append(s.carry, part...)
}

// end hands over a last line without its newline.
func (s *splitter) end() {
	if len(s.carry) > 0 && !s.skip {
		s.hand(s.carry)
	}
	s.carry, s.skip = s.carry[:0], false
}

// Read reads a whole log from r into a, then flushes the events still pending.
// It stops early when ctx ends, returning its error.
//
// The reading is done ahead by a second goroutine (readAhead): the read calls (a
// copy out of the page cache, a fifth of the time on a log in tmpfs) overlap the
// parsing, and a read that blocks (a pipe) does not keep ctx's end waiting. Memory
// stays flat: two buffers of bufSize.
func Read(ctx context.Context, r io.Reader, a *Assembler) error {
	err := readLines(ctx, r, a.Line)
	a.Flush()
	return err
}

// chunk is what one read returned.
type chunk struct {
	data []byte
	err  error
}

// readLines hands every line of r (without its newline, nor a '\r' before it, cut at
// bufSize) to line, in order. It returns r's error, nil at EOF.
func readLines(ctx context.Context, r io.Reader, line func([]byte)) error {
	chunks := make(chan chunk)
	stop := make(chan struct{})
	defer close(stop)
	go readAhead(r, chunks, stop)
	s := &splitter{line: line}
	for {
		var c chunk
		select {
		case c = <-chunks:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.feed(c.data)
		if c.err != nil {
			s.end()
			if errors.Is(c.err, io.EOF) {
				return nil
			}
			return c.err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// readAhead reads r into two buffers in turn and sends what each read returned,
// until an error (io.EOF included) or until stop is closed. A buffer is read into
// again once the other one has been received: the receiver is done with it then.
func readAhead(r io.Reader, chunks chan<- chunk, stop <-chan struct{}) {
	bufs := [2][]byte{make([]byte, bufSize), make([]byte, bufSize)}
	for i := 0; ; i ^= 1 {
		m, err := r.Read(bufs[i])
		select {
		case chunks <- chunk{data: bufs[i][:m], err: err}:
		case <-stop:
			return
		}
		if err != nil {
			return
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
	// missing), for a note on stderr.
	Notice func(string)
	// Read, when set, is called after each read that handed lines over, between
	// the assembler's lines (its Lines and Records may be read then).
	Read func()
	// NotRead, when set, is told why the log is not being read while Follow waits
	// for it (not there yet, or gone after a rotation), and "" once it reads it
	// again.
	NotRead func(why string)
}

func (o FollowOptions) notRead(why string) {
	if o.NotRead != nil {
		o.NotRead(why)
	}
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
	sp := &splitter{line: a.Line}
	buf := make([]byte, bufSize)
	// fill reads once from f and hands over the lines it completes.
	fill := func(f *os.File) (int, error) {
		m, err := f.Read(buf)
		sp.feed(buf[:m])
		if m > 0 && o.Read != nil {
			o.Read()
		}
		return m, err
	}
	f, err := os.Open(path)
	if o.Wait && errors.Is(err, fs.ErrNotExist) {
		o.notRead(path + " is not there yet: waiting for it")
	}
	for o.Wait && errors.Is(err, fs.ErrNotExist) {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.Poll):
		}
		f, err = os.Open(path)
	}
	if err != nil {
		return err
	}
	o.notRead("")
	defer func() { f.Close() }() // the file open at the end (rotation replaces f)
	if o.FromEnd {
		if _, err := f.Seek(0, io.SeekEnd); err != nil {
			return err
		}
	}
	quietSince := time.Now()
	missing := false
	for {
		// Read what there is.
		for {
			m, err := fill(f)
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
			sp.end()
			a.Flush()
			return nil
		case <-time.After(o.Poll):
		}
		// Rotated, truncated (shorter than what was read), or gone?
		cur, err := f.Stat()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		off, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		// What is at path is judged by the file opened there, not by a look at the
		// path and then an open: a log rotated again in between (gone, or another
		// file) would otherwise fail the open or follow a file never compared.
		nf, err := os.Open(path)
		var st fs.FileInfo
		if err == nil {
			if st, err = nf.Stat(); err != nil {
				nf.Close()
			}
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", path, err)
		}
		switch {
		case err != nil && !missing:
			gone := path + " is gone (rotated?): waiting for it to come back"
			o.Notice(gone)
			o.notRead(gone)
		case err == nil && missing:
			o.notRead("")
		}
		missing = err != nil
		switch {
		case err != nil:
		case !os.SameFile(cur, st):
			// Renamed away and recreated: what was written to the old file after
			// the last read is read first, all of it.
			for {
				m, err := fill(f)
				if m == 0 || err != nil {
					break
				}
			}
			sp.end()
			f.Close()
			f = nf
			o.Notice(fmt.Sprintf("%s was rotated: reading the new file from its start", path))
		case cur.Size() < off:
			// Truncated in place.
			nf.Close()
			sp.end()
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			o.Notice(fmt.Sprintf("%s was truncated: reading it again from its start", path))
		default:
			nf.Close()
		}
	}
}
