package loadgen

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"

	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/tokenizer"
)

// NewPromptSalt returns a fresh random cache-bust salt for Config.PromptSalt: 16 hex
// digits no other run shares.
func NewPromptSalt() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// saltLine is the line that starts conversation idx's first prompt: the request index
// first, so two requests of a run part within the prefix cache's first block (a shared
// salt would be a shared prefix), then the run's salt, so no two runs share one. When
// the workload shares prefixes by design (a shared system prompt, a prefix pool, user
// contexts), the line is the run's salt alone, "[SALT]": the prompts of a run share
// their prefixes with each other, and with no other run.
func saltLine(idx int, salt string, shared bool) string {
	if shared {
		return "[" + salt + "]\n"
	}
	return "[" + strconv.Itoa(idx) + " " + salt + "]\n"
}

// salter salts a run's conversations with its Config.PromptSalt (see salted).
type salter struct {
	salt   string // "" = none
	shared bool   // the workload shares prefixes by design (Config.sharesPrefixes)
	tok    *tokenizer.Tokenizer
}

// salted returns conv (whose first request has index idx) with the salt's line at
// the start of its first turn's prompt (the start of every request of the
// conversation, later turns carrying it in their history), counted exactly: ISL is the
// salted prompt's count, and RequestedISL grows by the same tokens, so a prompt that
// was exactly its sampled length stays exact. conv itself is not modified (a cycling
// source hands the same conversation again).
func (s salter) salted(conv dataset.Conversation, idx int) dataset.Conversation {
	salt := s.salt
	if salt == "" || len(conv.Turns) == 0 || conv.Turns[0].Body != nil {
		return conv
	}
	turns := append([]dataset.Turn(nil), conv.Turns...)
	t := &turns[0]
	line := saltLine(idx, salt, s.shared)
	n := s.tok.Count(line+t.Prompt, false)
	t.RequestedISL += n - t.ISL
	t.ISL = n
	t.Prompt = line + t.Prompt
	t.Memo = nil // it was the unsalted prompt's
	conv.Turns = turns
	return conv
}
