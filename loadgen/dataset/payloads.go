package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/perfgate/perfgate/record"
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
	err := record.EachLineAt(io.NewSectionReader(r, 0, 1<<62), func(n int, off int64, raw []byte) error {
		body := bytes.TrimSpace(raw)
		if len(body) == 0 {
			return nil
		}
		var probe struct {
			Stream *bool `json:"stream"`
		}
		if err := json.Unmarshal(body, &probe); err != nil {
			return &LineError{Line: n, Err: fmt.Errorf("not a JSON object: %w", err)}
		}
		if len(body) > 1<<31-1 {
			return &LineError{Line: n, Err: errors.New("a body over 2 GiB")}
		}
		lead := len(raw) - len(bytes.TrimLeft(raw, " \t\r\n"))
		l := payloadLine{off: off + int64(lead), n: int32(len(body)), stream: -1}
		if probe.Stream != nil {
			l.stream = 0
			if *probe.Stream {
				l.stream = 1
			}
		}
		p.lines = append(p.lines, l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
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
