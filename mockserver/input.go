package mockserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// job is a parsed, validated, counted request.
type job struct {
	kind         kind
	model        string
	stream       bool
	includeUsage bool
	stop         []string
	echo         bool
	prompt       string // completions echo
	nInputs      int    // embeddings inputs / ranking passages
	encoding     string // embeddings encoding_format
	dims         int
	topN         int
	maxOut       int // resolved output cap
	ignoreEOS    bool
	minTokens    int
	ids          []int  // input token ids (vocabulary statistics)
	seed         *int64 // the request's "seed": outputs depend on it instead of the body
	effort       string // reasoning_effort ("" = none)
	// thinkingBudget is an Anthropic request's thinking.budget_tokens (0 = none).
	thinkingBudget int
	// tool is the function a chat answer calls instead of answering in text ("" =
	// text; tools.go).
	tool         string
	media        *mediaJob                 // transcriptions and images
	imageLatency distribution.Distribution // per image, ms (nil = none)
	latencyScale float64
	// srv is the server whose per-request data the answer carries (Config.ServerTimings,
	// "" = none), and times what this server measured of the request, filled in just
	// before the closing frames or the whole answer are written (serverdata.go).
	srv   string
	times openai.ServerTimes
}

// appendServerData puts the request's server data into the JSON object b ends with,
// in j.srv's format; b as it is without one.
func (j *job) appendServerData(b []byte) []byte {
	if j.srv == "" {
		return b
	}
	return openai.AppendServerData(b, j.srv, &j.times)
}

// inputs is what a kind's parser uses of the server: the limits its configuration
// sets and the tokenizer that counts (and bounds) a request's input.
type inputs struct {
	cfg  *Config
	tok  *tokenizer.Tokenizer
	memo *encodeMemo // nil: nothing remembered
	// images is where image generation's images come from (nil: the process's
	// cache, processImages).
	images *imageCache
}

// encodeMemo remembers the token ids of short rendered chat inputs. A benchmark's
// prompts repeat (a payload file, a synthetic corpus's windows), and encoding the input
// was the largest CPU cost of a non-streaming request after the system calls. The ids
// are the tokenizer's own, shared read-only by the requests that hit.
type encodeMemo struct {
	mu sync.RWMutex
	m  map[string][]int
	// chat holds the same ids keyed by the messages of a chat input that the ChatML
	// fallback renders (chatKey), so that a repeated conversation is neither rendered
	// nor hashed as its rendered text again.
	chat map[string][]int
}

// Inputs of at most memoText bytes are remembered, up to memoEntries of them.
const (
	memoText    = 1 << 10
	memoEntries = 1 << 12
)

func newEncodeMemo() *encodeMemo {
	return &encodeMemo{m: map[string][]int{}, chat: map[string][]int{}}
}

// chatKey appends to dst what the ChatML fallback's rendering depends on (the
// generation prompt, each message's role and text, each length-prefixed so that no
// two conversations share a key), and false when msgs have parts or the key would be
// longer than memoText.
func chatKey(dst []byte, msgs []tokenizer.Message, addGen bool) ([]byte, bool) {
	if addGen {
		dst = append(dst, 1)
	} else {
		dst = append(dst, 0)
	}
	for _, m := range msgs {
		if m.Parts != nil || len(dst)+len(m.Role)+len(m.Content)+2*binary.MaxVarintLen64 > memoText {
			return dst, false
		}
		dst = binary.AppendUvarint(dst, uint64(len(m.Role)))
		dst = append(dst, m.Role...)
		dst = binary.AppendUvarint(dst, uint64(len(m.Content)))
		dst = append(dst, m.Content...)
	}
	return dst, true
}

// chatIDs returns the ids remembered for key (chatKey's), if any.
func (e *encodeMemo) chatIDs(key []byte) ([]int, bool) {
	e.mu.RLock()
	ids, ok := e.chat[string(key)]
	e.mu.RUnlock()
	return ids, ok
}

// rememberChat keeps ids (as encode returned them) under key.
func (e *encodeMemo) rememberChat(key []byte, ids []int) {
	e.mu.Lock()
	if len(e.chat) < memoEntries {
		e.chat[string(key)] = ids
	}
	e.mu.Unlock()
}

