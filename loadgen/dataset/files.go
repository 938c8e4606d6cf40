package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// LineError is a problem with one line of an input file (1-based Line).
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// lines calls fn with each non-blank line of r (any length), naming the line in fn's
// error (a *LineError).
func lines(r io.Reader, fn func(n int, b []byte) error) error {
	return record.EachLine(r, func(n int, b []byte) error {
		if err := fn(n, b); err != nil {
			return &LineError{Line: n, Err: err}
		}
		return nil
	})
}

// ReadPayloads reads JSONL request bodies, one object per line, to be sent as they
// are (one single-turn conversation each). A line's "stream" field, if present,
// decides whether the response is read as SSE.
func ReadPayloads(r io.Reader) ([]Conversation, error) {
	var out []Conversation
	err := lines(r, func(n int, b []byte) error {
		var probe struct {
			Stream *bool `json:"stream"`
		}
		if err := json.Unmarshal(b, &probe); err != nil {
			return fmt.Errorf("not a JSON object: %w", err)
		}
		body := append([]byte(nil), b...)
		out = append(out, Conversation{ID: fmt.Sprintf("p%d", len(out)), At: -1, Turns: []Turn{{Body: body, Stream: probe.Stream, Exact: true}}})
		return nil
	})
	return out, err
}

// MooncakeRow is one line of a mooncake trace.
type MooncakeRow struct {
	Timestamp    float64 `json:"timestamp"` // ms since trace start
	InputLength  int     `json:"input_length"`
	OutputLength int     `json:"output_length"`
	HashIDs      []int   `json:"hash_ids"`
}

// ReadMooncake reads a mooncake trace (JSONL: timestamp ms, input_length,
// output_length, hash_ids) and makes every row's prompt: [NewMooncake] drained. Each
// hash id stands for one block of blockTokens tokens: equal ids give equal text, so
// requests sharing leading ids share a prompt prefix. The last block holds the
// remainder (input_length − (len(hash_ids)−1)·blockTokens, when positive). Prompts are
// made exactly input_length tokens where possible (the last block is adjusted); At is
// the timestamp relative to the first row. A run reads the trace with NewMooncake,
// which makes each prompt only when it is drawn.
func ReadMooncake(r io.Reader, tok *tokenizer.Tokenizer, blockTokens int, seed uint64) ([]Conversation, error) {
	m, err := NewMooncake(r, tok, blockTokens, seed)
	if err != nil {
		return nil, err
	}
	out := make([]Conversation, 0, m.Len())
	for c, ok := m.Next(); ok; c, ok = m.Next() {
		out = append(out, c)
	}
	return out, nil
}

// Mooncake is a [Source] over a mooncake trace that keeps the rows (a few dozen bytes
// each) and makes a row's prompt when it is drawn, so a long trace costs the rows,
// not every prompt at once, and the first request goes out without waiting for the
// last prompt. The prompts are those [ReadMooncake] makes; a row drawn again (Cycle)
// gets the same prompt. Not safe for concurrent use.
type Mooncake struct {
	// Cycle starts again after the last row (At is then -1), as [Slice.Cycle].
	Cycle bool

	rows []MooncakeRow
	bw   *blockWriter
	i    int
}

// maxBlocks bounds Mooncake's cache of block texts (a 512-token block is ~2 KB):
// when full it is cleared, and a block made again is the same text.
const maxBlocks = 4096

