package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// ShareGPT is a Source over a ShareGPT file (see [ReadShareGPT]) that keeps 16 bytes
// a conversation: [NewShareGPT] checks every conversation up front (a bad one is an
// error naming it) and notes where it is; Next reads it back, counts its tokens and
// makes its turns. Not safe for concurrent use.
type ShareGPT struct {
	// Cycle starts again after the last conversation, as [Slice.Cycle].
	Cycle bool

	r     io.ReaderAt
	tok   *tokenizer.Tokenizer
	items []span // conversations with a human turn, in file order
	i     int
	err   error
}

// span is where one item is in a file (and its position among all items there).
type span struct {
	off   int64
	n     int32
	index int32
}

// shareGPTConv is one ShareGPT conversation. LLaVA-style conversations name their
// image(s) in "image" (a path or a list) or "images", and mark where in the first
// human turn with "<image>".
type shareGPTConv struct {
	ID            string `json:"id"`
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
	Image  json.RawMessage `json:"image,omitempty"`
	Images []string        `json:"images,omitempty"`
}

// images lists the conversation's image references.
func (c *shareGPTConv) images() ([]string, error) {
	out := append([]string(nil), c.Images...)
	if len(c.Image) > 0 && string(c.Image) != "null" {
		var one string
		if json.Unmarshal(c.Image, &one) == nil {
			return append(out, one), nil
		}
		var many []string
		if err := json.Unmarshal(c.Image, &many); err != nil {
			return nil, errors.New(`"image" is neither a path nor a list of paths`)
		}
		out = append(out, many...)
	}
	return out, nil
}

func (c *shareGPTConv) human() bool {
	for _, m := range c.Conversations {
		if m.From == "human" || m.From == "user" {
			return true
		}
	}
	return false
}