// encode returns text's ids (tok.Encode without special tokens), remembered. Their
// capacity is their length, so a caller's append copies them (rankings append the
// documents' ids to the query's).
func (e *encodeMemo) encode(tok *tokenizer.Tokenizer, text string) []int {
	if len(text) > memoText {
		return tok.Encode(text, false)
	}
	e.mu.RLock()
	ids, ok := e.m[text]
	e.mu.RUnlock()
	if ok {
		return ids
	}
	ids = slices.Clip(tok.Encode(text, false))
	e.mu.Lock()
	if len(e.m) < memoEntries {
		e.m[text] = ids
	}
	e.mu.Unlock()
	return ids
}

// apiError is a request refused with an OpenAI error body.
type apiError struct {
	status int
	typ    string
	reason string // record.Server.Rejected
	param  string
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(reason, param, format string, a ...any) *apiError {
	return &apiError{status: 400, typ: openai.ErrInvalidRequest, reason: reason, param: param, msg: fmt.Sprintf(format, a...)}
}

// decodeErr maps an encoding/json error to an apiError naming the field.
func decodeErr(err error) *apiError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "body"
		}
		return badRequest("wrong_type", field, "%s: expected %s, got %s", field, typeName(te.Type.String()), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return badRequest("invalid_json", "", "request body is not valid JSON (at byte %d): %v", se.Offset, err)
	}
	return badRequest("invalid_json", "", "request body is not valid JSON: %v", err)
}

func typeName(t string) string {
	switch {
	case strings.HasPrefix(t, "*"):
		return typeName(t[1:])
	case strings.HasPrefix(t, "[]"):
		return "array"
	case t == "int", t == "int64", t == "float64":
		return "number"
	case strings.Contains(t, "openai.Content"):
		return "string or array of content parts"
	case strings.Contains(t, "openai.Prompt"):
		return "string, array of strings or token ids"
	case strings.HasPrefix(t, "openai."), strings.HasPrefix(t, "struct"):
		return "object"
	}
	return t
}

