package loadgen

// Input and output counting: the template-inclusive input count of chat-like requests
// (through tokenizer.CountChatInput, the count the mock server makes) and the output
// count of responses, both memoised here, since at tens of thousands of requests per
// second counting is the largest CPU cost per request after I/O.

import (
	"bytes"
	"crypto/sha256"
	"strconv"
	"sync"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// counter counts a run's tokens: the template-inclusive input of chat-like requests
// (templateCount) and the output of responses (count), with the run's tokenizer,
// memoising what repeats. Safe for concurrent use.
type counter struct {
	tok   *tokenizer.Tokenizer
	extra map[string]any // Config.ExtraBody: its add_generation_prompt turns the generation prompt off
	mu    sync.RWMutex
	memo  map[string]int       // countText's results for short texts, under mu
	tmemo map[string]templated // templateCount's results for short single-turn inputs, under mu
}

// newCounter returns a counter with tok for a run whose bodies carry extra
// (Config.ExtraBody).
func newCounter(tok *tokenizer.Tokenizer, extra map[string]any) *counter {
	return &counter{tok: tok, extra: extra, memo: map[string]int{}, tmemo: map[string]templated{}}
}

// templated is what templateCount found for one input.
type templated struct {
	isl, tmpl int // contents (payloads only) and rendered counts
	mode      string
	img, aud  int // a payload's image and audio tokens (in tmpl)
}

// templateCount fills rec.ISLTemplate and rec.TokenizationMode for a request whose
// input is a list of messages (as its adapter's input says: chat, messages, or
// Responses with a system prompt or history):
// the messages as sent, rendered with the tokenizer's chat template (the ChatML
// fallback without one) and the generation prompt unless the body turns it off
// (add_generation_prompt, a vLLM extension), and encoded without special tokens, as
// the mock server and vLLM count a chat prompt. A chat payload sent as it is (an
// input file) is parsed for its messages, and its ISL becomes their contents' count.
// A render error or an unreadable payload sets ISLTemplate to
// record.ISLTemplateUnknown (the overhead the server counts is unknown). Results for short
// single-turn inputs are memoised: payload files and small prompts repeat, and at
// tens of thousands of requests per second the render is a visible CPU cost.
func (r *counter) templateCount(a adapter, t *dataset.Turn, tc *turnCtx, rec *record.Client, sc *scratch) {
	addGen := true
	key := sc.key[:0]
	switch a.input(t, tc) {
	case inputPayload:
		key = append(append(key, 'b'), t.Body...)
	case inputTemplateExtra:
		if v, ok := r.extra["add_generation_prompt"].(bool); ok {
			addGen = v
		}
		fallthrough
	case inputTemplate:
		if t.Memo != nil && len(tc.history) == 0 && len(tc.media) == 0 && len(tc.toolReply) == 0 {
			// A synthetic prompt from a remembered corpus window: its count is kept
			// with the window (no key to build, no map to search).
			m := loadMemo(t)
			if m != nil && m.hasTmpl && m.tok == r.tok && m.addGen == addGen && m.system == tc.system {
				r.setTemplated(rec, m.tmpl)
				return
			}
			v, ok := r.render(t, tc, addGen)
			if !ok {
				rec.ISLTemplate = record.ISLTemplateUnknown
				return
			}
			nm := nextMemo(t, m) // keeps its body
			nm.tok, nm.system, nm.addGen, nm.tmpl, nm.hasTmpl = r.tok, tc.system, addGen, v, true
			t.Memo.Store(nm)
			r.setTemplated(rec, v)
			return
		}
		if len(tc.history) == 0 {
			// "p<addGen><len(system)>:<system><prompt><media placeholders>", built without fmt.
			key = strconv.AppendInt(strconv.AppendBool(append(key, 'p'), addGen), int64(len(tc.system)), 10)
			key = append(append(append(key, ':'), tc.system...), t.Prompt...)
			if len(tc.media) > 0 {
				key = append(key, placeholders(tc.media)...)
			}
		}
	default:
		return
	}
	if len(key) <= 1024 {
		sc.key = key
	} else {
		key = nil
	}
	if len(key) > 0 {
		if sc.lastOK[0] && bytes.Equal(sc.lastKey, key) {
			r.setTemplated(rec, sc.lastTmpl)
			return
		}
		r.mu.RLock()
		v, ok := r.tmemo[string(key)] // no copy: the conversion only indexes
		r.mu.RUnlock()
		if ok {
			sc.lastKey, sc.lastTmpl, sc.lastOK[0] = append(sc.lastKey[:0], key...), v, true
			r.setTemplated(rec, v)
			return
		}
	}
	v, ok := r.render(t, tc, addGen)
	if !ok {
		rec.ISLTemplate = record.ISLTemplateUnknown
		return
	}
	if len(key) > 0 {
		r.mu.Lock()
		if len(r.tmemo) < 8192 {
			r.tmemo[string(key)] = v
		}
		r.mu.Unlock()
		sc.lastKey, sc.lastTmpl, sc.lastOK[0] = append(sc.lastKey[:0], key...), v, true
	}
	r.setTemplated(rec, v)
}

// chatInput returns the messages t's request sends (its payload's, or the system
// prompt, history and prompt) and whether the generation prompt is rendered (the
// payload's add_generation_prompt, else addGen), or a payload's prompt_token_ids
// instead when it has them. v, when not nil, gets a payload's content count and media
// tokens. ok is false for an unreadable payload.
func (r *counter) chatInput(t *dataset.Turn, tc *turnCtx, addGen bool, v *templated) (msgs []tokenizer.Message, gen bool, ids []int, ok bool) {
	if v == nil {
		v = new(templated)
	}
	if t.Body != nil {
		var req openai.ChatRequest
		if openai.DecodeChatRequest(t.Body, &req) != nil || len(req.Messages) == 0 && req.PromptTokenIDs == nil {
			return nil, addGen, nil, false
		}
		if req.PromptTokenIDs != nil {
			return nil, addGen, req.PromptTokenIDs, true
		}
		for _, m := range req.Messages {
			msgs = append(msgs, tokenizer.Message{Role: m.Role, Content: m.Content.Text})
			v.isl += r.tok.Count(m.Content.Text, false)
		}
		if req.AddGenerationPrompt != nil {
			addGen = *req.AddGenerationPrompt
		}
		v.img, v.aud = payloadMedia(req.Model, r.tok, req.Messages)
		return msgs, addGen, nil, true
	}
	msgs = make([]tokenizer.Message, 0, len(tc.history)+2)
	if tc.system != "" {
		msgs = append(msgs, tokenizer.Message{Role: "system", Content: tc.system})
	}
	for _, m := range tc.history {
		msgs = append(msgs, tokenizer.Message{Role: m.Role, Content: m.Content})
	}
	if len(tc.toolReply) > 0 { // the tool messages the turn sends instead of a user message
		for _, m := range chatMessages(nil, t, &turnCtx{toolReply: tc.toolReply}) {
			msgs = append(msgs, tokenizer.Message{Role: m.Role, Content: m.Content})
		}
	} else {
		msgs = append(msgs, tokenizer.Message{Role: "user", Content: t.Prompt + placeholders(tc.media)})
	}
	return msgs, addGen, nil, true
}

// turnMemo is what the load generator keeps in a prompt's dataset.Turn.Memo: the
// prompt's chat-template count (templateCount) and its chat body (bodyBuilder.json),
// each with what it depends on. The prompt itself is checked too (loadMemo), in case a
// turn's prompt was changed after the source made it: without a prefix every draw of a
// window hands out the same string, so the comparison stops at the pointer; after the
// shared prefix each draw is a new concatenation, compared byte for byte. A turnMemo
// is replaced whole, never changed.
type turnMemo struct {
	prompt string
	// The chat-template count, for tok, system and addGen.
	tok     *tokenizer.Tokenizer
	system  string
	addGen  bool
	tmpl    templated
	hasTmpl bool
	// The chat body, as bb builds it streamed or not with osl; shared by every request
	// that sends it, as a payload file's bodies are: never written to.
	bb     *bodyBuilder
	stream bool
	osl    int
	body   []byte
	// The body's digest in fp's run fingerprint (fingerprinter.digest), when hasDigest.
	fp        *fingerprinter
	digest    [sha256.Size]byte
	hasDigest bool
}

// loadMemo returns t's turnMemo if it was made for t's current prompt, else nil.
func loadMemo(t *dataset.Turn) *turnMemo {
	m, _ := t.Memo.Load().(*turnMemo)
	if m == nil || m.prompt != t.Prompt {
		return nil
	}
	return m
}

// nextMemo returns the turnMemo to fill and store in place of m (loadMemo's): a copy of
// m, so that what it holds besides stays, or a new one for t's prompt.
func nextMemo(t *dataset.Turn, m *turnMemo) *turnMemo {
	if m != nil {
		nm := *m
		return &nm
	}
	return &turnMemo{prompt: t.Prompt}
}

func (r *counter) setTemplated(rec *record.Client, v templated) {
	rec.ISLTemplate, rec.TokenizationMode = v.tmpl, v.mode
	rec.ImageTokens, rec.AudioTokens = v.img, v.aud
	if rec.ISL == 0 {
		rec.ISL = v.isl
	}
}

// render counts t's messages (its payload's, or the system prompt, history and
// prompt) rendered as templateCount describes; ok is false if it could not.
func (r *counter) render(t *dataset.Turn, tc *turnCtx, addGen bool) (v templated, ok bool) {
	msgs, addGen, ids, ok := r.chatInput(t, tc, addGen, &v)
	if !ok || ids != nil {
		return v, false
	}
	n, fallback, err := r.tok.CountChatInput(msgs, tokenizer.ChatOptions{AddGenerationPrompt: addGen})
	if err != nil {
		return v, false
	}
	v.tmpl, v.mode = n+v.img+v.aud, record.ModeChatTemplate
	if fallback {
		v.mode = record.ModeChatTemplateFallback
	}
	return v, true
}

// countText is tok.Count(text, false), memoised for short texts: responses of mock
// servers repeat, and counting is the largest CPU cost per request after I/O.
func (r *counter) countText(b []byte, sc *scratch) int {
	if len(b) > 512 {
		return r.tok.Count(string(b), false)
	}
	if sc.lastOK[1] && bytes.Equal(sc.lastText, b) {
		return sc.lastCount
	}
	r.mu.RLock()
	n, ok := r.memo[string(b)]
	r.mu.RUnlock()
	if !ok {
		s := string(b)
		n = r.tok.Count(s, false)
		r.mu.Lock()
		if len(r.memo) < 8192 {
			r.memo[s] = n
		}
		r.mu.Unlock()
	}
	sc.lastText, sc.lastCount, sc.lastOK[1] = append(sc.lastText[:0], b...), n, true
	return n
}

// count fills token counts from the received text: per chunk, and OSL over all text.
func (r *counter) count(rec *record.Client, res *result, sc *scratch) {
	if len(res.calls) > 0 {
		rec.ToolCalls = len(res.calls)
		if len(res.tool) > 0 {
			rec.ToolCallTokens = r.countText(res.tool, sc)
		}
	}
	if len(rec.Chunks) == 1 && len(res.ends) == 1 && len(res.reasoning) == 0 {
		if len(res.text) > 0 {
			rec.OSL = r.countText(res.text, sc)
		}
		rec.Chunks[0].Tokens = rec.OSL
		return
	}
	prev := 0
	for i := range rec.Chunks {
		if i >= len(res.ends) {
			break
		}
		end := res.ends[i]
		if end > prev {
			n := r.countText(res.text[prev:end], sc)
			rec.Chunks[i].Tokens = n
		}
		prev = end
	}
	switch {
	case len(res.reasoning) > 0:
		// AIPerf's OSL: output_token_count + reasoning_token_count, each text counted
		// on its own.
		rec.ReasoningTokens = r.countText(res.reasoning, sc)
		rec.OSL = rec.ReasoningTokens
		if len(res.content) > 0 {
			rec.OSL += r.countText(res.content, sc)
		}
	case len(res.text) > 0:
		rec.OSL = r.countText(res.text, sc)
	}
}