// NewShareGPT indexes the ShareGPT conversations in r: a JSON array, or JSONL with one
// conversation per line. r must stay readable while the source is drawn from; Close
// closes it when it is an io.Closer.
func NewShareGPT(r io.ReaderAt, tok *tokenizer.Tokenizer) (*ShareGPT, error) {
	if tok == nil {
		return nil, errors.New("sharegpt needs a tokenizer")
	}
	s := &ShareGPT{r: r, tok: tok}
	add := func(raw []byte, off int64, index int) error {
		var c shareGPTConv
		if err := json.Unmarshal(raw, &c); err != nil {
			return err
		}
		if _, err := c.images(); err != nil {
			return err
		}
		if len(raw) > 1<<31-1 {
			return errors.New("a conversation over 2 GiB")
		}
		if c.human() {
			s.items = append(s.items, span{off: off, n: int32(len(raw)), index: int32(index)})
		}
		return nil
	}
	all := io.NewSectionReader(r, 0, 1<<62)
	var first [1]byte
	var lead int64
	for {
		if _, err := all.ReadAt(first[:], lead); err != nil {
			return s, nil // empty (or blank) input: no conversations
		}
		if first[0] != ' ' && first[0] != '\t' && first[0] != '\r' && first[0] != '\n' {
			break
		}
		lead++
	}
	if first[0] == '[' {
		dec := json.NewDecoder(io.NewSectionReader(r, 0, 1<<62))
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		for i := 0; dec.More(); i++ {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, fmt.Errorf("conversation %d: %w", i+1, err)
			}
			end := dec.InputOffset()
			if err := add(raw, end-int64(len(raw)), i); err != nil {
				return nil, fmt.Errorf("conversation %d: %w", i+1, err)
			}
		}
		return s, nil
	}
	i := 0
	err := record.EachLineAt(all, func(n int, off int64, raw []byte) error {
		body := bytes.TrimSpace(raw)
		if len(body) == 0 {
			return nil
		}
		lead := len(raw) - len(bytes.TrimLeft(raw, " \t\r\n"))
		if err := add(body, off+int64(lead), i); err != nil {
			return &LineError{Line: n, Err: err}
		}
		i++
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Len returns the number of conversations with a human turn.
func (s *ShareGPT) Len() int { return len(s.items) }

// Err returns the error that ended the source early (a read failing mid-run), if any.
func (s *ShareGPT) Err() error { return s.err }

// Next implements [Source].
func (s *ShareGPT) Next() (Conversation, bool) {
	if len(s.items) == 0 || (s.i >= len(s.items) && !s.Cycle) || s.err != nil {
		return Conversation{}, false
	}
	it := s.items[s.i%len(s.items)]
	raw := make([]byte, it.n)
	var c shareGPTConv
	if _, err := s.r.ReadAt(raw, it.off); err != nil {
		s.err = fmt.Errorf("dataset: sharegpt: conversation %d: %w", it.index+1, err)
		return Conversation{}, false
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		s.err = fmt.Errorf("dataset: sharegpt: conversation %d: %w", it.index+1, err)
		return Conversation{}, false
	}
	s.i++
	conv := Conversation{ID: c.ID, At: -1}
	if conv.ID == "" {
		conv.ID = fmt.Sprintf("s%d", it.index)
	}
	images, _ := c.images() // checked by NewShareGPT
	for _, m := range c.Conversations {
		switch m.From {
		case "human", "user":
			t := Turn{Prompt: m.Value}
			if len(images) > 0 { // the first human turn carries them, without LLaVA's markers
				t.Prompt = strings.TrimSpace(strings.ReplaceAll(t.Prompt, "<image>", ""))
				t.Images, images = images, nil
			}
			n := s.tok.Count(t.Prompt, false)
			t.ISL, t.RequestedISL, t.Exact = n, n, true
			conv.Turns = append(conv.Turns, t)
		case "gpt", "assistant", "chatgpt", "bard", "bing":
			if k := len(conv.Turns); k > 0 && conv.Turns[k-1].OSL == 0 {
				conv.Turns[k-1].OSL = max(s.tok.Count(m.Value, false), 1)
			}
		}
	}
	return conv, true
}

// Close closes the file the conversations are read from, when it is an io.Closer.
func (s *ShareGPT) Close() error {
	if c, ok := s.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Recording is a Source replaying a mock-server recording (see [ReadRecording]) that
// keeps what each request needs, not its prompt: [NewRecording] reads every record up
// front, and Next writes the prompt of the recorded length when it is drawn (the same
// prompts, in the same order, on every pass). Not safe for concurrent use.
type Recording struct {
	// Cycle starts again after the last request, as [Slice.Cycle].
	Cycle bool

	tok  *tokenizer.Tokenizer
	seed uint64
	w    *Writer
	rows []recRow
	i    int
}

// recRow is what a replayed request needs of its record.
type recRow struct {
	at              time.Duration
	isl, osl        int
	model, endpoint string
	field           string
	stream          bool
	ignoreEOS       *bool
	minTokens       *int
}

// NewRecording reads the served requests of a mock-server recording.
func NewRecording(r io.Reader, tok *tokenizer.Tokenizer, seed uint64) (*Recording, error) {
	if tok == nil {
		return nil, errors.New("recording replay needs a tokenizer")
	}
	rc := &Recording{tok: tok, seed: seed}
	names := map[string]string{} // model and endpoint names, shared between rows
	intern := func(s string) string {
		if v, ok := names[s]; ok {
			return v
		}
		names[s] = s
		return s
	}
	var t0 int64
	err := record.Each(r, func(s record.Server) error {
		if s.Rejected != "" {
			return nil
		}
		ts := s.RecvNS
		if ts == 0 {
			ts = int64(s.TS * 1e9)
		}
		if len(rc.rows) == 0 {
			t0 = ts
		}
		row := recRow{at: time.Duration(ts - t0), isl: max(s.ISL, 1), model: intern(s.Model), endpoint: endpointOfPath(s.Endpoint),
			stream: s.Stream, ignoreEOS: s.IgnoreEOS, minTokens: s.MinTokens}
		switch {
		case s.MaxCompletionTokens != nil:
			row.osl, row.field = *s.MaxCompletionTokens, "max_completion_tokens"
		case s.MaxTokens != nil:
			row.osl, row.field = *s.MaxTokens, "max_tokens"
		}
		rc.rows = append(rc.rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rc, nil
}

// Len returns the number of requests.
func (rc *Recording) Len() int { return len(rc.rows) }

// Offsets returns each request's arrival relative to the first (for a fixed schedule).
func (rc *Recording) Offsets() []time.Duration {
	offs := make([]time.Duration, len(rc.rows))
	for i, r := range rc.rows {
		offs[i] = max(r.at, 0)
	}
	return offs
}

// Next implements [Source].
func (rc *Recording) Next() (Conversation, bool) {
	if len(rc.rows) == 0 || (rc.i >= len(rc.rows) && !rc.Cycle) {
		return Conversation{}, false
	}
	k := rc.i % len(rc.rows)
	if k == 0 {
		// Each pass writes the same prompts: a writer afresh from the seed.
		w, err := NewWriter(rc.tok, StyleShakespeare, rc.seed)
		if err != nil {
			return Conversation{}, false
		}
		rc.w = w
	}
	row := rc.rows[k]
	prompt, got := rc.w.Text("", row.isl)
	stream := row.stream
	t := Turn{Prompt: prompt, ISL: got, RequestedISL: row.isl, Exact: got == row.isl, Model: row.model,
		Endpoint: row.endpoint, IgnoreEOS: row.ignoreEOS, MinTokens: row.minTokens, Stream: &stream,
		OSL: row.osl, MaxTokensField: row.field}
	c := Conversation{ID: fmt.Sprintf("r%d", k), At: row.at, Turns: []Turn{t}}
	if rc.i >= len(rc.rows) {
		c.At = -1
	}
	rc.i++
	return c, true
}

var (
	_ Source  = (*ShareGPT)(nil)
	_ Source  = (*Recording)(nil)
	_ Offsets = (*Recording)(nil)
)
