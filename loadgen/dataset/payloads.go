package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/perfgate/perfgate/record"
)

// Payloads is a Source over a JSONL file of request bodies (see [ReadPayloads]) that
// reads each body when it is drawn: [NewPayloads] checks every line up front (a bad
// line is a *[LineError], found before any request is sent) and keeps 16 bytes a line
// (offset, length, stream flag), so a file of large prompts costs its index, not its
// size. A file of at most 1 MiB (payloadsInMemory) is kept in memory instead, its
// conversations built once: drawing one then costs no system call and no allocation
// (a benchmark's few payloads, sent tens of thousands of times a second). Not safe for
// concurrent use.
type Payloads struct {
	// Cycle starts again after the last line, as [Slice.Cycle].
	Cycle bool

	r     io.ReaderAt
	lines []payloadLine
	mem   []Conversation // every line's conversation, for a small file; nil otherwise
	i     int
	err   error
}

// payloadsInMemory is the largest payload file NewPayloads keeps in memory (a
// variable so the tests can read small files from disk too).
var payloadsInMemory int64 = 1 << 20

type payloadLine struct {
	off    int64
	n      int32
	stream int8 // -1: no "stream" field; 0 false; 1 true
}

// NewPayloads indexes the JSONL request bodies in r. r must stay readable while the
// source is drawn from; Close closes it when it is an io.Closer.
func NewPayloads(r io.ReaderAt) (*Payloads, error) {
	p := &Payloads{r: r}
	var size int64
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
		size = off + int64(len(raw))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if size <= payloadsInMemory {
		if err := p.load(size); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// load reads the whole (small) file of size bytes and builds every line's conversation.
func (p *Payloads) load(size int64) error {
	data := make([]byte, size)
	if _, err := p.r.ReadAt(data, 0); err != nil && !(errors.Is(err, io.EOF) && size == 0) {
		return fmt.Errorf("dataset: payloads: %w", err)
	}
	p.mem = make([]Conversation, len(p.lines))
	for k, l := range p.lines {
		// Full slice expressions: a body is never appended to in place of the next.
		p.mem[k] = p.conversation(k, data[l.off:l.off+int64(l.n):l.off+int64(l.n)])
	}
	return nil
}

// conversation is line k's conversation with the given body.
func (p *Payloads) conversation(k int, body []byte) Conversation {
	var stream *bool
	if l := p.lines[k]; l.stream >= 0 {
		v := l.stream == 1
		stream = &v
	}
	return Conversation{ID: "p" + strconv.Itoa(k), At: -1, Turns: []Turn{{Body: body, Stream: stream, Exact: true}}}
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
	if p.mem != nil {
		p.i++
		return p.mem[k], true
	}
	l := p.lines[k]
	body := make([]byte, l.n) // a request keeps its body while in flight
	if _, err := p.r.ReadAt(body, l.off); err != nil {
		p.err = fmt.Errorf("dataset: payloads: line %d: %w", k+1, err)
		return Conversation{}, false
	}
	p.i++
	return p.conversation(k, body), true
}

// InMemory reports whether the bodies are held in memory (a file of at most
// 1 MiB): drawing one is then as cheap as from a [Slice].
func (p *Payloads) InMemory() bool { return p.mem != nil }

// Close closes the file the bodies are read from, when it is an io.Closer.
func (p *Payloads) Close() error {
	if c, ok := p.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

var _ Source = (*Payloads)(nil)
