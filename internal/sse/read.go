package sse

import (
	"bytes"
	"errors"
	"io"
)

// DefaultMaxEventSize bounds one event (all its lines) read by a [Reader] with no
// explicit limit: 16 MiB.
const DefaultMaxEventSize = 16 << 20

// ErrEventTooLarge is returned by [Reader.Next] when an event exceeds the reader's limit.
var ErrEventTooLarge = errors.New("sse: event too large")

// Event is one dispatched event. Its slices point into the [Reader]'s buffer and are
// valid only until the next call to [Reader.Next]; copy what must be kept.
type Event struct {
	// Type is the "event:" field, empty when absent (the default type "message").
	Type []byte
	// Data is the concatenation of the event's "data:" lines, joined with "\n".
	Data []byte
	// ID is the stream's last event ID when the event was dispatched, as the
	// specification's lastEventId: the value of the latest "id:" field, in this event
	// or an earlier one (dispatched or not); empty, not nil, after an "id:" with an
	// empty value, which resets it; nil while the stream has sent no "id:" field.
	ID []byte
	// Retry is the "retry:" field in milliseconds, -1 when absent or invalid.
	Retry int
}

// Reader parses an event stream. It is not safe for concurrent use. The zero value is
// not usable; call [NewReader].
type Reader struct {
	src    io.Reader
	buf    []byte // raw bytes read from src; buf[r:w] unconsumed
	r, w   int
	scan   int   // buf[r:r+scan] holds no line end (CR or LF)
	err    error // sticky read error
	max    int
	data   []byte // assembled data of the current event
	typ    []byte
	id     []byte // the last event ID buffer: nil until an "id:" field sets it
	lines  int    // data lines seen in the current event
	bomOK  bool
	events int64
	bytes  int64
}

// NewReader returns a Reader over src with a 4 KiB initial buffer that grows as needed
// up to [DefaultMaxEventSize] per event.
func NewReader(src io.Reader) *Reader {
	return NewReaderSize(src, 4096, DefaultMaxEventSize)
}

// NewReaderSize is [NewReader] with an initial buffer size and a per-event limit in
// bytes (<= 0 means [DefaultMaxEventSize]).
func NewReaderSize(src io.Reader, size, maxEvent int) *Reader {
	if size < 64 {
		size = 64
	}
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEventSize
	}
	return &Reader{src: src, buf: make([]byte, size), max: maxEvent, data: make([]byte, 0, 256)}
}

// Reset makes r read from src, keeping its buffers, so one Reader can serve many
// responses.
func (r *Reader) Reset(src io.Reader) {
	r.src, r.r, r.w, r.scan, r.err = src, 0, 0, 0, nil
	r.data, r.typ, r.id, r.lines, r.bomOK = r.data[:0], r.typ[:0], nil, 0, false
	r.events, r.bytes = 0, 0
}

// Events returns how many events r has dispatched since it was created or reset.
func (r *Reader) Events() int64 { return r.events }

// Bytes returns how many bytes r has consumed from its source (framing included).
func (r *Reader) Bytes() int64 { return r.bytes }

// Buffered reports whether r holds unconsumed bytes, i.e. whether the next call to
// [Reader.Next] may return without reading from the source. Timing code uses it to
// tell events that arrived together from events that arrived apart.
func (r *Reader) Buffered() bool { return r.w > r.r }

// Next returns the next event. Events with no data lines (only comments, or only
// "event:"/"id:" fields) are not dispatched, as in browsers, but an "id:" field in
// them still sets the last event ID that later events report. At the end of the stream it
// returns io.EOF; a partial event at the end is discarded, as the specification says.
// Other errors are the source's (or [ErrEventTooLarge]).
func (r *Reader) Next() (Event, error) {
	r.data, r.typ, r.lines = r.data[:0], r.typ[:0], 0
	retry := -1
	for {
		line, err := r.line()
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 { // dispatch
			if r.lines == 0 {
				r.typ, retry = r.typ[:0], -1
				continue
			}
			r.events++
			return Event{Type: r.typ, Data: r.data, ID: r.id, Retry: retry}, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if len(r.data)+len(value)+1 > r.max {
				return Event{}, ErrEventTooLarge
			}
			if r.lines > 0 {
				r.data = append(r.data, '\n')
			}
			r.data = append(r.data, value...)
			r.lines++
		case "event":
			r.typ = append(r.typ[:0], value...)
		case "id":
			if bytes.IndexByte(value, 0) < 0 { // the last event ID buffer: "" resets it
				r.id = append(r.id[:0], value...)
				if r.id == nil {
					r.id = []byte{}
				}
			}
		case "retry":
			retry = parseRetry(value)
		}
	}
}

