package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Encoder writes values as JSON lines. It is safe for concurrent use: each Encode
// writes one whole line. Output is buffered; call Flush (or Close) to push it out.
type Encoder struct {
	mu   sync.Mutex
	w    *bufio.Writer
	buf  bytes.Buffer
	enc  *json.Encoder
	err  error
	n    int
	line []byte // the uncontended path's line (under mu)
	// cache holds the uncontended path's repeated values (under mu): a run's
	// records share strings that need not be quoted again for each.
	cache jsonCache
}

// maxKeptLine is the largest line buffer an Encoder keeps for the next line.
const maxKeptLine = 1 << 20

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// jsonAppender is implemented by records with a reflection-free encoder
// (*Client, *Server); Encode uses it when v has one.
type jsonAppender interface {
	AppendJSON(b []byte) []byte
}

// NewEncoder returns an Encoder writing JSON lines to w.
func NewEncoder(w io.Writer) *Encoder {
	e := &Encoder{w: bufio.NewWriterSize(w, 64<<10)}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}

// Encode writes v as one JSON line (with v's AppendJSON method when it has one, as
// *Client and *Server do). After the first write error every call returns it.
func (e *Encoder) Encode(v any) error {
	if a, ok := v.(jsonAppender); ok {
		if e.mu.TryLock() {
			// Nobody else is writing (the load generator's one collector): format
			// into the encoder's own line, with no pool to go through.
			if c, ok := a.(*Client); ok {
				e.line = append(c.appendJSON(e.line[:0], &e.cache), '\n')
			} else {
				e.line = append(a.AppendJSON(e.line[:0]), '\n')
			}
			err := e.writeLocked(e.line)
			if cap(e.line) > maxKeptLine {
				e.line = nil // do not hold a huge record's line for the rest of the run
			}
			e.mu.Unlock()
			return err
		}
		// Format outside the lock; only the write is serialised.
		bp := linePool.Get().(*[]byte)
		line := append(a.AppendJSON((*bp)[:0]), '\n')
		e.mu.Lock()
		err := e.writeLocked(line)
		e.mu.Unlock()
		*bp = line
		linePool.Put(bp)
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return e.err
	}
	var line []byte
	{
		e.buf.Reset()
		if err := e.enc.Encode(v); err != nil {
			return fmt.Errorf("record: encode: %w", err)
		}
		line = e.buf.Bytes()
	}
	if _, err := e.w.Write(line); err != nil {
		e.err = fmt.Errorf("record: write: %w", err)
		return e.err
	}
	e.n++
	return nil
}

// writeLocked writes one line; e.mu is held. After the first write error it only
// returns that error.
func (e *Encoder) writeLocked(line []byte) error {
	if e.err != nil {
		return e.err
	}
	if _, err := e.w.Write(line); err != nil {
		e.err = fmt.Errorf("record: write: %w", err)
		return e.err
	}
	e.n++
	return nil
}

// Count returns how many lines were written.
func (e *Encoder) Count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

// Flush writes buffered lines to the underlying writer.
func (e *Encoder) Flush() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return e.err
	}
	if err := e.w.Flush(); err != nil {
		e.err = fmt.Errorf("record: flush: %w", err)
	}
	return e.err
}

// Each decodes JSON lines of T from r and calls fn for each, in order, stopping at the
// first error (from decoding, with its line number, or from fn). Blank lines are skipped.
// Lines may be of any length (a record of a million-token response is one long line).
//
// A last line that is cut short (no final newline, not valid JSON), which is what a
// writer killed mid-line leaves, stops Each with an error wrapping [ErrTruncated] after
// every complete line has been given to fn.
func Each[T any](r io.Reader, fn func(T) error) error {
	return eachLine(r, func(line int, b []byte, unterminated bool) error {
		var v T
		var err error
		if c, ok := any(&v).(*Client); ok {
			err = DecodeClient(b, c) // no reflection for the common case
		} else {
			err = json.Unmarshal(b, &v)
		}
		if err != nil {
			return lineError(line, unterminated, err)
		}
		return fn(v)
	})
}

// lineError names the line of a record that did not decode, marking a cut-short last
// line with [ErrTruncated].
func lineError(line int, unterminated bool, err error) error {
	if unterminated {
		return fmt.Errorf("record: line %d: %w: %w", line, ErrTruncated, err)
	}
	return fmt.Errorf("record: line %d: %w", line, err)
}

// ErrTruncated is wrapped by [Each]'s error when the input's last line is incomplete:
// the recording of a process killed while writing. The lines before it are intact.
var ErrTruncated = errors.New("last line truncated")

// EachLine calls fn with each non-blank line of r (1-based line number, the line
// without surrounding white space), in order, stopping at the first error, which it
// returns as fn gave it. Lines may be of any length: a line longer than the read buffer
// is assembled in memory, so the cost is the longest line, never the whole input. b is
// valid only until fn returns. A read error is returned as "record: read: …" with the
// line it happened on.
func EachLine(r io.Reader, fn func(line int, b []byte) error) error {
	return eachLine(r, func(line int, b []byte, _ bool) error { return fn(line, b) })
}

// eachLine is EachLine, also telling fn whether the line ended at EOF without a newline.
func eachLine(r io.Reader, fn func(line int, b []byte, unterminated bool) error) error {
	return EachLineAt(r, func(line int, _ int64, raw []byte) error {
		if t := bytes.TrimSpace(raw); len(t) > 0 {
			return fn(line, t, raw[len(raw)-1] != '\n')
		}
		return nil
	})
}

// EachLineAt calls fn with every line of r, blank ones included: its 1-based number,
// its byte offset in r, and the line as it is in the input (with its newline, unless
// it is a last line without one), so a caller can index a file and read lines back
// with ReadAt. Lines may be of any length, as for [EachLine]; raw is valid only until
// fn returns. A read error is returned as "record: read: …" with its line.
func EachLineAt(r io.Reader, fn func(line int, off int64, raw []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // the pieces of a line longer than br's buffer
	line := 0
	var off int64
	for {
		b, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, b...)
			continue
		}
		if len(long) > 0 {
			long = append(long, b...)
			b = long
		}
		if len(b) > 0 {
			line++
			if ferr := fn(line, off, b); ferr != nil {
				return ferr
			}
			off += int64(len(b))
		}
		long = long[:0]
		if cap(long) > 16<<20 {
			long = nil // do not hold a huge line's buffer for the rest of the input
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("record: read: line %d: %w", line+1, err)
		}
	}
}

// Read decodes all JSON lines of T from r.
func Read[T any](r io.Reader) ([]T, error) {
	var out []T
	err := Each(r, func(v T) error { out = append(out, v); return nil })
	return out, err
}

// ReadClient decodes a client recording (JSON lines of [Client]).
func ReadClient(r io.Reader) ([]Client, error) { return Read[Client](r) }

// ReadServer decodes a mock-server recording (JSON lines of [Server]).
func ReadServer(r io.Reader) ([]Server, error) { return Read[Server](r) }