// NewMooncake reads and checks every row of a mooncake trace (a bad row is an error
// naming its line) and returns the Source that makes their prompts as they are drawn.
func NewMooncake(r io.Reader, tok *tokenizer.Tokenizer, blockTokens int, seed uint64) (*Mooncake, error) {
	if tok == nil {
		return nil, errors.New("mooncake traces need a tokenizer")
	}
	if blockTokens <= 0 {
		return nil, errors.New("block tokens must be > 0")
	}
	m := &Mooncake{bw: newBlockWriter(tok, blockTokens, seed)}
	err := EachMooncakeRow(r, func(_ int, row MooncakeRow) error {
		m.rows = append(m.rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// EachMooncakeRow reads a mooncake trace line by line and calls fn with each row and
// its line number (1-based; blank lines are skipped), keeping none. A line that is not
// a JSON object of the row's fields, an input_length below 1 or a negative hash id is
// an error naming the line (a [*LineError]) and the field; so is an error fn returns.
func EachMooncakeRow(r io.Reader, fn func(line int, row MooncakeRow) error) error {
	return lines(r, func(n int, b []byte) error {
		var row MooncakeRow
		if err := json.Unmarshal(b, &row); err != nil {
			return err
		}
		if row.InputLength < 1 {
			return fmt.Errorf("input_length %d < 1", row.InputLength)
		}
		for i, h := range row.HashIDs {
			if h < 0 {
				return fmt.Errorf("hash_ids[%d] = %d < 0", i, h)
			}
		}
		return fn(n, row)
	})
}

// FullBlocks is how many of the row's hash ids stand for whole blocks of blockTokens
// tokens of its prompt: all of them when input_length covers them, else all but the
// last (whose block is partial), and never more than input_length/blockTokens. The
// rest of the prompt, input_length − FullBlocks·blockTokens tokens, is its own.
func (row MooncakeRow) FullBlocks(blockTokens int) int {
	if len(row.HashIDs) == 0 {
		return 0
	}
	if row.InputLength >= len(row.HashIDs)*blockTokens {
		return len(row.HashIDs)
	}
	return min(len(row.HashIDs)-1, row.InputLength/blockTokens)
}

// AppendMooncakeIDs appends to dst token ids standing for row's prompt, where no
// tokenizer is needed (perfgate analyze-trace): hash id h's block is the ids
// h·blockTokens+i for i in [0, blockTokens), so rows share a block exactly when they
// share its hash id, and the rest of the prompt (see [MooncakeRow.FullBlocks]) is the
// id −(index+1), an id no other row's prompt holds (index is the row's 0-based place
// in the trace). It makes input_length ids in all. It panics if blockTokens < 1.
func AppendMooncakeIDs(dst []int, row MooncakeRow, blockTokens, index int) []int {
	if blockTokens < 1 {
		panic("dataset: block tokens < 1")
	}
	full := row.FullBlocks(blockTokens)
	for _, h := range row.HashIDs[:full] {
		for i := range blockTokens {
			dst = append(dst, h*blockTokens+i)
		}
	}
	for range row.InputLength - full*blockTokens {
		dst = append(dst, -(index + 1))
	}
	return dst
}

// Len returns the number of rows.
func (m *Mooncake) Len() int { return len(m.rows) }

// Offsets returns each row's timestamp relative to the first (for a fixed schedule).
func (m *Mooncake) Offsets() []time.Duration {
	offs := make([]time.Duration, len(m.rows))
	for i := range m.rows {
		offs[i] = max(m.at(i), 0)
	}
	return offs
}

func (m *Mooncake) at(i int) time.Duration {
	return time.Duration((m.rows[i].Timestamp - m.rows[0].Timestamp) * float64(time.Millisecond))
}

// Next implements [Source].
func (m *Mooncake) Next() (Conversation, bool) {
	if len(m.rows) == 0 || (m.i >= len(m.rows) && !m.Cycle) {
		return Conversation{}, false
	}
	i := m.i % len(m.rows)
	c := m.conversation(i)
	if m.i >= len(m.rows) {
		c.At = -1
	}
	m.i++
	return c, true
}

// conversation makes row i's prompt: its whole blocks, then text to the exact length
// from a writer seeded by the row, so the row's prompt does not depend on draw order.
func (m *Mooncake) conversation(i int) Conversation {
	row := m.rows[i]
	prompt, got := m.bw.prompt(row.HashIDs, row.InputLength, uint64(i+1))
	return Conversation{
		ID: fmt.Sprintf("m%d", i),
		At: m.at(i),
		Turns: []Turn{{Prompt: prompt, ISL: got, RequestedISL: row.InputLength, Exact: got == row.InputLength,
			OSL: row.OutputLength}},
	}
}

// Offsets is implemented by finite sources that know every item's scheduled start
// ([Slice], [Mooncake]), for a fixed-schedule run.
type Offsets interface {
	Offsets() []time.Duration
}

var (
	_ Source  = (*Mooncake)(nil)
	_ Offsets = (*Mooncake)(nil)
	_ Offsets = (*Slice)(nil)
)

// ReadShareGPT reads ShareGPT conversations: a JSON array, or JSONL with one
// conversation per line. Each human/user message becomes a turn; the following
// gpt/assistant message's token count is the turn's OSL (as vLLM uses it).
// Conversations without a human turn are skipped. It is [NewShareGPT] drawn to the
// end, in memory.
func ReadShareGPT(r io.Reader, tok *tokenizer.Tokenizer) ([]Conversation, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	src, err := NewShareGPT(bytes.NewReader(data), tok)
	if err != nil {
		return nil, err
	}
	return drain(src), nil
}

// ReadRecording reads a mock-server recording (record.Server JSONL) and rebuilds
// what another tool sent: per request the same endpoint, model, stream flag, output
// fields (max_tokens / max_completion_tokens, min_tokens, ignore_eos) and a prompt
// with the recorded ISL (the recorded ISL may include a chat template's tokens; the
// replayed prompt has that many tokens of content), at the recorded arrival times
// (At, relative to the first). Rejected requests are skipped. It is [NewRecording]
// drawn to the end.
func ReadRecording(r io.Reader, tok *tokenizer.Tokenizer, seed uint64) ([]Conversation, error) {
	src, err := NewRecording(r, tok, seed)
	if err != nil {
		return nil, err
	}
	return drain(src), nil
}

// drain draws a finite source to its end.
func drain(src Source) []Conversation {
	var out []Conversation
	for {
		c, ok := src.Next()
		if !ok {
			return out
		}
		out = append(out, c)
	}
}

// endpointOfPath is the API kind a recorded request path was for ("" = the run's).
func endpointOfPath(p string) string { return openai.KindOfPath(p) }
