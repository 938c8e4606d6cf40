package mockserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

type kind int

const (
	kindChat kind = iota
	kindCompletion
	kindResponses
	kindEmbeddings
	kindRankings
	kindMessages // Anthropic Messages API
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

// parse decodes and validates body for k, counts its input tokens, and fills rec's
// request fields. It returns the job or the error to answer with.
func (s *Server) parse(k kind, body []byte, rec *record.Server) (*job, *apiError) {
	if !utf8.Valid(body) {
		i := 0
		for i < len(body) {
			r, n := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return nil, badRequest("invalid_utf8", "body", "request body is not valid UTF-8 (first bad byte at offset %d)", i)
	}
	if len(strings.TrimSpace(string(body[:min(len(body), 64)]))) == 0 {
		return nil, badRequest("invalid_json", "body", "request body is empty")
	}
	j := &job{kind: k}
	var err *apiError
	switch k {
	case kindChat:
		err = s.parseChat(body, j, rec)
	case kindCompletion:
		err = s.parseCompletion(body, j, rec)
	case kindResponses:
		err = s.parseResponses(body, j, rec)
	case kindEmbeddings:
		err = s.parseEmbeddings(body, j, rec)
	case kindRankings:
		err = s.parseRankings(body, j, rec)
	case kindMessages:
		err = s.parseMessages(body, j, rec)
	}
	if err != nil {
		return nil, err
	}
	if e := s.fitContext(j, rec); e != nil {
		return nil, e
	}
	rec.Model = j.model
	if j.model == "" {
		return nil, badRequest("missing_field", "model", "you must provide a model parameter")
	}
	if s.cfg.StrictModel && !s.hasModel(j.model) {
		return nil, &apiError{status: 404, typ: openai.ErrNotFound, reason: "unknown_model", param: "model", code: "model_not_found",
			msg: fmt.Sprintf("the model %q does not exist; served: %s", j.model, strings.Join(s.models, ", "))}
	}
	return j, nil
}

// fitContext holds a generating request's input plus output to the context length as
// vLLM does: a requested output that does not fit is refused; the default one is
// shortened to what fits.
func (s *Server) fitContext(j *job, rec *record.Server) *apiError {
	if j.kind == kindEmbeddings || j.kind == kindRankings {
		return nil
	}
	limit, isl := s.maxModelLen(), rec.ISL
	if isl+j.maxOut <= limit {
		return nil
	}
	if rec.RequestedOSL == nil {
		j.maxOut = max(limit-isl, 1)
		j.minTokens = min(j.minTokens, j.maxOut)
		return nil
	}
	param := "max_tokens"
	switch {
	case j.kind == kindResponses:
		param = "max_output_tokens"
	case rec.MaxCompletionTokens != nil:
		param = "max_completion_tokens"
	}
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
func (s *Server) outputLimits(j *job, rec *record.Server, maxTokens, maxCompletion, minTokens *int, ignoreEOS *bool, maxName string) *apiError {
	rec.MaxTokens, rec.MaxCompletionTokens, rec.MinTokens = intPtrCopy(maxTokens), intPtrCopy(maxCompletion), intPtrCopy(minTokens)
	if ignoreEOS != nil {
		v := *ignoreEOS
		rec.IgnoreEOS = &v
	}
	capN := orInt(s.cfg.MaxTokensCap, DefaultMaxTokensCap)
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
	j.maxOut = orInt(s.cfg.DefaultMaxTokens, DefaultMaxTokens)
	switch {
	case maxCompletion != nil:
		j.maxOut = *maxCompletion
		rec.RequestedOSL = intPtrCopy(maxCompletion)
	case maxTokens != nil:
		j.maxOut = *maxTokens
		rec.RequestedOSL = intPtrCopy(maxTokens)
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

func (s *Server) parseChat(body []byte, j *job, rec *record.Server) *apiError {
	var req openai.ChatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return decodeErr(err)
	}
	j.model, j.stream, j.seed = req.Model, req.Stream, req.Seed
	rec.Model, rec.Stream, rec.ReasoningEffort = req.Model, req.Stream, req.ReasoningEffort
	if req.ReasoningEffort != nil {
		j.effort = *req.ReasoningEffort
	}
	j.includeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	j.stop = req.Stop
	if e := s.outputLimits(j, rec, req.MaxTokens, req.MaxCompletionTokens, req.MinTokens, req.IgnoreEOS, "max_tokens"); e != nil {
		return e
	}
	if e := sampling(req.Temperature, req.TopP, req.N); e != nil {
		return e
	}
	if req.PromptTokenIDs != nil {
		if e := s.checkIDs(req.PromptTokenIDs, "prompt_token_ids"); e != nil {
			return e
		}
		j.ids = req.PromptTokenIDs
		rec.ISL, rec.TokenizationMode = len(j.ids), record.ModePromptTokenIDs
		return s.checkLen(len(j.ids), "prompt_token_ids")
	}
	if req.Messages == nil {
		return badRequest("missing_field", "messages", "you must provide a messages parameter")
	}
	if len(req.Messages) == 0 {
		return badRequest("invalid_value", "messages", "messages must contain at least one message")
	}
	msgs := make([]tokenizer.Message, len(req.Messages))
	for i, m := range req.Messages {
		if m.Role == "" {
			return badRequest("missing_field", fmt.Sprintf("messages[%d].role", i), "messages[%d].role is required", i)
		}
		if !validRole(m.Role) {
			return badRequest("invalid_value", fmt.Sprintf("messages[%d].role", i),
				"messages[%d].role %q is not one of system, developer, user, assistant, tool, function", i, m.Role)
		}
		msgs[i] = tokenizer.Message{Role: m.Role, Content: m.Content.Text}
		rec.NonTextParts += m.Content.NonText
	}
	addGen := req.AddGenerationPrompt == nil || *req.AddGenerationPrompt
	ids, n, mode, err := s.encodeChat(msgs, addGen)
	if err != nil {
		return badRequest("chat_template_error", "messages", "chat template: %v", err)
	}
	j.ids, rec.ISL, rec.TokenizationMode = ids, n, mode
	return s.checkLen(n, "messages")
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
func (s *Server) maxModelLen() int { return orInt(s.cfg.MaxModelLen, DefaultMaxModelLen) }

// checkLen refuses an input of n tokens longer than the context length, with vLLM's
// message (n is a lower bound when tokenizing stopped early).
func (s *Server) checkLen(n int, param string) *apiError {
	if limit := s.maxModelLen(); n > limit {
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
func (s *Server) encodeBounded(text string, limit int) (ids []int, n int) {
	if len(text)+8 <= limit {
		ids = s.tok.Encode(text, false)
		return ids, len(ids)
	}
	segs := 0
	for rest := text; rest != ""; segs++ {
		cut := segmentCut(rest, segmentBytes)
		n += s.tok.Count(rest[:cut], false)
		// Each cut may split what the whole text merges: allow a token per cut.
		if n > limit+segs {
			return nil, n
		}
		rest = rest[cut:]
	}
	ids = s.tok.Encode(text, false)
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
// or the ChatML fallback) and encodes the result without adding special tokens (the
// rendering has them), bounded by the context length (see [Server.encodeBounded]).
func (s *Server) encodeChat(msgs []tokenizer.Message, addGen bool) ([]int, int, string, error) {
	text, fallback, err := s.tok.ChatInput(msgs, tokenizer.ChatOptions{AddGenerationPrompt: addGen})
	if err != nil {
		return nil, 0, "", err
	}
	ids, n := s.encodeBounded(text, s.maxModelLen())
	return ids, n, chatMode(fallback), nil
}

// chatMode is the record's tokenization mode of a chat input rendered with the
// template or with the ChatML fallback.
func chatMode(fallback bool) string {
	if fallback {
		return record.ModeChatTemplateFallback
	}
	return record.ModeChatTemplate
}

func (s *Server) checkIDs(ids []int, param string) *apiError {
	n := s.tok.VocabSize()
	for i, id := range ids {
		if id < 0 || id >= n {
			return badRequest("invalid_value", param, "%s[%d] = %d is not a token id (vocabulary size %d)", param, i, id, n)
		}
	}
	return nil
}

// encodePrompt counts a completions prompt or embeddings input; each text or id
// sequence is held to the context length.
func (s *Server) encodePrompt(p openai.Prompt, param string, rec *record.Server) ([]int, *apiError) {
	if p.IsTokens() {
		var ids []int
		for i, seq := range p.IDs {
			if e := s.checkIDs(seq, param+"["+strconv.Itoa(i)+"]"); e != nil {
				return nil, e
			}
			if e := s.checkLen(len(seq), param); e != nil {
				return nil, e
			}
			ids = append(ids, seq...)
		}
		rec.TokenizationMode = record.ModePromptTokenIDs
		return ids, nil
	}
	var ids []int
	for _, t := range p.Texts {
		e, n := s.encodeBounded(t, s.maxModelLen())
		if err := s.checkLen(n, param); err != nil {
			return nil, err
		}
		ids = append(ids, e...)
	}
	rec.TokenizationMode = record.ModeTokenizerCall
	return ids, nil
}

func (s *Server) parseCompletion(body []byte, j *job, rec *record.Server) *apiError {
	var req openai.CompletionRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return decodeErr(err)
	}
	j.model, j.stream, j.echo, j.stop, j.seed = req.Model, req.Stream, req.Echo, req.Stop, req.Seed
	rec.Model, rec.Stream = req.Model, req.Stream
	j.includeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	if e := s.outputLimits(j, rec, req.MaxTokens, req.MaxCompletionTokens, req.MinTokens, req.IgnoreEOS, "max_tokens"); e != nil {
		return e
	}
	if e := sampling(req.Temperature, req.TopP, req.N); e != nil {
		return e
	}
	if req.Prompt.Empty() {
		return badRequest("missing_field", "prompt", "you must provide a prompt parameter")
	}
	if len(req.Prompt.Texts) > 1 || len(req.Prompt.IDs) > 1 {
		return badRequest("invalid_value", "prompt", "batched prompts are not supported by the mock server; send one prompt per request")
	}
	ids, e := s.encodePrompt(req.Prompt, "prompt", rec)
	if e != nil {
		return e
	}
	if len(req.Prompt.Texts) == 1 {
		j.prompt = req.Prompt.Texts[0]
	} else if j.echo {
		j.prompt = s.tok.Decode(ids, false)
	}
	j.ids, rec.ISL = ids, len(ids)
	return nil
}

func (s *Server) parseResponses(body []byte, j *job, rec *record.Server) *apiError {
	var req openai.ResponsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return decodeErr(err)
	}
	j.model, j.stream = req.Model, req.Stream
	rec.Model, rec.Stream = req.Model, req.Stream
	if req.Reasoning != nil && req.Reasoning.Effort != nil {
		rec.ReasoningEffort = req.Reasoning.Effort
	}
	if e := s.outputLimits(j, rec, nil, req.MaxOutputTokens, req.MinTokens, req.IgnoreEOS, "max_output_tokens"); e != nil {
		if e.param == "max_completion_tokens" {
			e.param = "max_output_tokens"
			e.msg = strings.ReplaceAll(e.msg, "max_completion_tokens", "max_output_tokens")
		}
		return e
	}
	if e := sampling(req.Temperature, req.TopP, nil); e != nil {
		return e
	}
	// The Responses API has only max_output_tokens; record it where AIPerf does.
	rec.MaxTokens, rec.MaxCompletionTokens = nil, intPtrCopy(req.MaxOutputTokens)
	switch {
	case req.Input.IsList:
		if len(req.Input.Messages) == 0 {
			return badRequest("invalid_value", "input", "input must contain at least one item")
		}
		var msgs []tokenizer.Message
		if req.Instructions != "" {
			msgs = append(msgs, tokenizer.Message{Role: "system", Content: req.Instructions})
		}
		for i, m := range req.Input.Messages {
			if m.Role == "" {
				m.Role = "user"
			}
			if !validRole(m.Role) {
				return badRequest("invalid_value", fmt.Sprintf("input[%d].role", i),
					"input[%d].role %q is not one of system, developer, user, assistant, tool, function", i, m.Role)
			}
			msgs = append(msgs, tokenizer.Message{Role: m.Role, Content: m.Content.Text})
			rec.NonTextParts += m.Content.NonText
		}
		ids, n, mode, err := s.encodeChat(msgs, true)
		if err != nil {
			return badRequest("chat_template_error", "input", "chat template: %v", err)
		}
		j.ids, rec.ISL, rec.TokenizationMode = ids, n, mode
		return s.checkLen(n, "input")
	case req.Input.Text != "":
		text := req.Input.Text
		if req.Instructions != "" {
			text = req.Instructions + "\n" + text
		}
		ids, n := s.encodeBounded(text, s.maxModelLen())
		j.ids, rec.ISL, rec.TokenizationMode = ids, n, record.ModeTokenizerCall
		return s.checkLen(n, "input")
	default:
		return badRequest("missing_field", "input", "you must provide an input parameter")
	}
}

func (s *Server) parseEmbeddings(body []byte, j *job, rec *record.Server) *apiError {
	var req openai.EmbeddingRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return decodeErr(err)
	}
	j.model = req.Model
	rec.Model = req.Model
	if req.Input.Empty() || (len(req.Input.Texts) == 0 && len(req.Input.IDs) == 0) {
		return badRequest("missing_field", "input", "you must provide a non-empty input parameter")
	}
	switch req.EncodingFormat {
	case "", "float", "base64":
	default:
		return badRequest("invalid_value", "encoding_format", "encoding_format must be \"float\" or \"base64\", got %q", req.EncodingFormat)
	}
	if n, limit := max(len(req.Input.Texts), len(req.Input.IDs)), orInt(s.cfg.MaxEmbeddingInputs, DefaultMaxEmbeddingInputs); n > limit {
		return badRequest("too_many_inputs", "input", "input has %d items, above this server's limit of %d (--max-embedding-inputs)", n, limit)
	}
	j.encoding = req.EncodingFormat
	j.dims = orInt(s.cfg.EmbeddingDim, DefaultEmbeddingDim)
	if req.Dimensions != nil {
		if *req.Dimensions <= 0 || *req.Dimensions > 65536 {
			return badRequest("invalid_value", "dimensions", "dimensions must be in [1, 65536], got %d", *req.Dimensions)
		}
		j.dims = *req.Dimensions
	}
	ids, e := s.encodePrompt(req.Input, "input", rec)
	if e != nil {
		return e
	}
	j.nInputs = max(len(req.Input.Texts), len(req.Input.IDs))
	j.ids, rec.ISL, rec.Inputs = ids, len(ids), j.nInputs
	return nil
}

func (s *Server) parseRankings(body []byte, j *job, rec *record.Server) *apiError {
	var req openai.RankingRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return decodeErr(err)
	}
	j.model = req.Model
	rec.Model = req.Model
	if !req.Query.Set {
		return badRequest("missing_field", "query", "you must provide a query")
	}
	docs := req.Docs()
	if len(docs) == 0 {
		return badRequest("missing_field", "documents", "you must provide documents (or passages)")
	}
	if limit := orInt(s.cfg.MaxRankingDocs, DefaultMaxRankingDocs); len(docs) > limit {
		return badRequest("too_many_inputs", "documents", "%d documents, above this server's limit of %d (--max-ranking-docs)", len(docs), limit)
	}
	ids, n := s.encodeBounded(req.Query.Text, s.maxModelLen())
	if e := s.checkLen(n, "query"); e != nil {
		return e
	}
	for _, d := range docs {
		d, n := s.encodeBounded(d.Text, s.maxModelLen())
		if e := s.checkLen(n, "documents"); e != nil {
			return e
		}
		ids = append(ids, d...)
	}
	j.nInputs = len(docs)
	j.topN = len(docs)
	if req.TopN != nil {
		if *req.TopN <= 0 {
			return badRequest("invalid_value", "top_n", "top_n must be at least 1, got %d", *req.TopN)
		}
		j.topN = min(*req.TopN, len(docs))
	}
	j.ids, rec.ISL, rec.Inputs, rec.TokenizationMode = ids, len(ids), len(docs)+1, record.ModeEncodeWithoutSpecialTokens
	return nil
}