// checkText refuses a body that is not UTF-8 or is empty (blank), naming the first
// bad byte.
func checkText(body []byte) *apiError {
	if !utf8.Valid(body) {
		i := 0
		for i < len(body) {
			r, n := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return badRequest("invalid_utf8", "body", "request body is not valid UTF-8 (first bad byte at offset %d)", i)
	}
	if len(bytes.TrimSpace(body[:min(len(body), 64)])) == 0 {
		return badRequest("invalid_json", "body", "request body is empty")
	}
	return nil
}

// parse decodes and validates body for k, counts its input tokens, and fills rec's
// request fields. It returns the job or the error to answer with. A body that is not
// multipart/form-data (an upload, whose parts may be binary) must be non-empty UTF-8.
func (s *Server) parse(k kind, body, contentType []byte, rec *record.Server, j *job) (*job, *apiError) {
	if !bytes.HasPrefix(contentType, []byte("multipart/form-data")) {
		if e := checkText(body); e != nil {
			return nil, e
		}
	}
	*j = job{kind: k}
	if err := k.parse(&s.in, body, contentType, j, rec); err != nil {
		return nil, err
	}
	if e := s.fitContext(j, rec); e != nil {
		return nil, e
	}
	rec.Model = j.model
	if j.model == "" {
		return nil, badRequest("missing_field", "model", "you must provide a model parameter")
	}
	if !s.modelSet.serves(j.model) && (s.cfg.StrictModel || s.cfg.AnyModel) {
		return nil, unknownModel(j.model) // serves learned it under AnyModel
	}
	return j, nil
}

// fitContext holds a generating request's input plus output to the context length as
// vLLM does: a requested output that does not fit is refused; the default one is
// shortened to what fits.
func (s *Server) fitContext(j *job, rec *record.Server) *apiError {
	k, ok := j.kind.(generative)
	if !ok {
		return nil
	}
	limit, isl := s.in.maxModelLen(), rec.ISL
	if isl+j.maxOut <= limit {
		return nil
	}
	if rec.RequestedOSL == nil {
		j.maxOut = max(limit-isl, 1)
		j.minTokens = min(j.minTokens, j.maxOut)
		return nil
	}
	param := k.outputParam(rec)
	e := badRequest("context_length_exceeded", param, "'%s' is too large: %d. This model's maximum context length is %d tokens and your request has %d input tokens (%d > %d - %d). (--max-model-len %d)",
		param, j.maxOut, limit, isl, j.maxOut, limit, isl, limit)
	e.code = "context_length_exceeded"
	return e
}

func intPtrCopy(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// outputLimits validates the OSL-shaping fields and records them.
func (in *inputs) outputLimits(j *job, rec *record.Server, maxTokens, maxCompletion, minTokens *int, ignoreEOS *bool, maxName string) *apiError {
	rec.MaxTokens, rec.MaxCompletionTokens, rec.MinTokens = intPtrCopy(maxTokens), intPtrCopy(maxCompletion), intPtrCopy(minTokens)
	if ignoreEOS != nil {
		v := *ignoreEOS
		rec.IgnoreEOS = &v
	}
	capN := orInt(in.cfg.MaxTokensCap, DefaultMaxTokensCap)
	check := func(name string, p *int) *apiError {
		if p == nil {
			return nil
		}
		switch {
		case *p < 0:
			return badRequest("invalid_value", name, "%s must be non-negative, got %d", name, *p)
		case *p == 0:
			return badRequest("invalid_value", name, "%s must be at least 1, got 0", name)
		case *p > capN:
			return badRequest("invalid_value", name, "%s %d is above this server's limit of %d", name, *p, capN)
		}
		return nil
	}
	if e := check(maxName, maxTokens); e != nil {
		return e
	}
	if e := check("max_completion_tokens", maxCompletion); e != nil {
		return e
	}
	if minTokens != nil && *minTokens < 0 {
		return badRequest("invalid_value", "min_tokens", "min_tokens must be non-negative, got %d", *minTokens)
	}
	j.maxOut = orInt(in.cfg.DefaultMaxTokens, DefaultMaxTokens)
	switch {
	case maxCompletion != nil:
		j.maxOut = *maxCompletion
		rec.RequestedOSL = rec.MaxCompletionTokens // the record's own copy, shared
	case maxTokens != nil:
		j.maxOut = *maxTokens
		rec.RequestedOSL = rec.MaxTokens
	}
	if minTokens != nil {
		j.minTokens = *minTokens
		if j.minTokens > j.maxOut {
			return badRequest("invalid_value", "min_tokens", "min_tokens %d is above the maximum output length %d", j.minTokens, j.maxOut)
		}
	}
	j.ignoreEOS = ignoreEOS != nil && *ignoreEOS
	return nil
}

// validRole reports whether role is one vLLM's OpenAI server accepts.
func validRole(role string) bool {
	switch role {
	case "system", "developer", "user", "assistant", "tool", "function":
		return true
	}
	return false
}

// sampling validates the sampling parameters as vLLM does.
func sampling(temperature, topP *float64, n *int) *apiError {
	if temperature != nil && !(*temperature >= 0 && *temperature <= 2) {
		return badRequest("invalid_value", "temperature", "temperature must be in [0, 2], got %v", *temperature)
	}
	if topP != nil && !(*topP > 0 && *topP <= 1) {
		return badRequest("invalid_value", "top_p", "top_p must be in (0, 1], got %v", *topP)
	}
	if n != nil && *n < 1 {
		return badRequest("invalid_value", "n", "n must be at least 1, got %d", *n)
	}
	if n != nil && *n != 1 {
		return badRequest("invalid_value", "n", "n = %d is not supported by the mock server; only one choice (n = 1)", *n)
	}
	return nil
}

// maxModelLen is the context length in tokens.
func (in *inputs) maxModelLen() int { return orInt(in.cfg.MaxModelLen, DefaultMaxModelLen) }

// checkLen refuses an input of n tokens longer than the context length, with vLLM's
// message (n is a lower bound when tokenizing stopped early).
func (in *inputs) checkLen(n int, param string) *apiError {
	if limit := in.maxModelLen(); n > limit {
		e := badRequest("context_length_exceeded", param, "This model's maximum context length is %d tokens. However, your request has %d input tokens. "+
			"Please reduce the length of the input messages. (--max-model-len %d)", limit, n, limit)
		e.code = "context_length_exceeded"
		return e
	}
	return nil
}

// segmentBytes is how much text one bounded-encoding step tokenizes.
const segmentBytes = 64 << 10

// encodeBounded encodes text, stopping once it is known to have more than limit
// tokens: then ids is nil and n (> limit) is the count so far. Text that short in bytes
// cannot pass the limit is encoded at once; longer text is counted in segments cut
// before a space, so at most about limit tokens plus one segment are tokenized before
// a refusal, and text within the limit is then encoded whole (exact count).
func (in *inputs) encodeBounded(text string, limit int) (ids []int, n int) {
	if len(text)+8 <= limit {
		if in.memo != nil {
			ids = in.memo.encode(in.tok, text)
		} else {
			ids = in.tok.Encode(text, false)
		}
		return ids, len(ids)
	}
	segs := 0
	for rest := text; rest != ""; segs++ {
		cut := segmentCut(rest, segmentBytes)
		n += in.tok.Count(rest[:cut], false)
		// Each cut may split what the whole text merges: allow a token per cut.
		if n > limit+segs {
			return nil, n
		}
		rest = rest[cut:]
	}
	ids = in.tok.Encode(text, false)
	if len(ids) > limit {
		return nil, len(ids)
	}
	return ids, len(ids)
}

// segmentCut returns where to cut s to at most max bytes: before a space that follows a
// non-space (a word boundary pre-tokenizers split at), else at a UTF-8 boundary.
func segmentCut(s string, max int) int {
	if len(s) <= max {
		return len(s)
	}
	for i := max; i > max/2; i-- {
		if s[i] == ' ' && s[i-1] != ' ' && s[i-1] != '\n' && s[i-1] != '\t' {
			return i
		}
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// encodeChat renders msgs as [tokenizer.Tokenizer.ChatInput] does (the chat template,
// or the ChatML fallback), encodes the result without adding special tokens (the
// rendering has them), bounded by the context length (see [inputs.encodeBounded]),
// into j and rec, and checks the length against the context (param names the field
// in the errors).
func (in *inputs) encodeChat(msgs []tokenizer.Message, addGen bool, param string, j *job, rec *record.Server) *apiError {
	// A short conversation rendered by the ChatML fallback (no template, so no clock
	// or other input) is looked up by its messages before it is rendered.
	var keyBuf [256]byte
	var key []byte
	keyed := false
	if in.memo != nil && !in.tok.HasChatTemplate() {
		key, keyed = chatKey(keyBuf[:0], msgs, addGen)
		if keyed {
			if ids, ok := in.memo.chatIDs(key); ok {
				j.ids, rec.ISL = ids, len(ids)
				rec.TokenizationMode = chatMode(true)
				return in.checkLen(rec.ISL, param)
			}
		}
	}
	text, fallback, err := in.tok.ChatInput(msgs, tokenizer.ChatOptions{AddGenerationPrompt: addGen})
	if err != nil {
		return badRequest("chat_template_error", param, "chat template: %v", err)
	}
	limit := in.maxModelLen()
	j.ids, rec.ISL = in.encodeBounded(text, limit)
	if keyed && fallback && len(text) <= memoText && len(text)+8 <= limit {
		in.memo.rememberChat(key, j.ids) // encodeBounded's memo path: the same ids
	}
	rec.TokenizationMode = chatMode(fallback)
	return in.checkLen(rec.ISL, param)
}

// chatMode is the record's tokenization mode of a chat input rendered with the
// template or with the ChatML fallback.
func chatMode(fallback bool) string {
	if fallback {
		return record.ModeChatTemplateFallback
	}
	return record.ModeChatTemplate
}

func (in *inputs) checkIDs(ids []int, param string) *apiError {
	n := in.tok.VocabSize()
	for i, id := range ids {
		if id < 0 || id >= n {
			return badRequest("invalid_value", param, "%s[%d] = %d is not a token id (vocabulary size %d)", param, i, id, n)
		}
	}
	return nil
}

// encodePrompt counts a completions prompt or embeddings input; each text or id
// sequence is held to the context length.
func (in *inputs) encodePrompt(p openai.Prompt, param string, rec *record.Server) ([]int, *apiError) {
	if p.IsTokens() {
		var ids []int
		for i, seq := range p.IDs {
			if e := in.checkIDs(seq, param+"["+strconv.Itoa(i)+"]"); e != nil {
				return nil, e
			}
			if e := in.checkLen(len(seq), param); e != nil {
				return nil, e
			}
			ids = append(ids, seq...)
		}
		rec.TokenizationMode = record.ModePromptTokenIDs
		return ids, nil
	}
	var ids []int
	for _, t := range p.Texts {
		e, n := in.encodeBounded(t, in.maxModelLen())
		if err := in.checkLen(n, param); err != nil {
			return nil, err
		}
		ids = append(ids, e...)
	}
	rec.TokenizationMode = record.ModeTokenizerCall
	return ids, nil
}
