package dataset

import (
	_ "embed"
	"sync/atomic"
	"time"
)

//go:embed corpus.txt
var corpusText string

// Corpus returns the embedded public-domain text (Shakespeare's sonnets and
// speeches) that natural-language prompts are cut from.
func Corpus() string { return corpusText }

// Turn is one request of a conversation.
type Turn struct {
	// Prompt is the user text (chat/responses message, completions prompt, embeddings
	// input, rankings/rerank query).
	Prompt string
	// Docs are the passages of a rankings/rerank request.
	Docs []string
	// ISL is Prompt's token count (re-encoded, no special tokens); RequestedISL is the
	// length that was sampled; Exact reports ISL == RequestedISL.
	ISL, RequestedISL int
	Exact             bool
	// OSL is the output length to ask for; 0 = no cap sent.
	OSL int
	// Prefix is the number, from 1, of the prefix pool's prefix the prompt starts
	// with (Prefixes.Buckets): in the pool's order, which is its popularity rank in a
	// single pool. 0 = none.
	Prefix int
	// Delay is the pause after the previous turn's response before this turn is sent
	// (think time); ToolWait is the time the previous turn's tool calls ran, waited
	// for before Delay (an agent trace's tool_call_ms).
	Delay, ToolWait time.Duration
	// Agents are sub-agent sessions started after this turn's answer: they run in
	// parallel, and the conversation's next turn (after its last turn, its end) waits
	// for all of them. Their turns' Delay and ToolWait count from this turn's answer.
	Agents []Conversation
	// Body, when set, is a complete request body sent as it is (custom payloads);
	// image_url parts whose url is a file path are inlined as data URIs when sent.
	Body []byte
	// Images are the turn's images, sent as image_url parts after the prompt (chat):
	// file paths (relative ones from the input file's directory), read and inlined
	// when the request is built, or http(s) and data URLs, sent as they are.
	Images []string
	// Endpoint overrides the run's endpoint for this turn ("chat", "completions", …),
	// from a recording; empty = the run's.
	Endpoint string
	// Model overrides the model name; empty = the run's.
	Model string
	// Stream overrides streaming when non-nil (recordings).
	Stream *bool
	// MaxTokensField overrides which field carries OSL ("max_tokens",
	// "max_completion_tokens"); IgnoreEOS and MinTokens override the run's when non-nil.
	MaxTokensField string
	IgnoreEOS      *bool
	MinTokens      *int
	// Memo, when not nil, is shared by every turn the source made with the same Prompt
	// text (a synthetic prompt from a remembered corpus window): a consumer may keep
	// there what it derives from the text, instead of looking it up by the text.
	Memo *Memo
}

// Memo holds one value a consumer derived from a text ([Turn.Memo]). It is safe for
// concurrent use; the value should say what else it was derived from, since any
// consumer of the source's turns may have stored it.
type Memo struct{ v atomic.Value }

// Load returns the value stored last, or nil.
func (m *Memo) Load() any { return m.v.Load() }

// Store replaces the value; every Store must pass the same concrete type.
func (m *Memo) Store(v any) { m.v.Store(v) }

// Conversation is one unit of work: turns sent one after another, each carrying the
// history of the previous ones.
type Conversation struct {
	ID string
	// Job, when set, names the agent job the conversation (a session) belongs to:
	// its root session's id, on the root and on every sub-agent.
	Job string
	// Whole reports that every turn's prompt is its whole context (an agent trace's
	// input_tokens): no history is carried from turn to turn.
	Whole bool
	// At is the scheduled start (trace timestamp relative to the first), or -1.
	At    time.Duration
	Turns []Turn
}

// Source yields conversations in a fixed order. Next returns false when the source is
// exhausted (synthetic sources never are). Not safe for concurrent use.
type Source interface {
	Next() (Conversation, bool)
}

// Slice is a finite Source over a slice, optionally cycling.
type Slice struct {
	Items []Conversation
	Cycle bool // start again after the last item (At is then cleared to -1)
	i     int
}

// Next implements [Source].
func (s *Slice) Next() (Conversation, bool) {
	if len(s.Items) == 0 {
		return Conversation{}, false
	}
	if s.i >= len(s.Items) {
		if !s.Cycle {
			return Conversation{}, false
		}
		c := s.Items[s.i%len(s.Items)]
		s.i++
		c.At = -1
		return c, true
	}
	c := s.Items[s.i]
	s.i++
	return c, true
}

// Len returns the number of items.
func (s *Slice) Len() int { return len(s.Items) }

// Offsets returns each item's scheduled start (At, 0 when unset).
func (s *Slice) Offsets() []time.Duration {
	offs := make([]time.Duration, len(s.Items))
	for i, c := range s.Items {
		offs[i] = max(c.At, 0)
	}
	return offs
}
