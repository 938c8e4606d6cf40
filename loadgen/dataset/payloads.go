package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Payloads is a Source over a JSONL file of request bodies (see [ReadPayloads]) that
// reads each body when it is drawn: [NewPayloads] checks every line up front (a bad
// line is a *[LineError], found before any request is sent) and keeps 16 bytes a line
// (offset, length, stream flag), so a file of large prompts costs its index, not its
// size. Not safe for concurrent use.
type Payloads struct {
	// Cycle starts again after the last line, as [Slice.Cycle].
	Cycle bool

	r     io.ReaderAt
	lines []payloadLine
	i     int
	err   error
}

type payloadLine struct {
	off    int64
	n      int32
	stream int8 // -1: no "stream" field; 0 false; 1 true
}

// NewPayloads indexes the JSONL request bodies in r. r must stay readable while the
// source is drawn from; Close closes it when it is an io.Closer.
func NewPayloads(r io.ReaderAt) (*Payloads, error) {
	p := &Payloads{r: r}
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, 1<<62), 1<<20)
	var off int64
	for n := 1; ; n++ {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) { // a line longer than the buffer
			long := bytes.Clone(b) // before the next read reuses the buffer
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		lineLen := int64(len(b))
		body := bytes.TrimRight(b, "\r\n")
		start := off + int64(len(b)-len(bytes.TrimLeft(b, " \t")))
		trimmed := bytes.TrimSpace(body)
		if len(trimmed) > 0 {
			var probe struct {
				Stream *bool `json:"stream"`
			}
			if jerr := json.Unmarshal(trimmed, &probe); jerr != nil {
				return nil, &LineError{Line: n, Err: fmt.Errorf("not a JSON object: %w", jerr)}
			}
			if len(trimmed) > 1<<31-1 {
				return nil, &LineError{Line: n, Err: errors.New("a body over 2 GiB")}
			}
			l := payloadLine{off: start, n: int32(len(trimmed)), stream: -1}
			if probe.Stream != nil {
				l.stream = 0
				if *probe.Stream {
					l.stream = 1
				}
			}
			p.lines = append(p.lines, l)
		}
		off += lineLen
		if err == io.EOF {
			return p, nil
		}
	}
}

// Len returns the number of bodies.
func (p *Payloads) Len() int { return len(p.lines) }

// Err returns the error that ended the source early (a read failing mid-run), if any.
func (p *Payloads) Err() error { return p.err }

// Next implements [Source].
func (p *Payloads) Next() (Conversation, bool) {
	if len(p.lines) == 0 || (p.i >= len(p.lines) && !p.Cycle) || p.err != nil {
		return Conversation{}, false
	}
	k := p.i % len(p.lines)
	l := p.lines[k]
	body := make([]byte, l.n) // a request keeps its body while in flight
	if _, err := p.r.ReadAt(body, l.off); err != nil {
		p.err = fmt.Errorf("dataset: payloads: line %d: %w", k+1, err)
		return Conversation{}, false
	}
	var stream *bool
	if l.stream >= 0 {
		v := l.stream == 1
		stream = &v
	}
	p.i++
	return Conversation{ID: fmt.Sprintf("p%d", k), At: -1, Turns: []Turn{{Body: body, Stream: stream, Exact: true}}}, true
}

// Close closes the file the bodies are read from, when it is an io.Closer.
func (p *Payloads) Close() error {
	if c, ok := p.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

var _ Source = (*Payloads)(nil)