func parseRetry(v []byte) int {
	if len(v) == 0 || len(v) > 9 {
		return -1
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// bom is the UTF-8 byte-order mark, skipped at the very start of a stream.
var bom = []byte{0xEF, 0xBB, 0xBF}

// line returns the next line without its terminator (LF, CRLF or CR). The slice points
// into r.buf and is valid until the next call. Each buffered byte is scanned once,
// however the source splits the line into reads (r.scan remembers how far the
// current line holds no line end), so a line trickled in small reads costs linear
// time.
func (r *Reader) line() ([]byte, error) {
	for {
		seg := r.buf[r.r:r.w]
		if !r.bomOK {
			// Only the stream's first bytes may be a byte-order mark; wait for three
			// bytes (or the end) before deciding, so that read boundaries do not matter.
			switch {
			case r.bytes > 0 || len(seg) >= 3 || r.err != nil || !bytes.HasPrefix(bom, seg):
				r.bomOK = true
				if r.bytes == 0 && bytes.HasPrefix(seg, bom) {
					r.r += 3
					r.bytes += 3
					continue
				}
			default:
				if err := r.fill(); err != nil {
					return nil, err
				}
				continue
			}
		}
		end := -1 // index of the first CR or LF at or after r.scan
		rest := seg[r.scan:]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			nl = len(rest)
		}
		if cr := bytes.IndexByte(rest[:nl], '\r'); cr >= 0 {
			end = r.scan + cr
		} else if nl < len(rest) {
			end = r.scan + nl
		}
		switch {
		case end >= 0 && seg[end] == '\n':
			return r.take(seg, end, end+1), nil
		case end >= 0 && end+1 < len(seg):
			// CR ends the line; a following LF belongs to it (CRLF).
			n := end + 1
			if seg[end+1] == '\n' {
				n++
			}
			return r.take(seg, end, n), nil
		case end >= 0 && r.err != nil:
			return r.take(seg, end, end+1), nil
		case end >= 0:
			// CR is the last buffered byte: need one more byte to know if LF follows.
			r.scan = end
		default:
			r.scan = len(seg)
		}
		if r.err != nil {
			if r.r < r.w { // unterminated last line: incomplete event, dropped
				r.bytes += int64(r.w - r.r)
				r.r = r.w
			}
			r.scan = 0
			if r.err == io.EOF {
				return nil, io.EOF
			}
			return nil, r.err
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// take consumes n bytes of seg (the line and its terminator) and returns the line,
// seg[:end].
func (r *Reader) take(seg []byte, end, n int) []byte {
	r.r += n
	r.bytes += int64(n)
	r.scan = 0
	return seg[:end]
}

// fill reads more bytes, compacting or growing the buffer.
func (r *Reader) fill() error {
	if r.r > 0 {
		n := copy(r.buf, r.buf[r.r:r.w])
		r.r, r.w = 0, n
	}
	if r.w == len(r.buf) {
		if len(r.buf) >= r.max+2 {
			return ErrEventTooLarge
		}
		nb := make([]byte, min(2*len(r.buf), r.max+2))
		copy(nb, r.buf[:r.w])
		r.buf = nb
	}
	for range 100 {
		n, err := r.src.Read(r.buf[r.w:])
		r.w += n
		if err != nil {
			r.err = err
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	r.err = io.ErrNoProgress
	return nil
}
