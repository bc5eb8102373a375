package k6results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Cut says where k6 results end that end mid-line or mid-gzip-stream, as a
// file k6 is still writing does: its json and csv outputs write whole lines
// only now and then, and its gzip output is a complete stream only once k6
// exits. The complete lines before the cut are read; the rest is left out.
type Cut struct {
	// Line is the line left out (the first is 1): the incomplete last
	// line, or, when the gzip stream ends at a line's end, the line after
	// the last.
	Line int64
	// Offset is where that line starts in the content (decompressed): the
	// bytes of the complete lines read.
	Offset int64
	// Partial is the bytes of the incomplete line that were there (0: the
	// gzip stream ends at a line's end).
	Partial int
	// Gzip tells that the gzip stream itself ends early.
	Gzip bool
}

// wholeLines passes on the content of r up to its last newline; at the end
// of r it passes the bytes after that newline only when they are a whole
// record (k6 ends every line with a newline, but a hand-made file may not)
// and records the cut otherwise, or when the gzip stream ends early. It is
// the one place where every format's truncation is handled: the readers of
// json and csv see complete lines only.
type wholeLines struct {
	r io.Reader
	// whole tells whether the last bytes of the content, after its last
	// newline, are a complete record of the format.
	whole func(last []byte) bool
	buf   []byte // read from r and not passed on: buf[off:]
	off   int
	ready int   // buf[off:off+ready] ends at a newline (or is a too long line): passed on
	err   error // r's error, once met
	done  bool  // the end was handled: only err is left to return
	read  int64 // bytes passed on
	lines int64 // newlines passed on
	cut   *Cut
}

// lineChunk is what wholeLines reads from r at a time.
const lineChunk = 64 << 10

// fill reads more of r into the buffer.
func (w *wholeLines) fill() {
	if w.off > 0 {
		n := copy(w.buf, w.buf[w.off:])
		w.buf, w.off = w.buf[:n], 0
	}
	if cap(w.buf)-len(w.buf) < lineChunk/2 {
		w.buf = append(make([]byte, 0, len(w.buf)+lineChunk), w.buf...)
	}
	n, err := w.r.Read(w.buf[len(w.buf):cap(w.buf)])
	seen := len(w.buf) - w.off
	w.buf = w.buf[:len(w.buf)+n]
	if i := bytes.LastIndexByte(w.buf[w.off+seen:], '\n'); i >= 0 {
		w.ready = seen + i + 1
	} else if len(w.buf)-w.off > maxLine {
		// A line past the bound is passed on: the format's reader refuses it.
		w.ready = len(w.buf) - w.off
	}
	w.err = err
}

// peek returns the first n bytes of the content (fewer when it is shorter
// or r fails), without passing them on.
func (w *wholeLines) peek(n int) []byte {
	for len(w.buf)-w.off < n && w.err == nil {
		w.fill()
	}
	return w.buf[w.off:min(len(w.buf), w.off+n)]
}

func (w *wholeLines) Read(p []byte) (int, error) {
	for w.ready == 0 {
		if w.done || w.err != nil && !w.end() {
			return 0, w.err
		}
		if w.ready == 0 && w.err == nil {
			w.fill()
		}
	}
	n := copy(p, w.buf[w.off:w.off+w.ready])
	w.off += n
	w.ready -= n
	w.read += int64(n)
	w.lines += int64(bytes.Count(p[:n], []byte{'\n'}))
	return n, nil
}

// end handles the end of r, once every complete line was passed on: it
// passes on a last line without newline that is a whole record, and
// records a cut otherwise. It returns whether bytes are left to pass on.
func (w *wholeLines) end() bool {
	w.done = true
	gzipCut := errors.Is(w.err, io.ErrUnexpectedEOF)
	if !errors.Is(w.err, io.EOF) && !gzipCut {
		return false // another error: returned as it is
	}
	last := w.buf[w.off:]
	w.err = io.EOF
	if len(last) == 0 && !gzipCut {
		return false
	}
	if !gzipCut && (len(bytes.TrimSpace(last)) == 0 || w.whole != nil && w.whole(last)) {
		w.ready = len(last)
		return true
	}
	w.cut = &Cut{Line: w.lines + 1, Offset: w.read, Partial: len(last), Gzip: gzipCut}
	w.off = len(w.buf)
	return false
}

// wholeJSON tells whether a json line without newline is complete: k6
// writes one JSON object a line, and an object cut short is no JSON.
func wholeJSON(last []byte) bool { return json.Valid(last) }

// wholeCSV returns a test of whether a csv line without newline is complete
// once *fields, the header's fields, is known: a row cut short has fewer
// (a cut in its last field leaves the columns read whole).
func wholeCSV(fields *int) func([]byte) bool {
	return func(last []byte) bool {
		rec, err := csv.NewReader(bytes.NewReader(last)).Read()
		return err == nil && *fields > 0 && len(rec) == *fields
	}
}

// String says where the file was cut, as notes and errors put it.
func (c *Cut) String() string {
	switch {
	case c.Gzip && c.Partial > 0:
		return fmt.Sprintf("the gzip stream ends early, in line %d (its %d bytes there are left out)", c.Line, c.Partial)
	case c.Gzip:
		return fmt.Sprintf("the gzip stream ends early, after line %d", c.Line-1)
	default:
		return fmt.Sprintf("the last line (%d) is incomplete (its %d bytes are left out)", c.Line, c.Partial)
	}
}

// StillWriting is what results cut mid-line or mid-gzip-stream ([Cut]) tell,
// and StillWritingFix what to do about it.
const (
	StillWriting    = "k6 is still writing the file (k6 completes gzip output only when it exits)"
	StillWritingFix = "wait for k6 to finish, or run it with a plain --out json=FILE"
)
