package loadgen

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/perfgate/perfgate/loadgen/dataset"
)

// NewPromptSalt returns a fresh random cache-bust salt for Config.PromptSalt: a short
// line no other run shares, so a prompt that starts with it shares no prefix-cache
// block with any other run's.
func NewPromptSalt() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "[run " + hex.EncodeToString(b[:]) + "]\n"
}

// salted returns conv with Config.PromptSalt at the start of its first turn's prompt
// (the start of every request of the conversation, later turns carrying it in their
// history), counted exactly: ISL is the salted prompt's count, and RequestedISL grows
// by the same tokens, so a prompt that was exactly its sampled length stays exact.
// conv itself is not modified (a cycling source hands the same conversation again).
func (r *runner) salted(conv dataset.Conversation) dataset.Conversation {
	salt := r.cfg.PromptSalt
	if salt == "" || len(conv.Turns) == 0 || conv.Turns[0].Body != nil {
		return conv
	}
	turns := append([]dataset.Turn(nil), conv.Turns...)
	t := &turns[0]
	n := r.tok.Count(salt+t.Prompt, false)
	t.RequestedISL += n - t.ISL
	t.ISL = n
	t.Prompt = salt + t.Prompt
	conv.Turns = turns
	return conv
}
