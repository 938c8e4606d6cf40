package record

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Tokenization modes: how a [Server] record's ISL was measured. The values are AIPerf's
// recorder values where the meaning is the same.
const (
	// ModeChatTemplate: the messages were rendered by the tokenizer's chat template
	// with the generation prompt, then encoded without adding special tokens.
	ModeChatTemplate = "chat_template"
	// ModeChatTemplateFallback: the tokenizer has no chat template; the messages were
	// rendered ChatML-style ("<|im_start|>role\ncontent<|im_end|>", joined with "\n",
	// plus "<|im_start|>assistant\n"), then encoded. This overcounts by the markup.
	ModeChatTemplateFallback = "chat_template_fallback"
	// ModeTokenizerCall: plain text (completions prompt, embeddings input, Responses
	// input) encoded as the tokenizer's call would, without special tokens.
	ModeTokenizerCall = "tokenizer_call"
	// ModeEncodeWithoutSpecialTokens: rankings query and passages, each encoded
	// without special tokens, summed.
	ModeEncodeWithoutSpecialTokens = "encode_without_special_tokens"
	// ModePromptTokenIDs: the client sent token ids; they were counted directly.
	ModePromptTokenIDs = "prompt_token_ids"
	// ModeNone: the request was rejected before its input could be counted.
	ModeNone = "none"
)

// Server is one line of a mock-server recording (`--record-requests FILE`): what one
// request asked for, as received, and what the server answered. The first block of
// fields has AIPerf's recorder names and meanings (null when the client did not send
// the field), so AIPerf's tooling reads these files; the rest are perfgate's.
type Server struct {
	// TS is the receive time, Unix seconds.
	TS        float64 `json:"ts"`
	RequestID string  `json:"request_id"`
	// Endpoint is the path, e.g. "/v1/chat/completions".
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	// ISL is the input length in tokens, measured as TokenizationMode says
	// (template-inclusive for chat).
	ISL int `json:"isl"`
	// RequestedOSL is max_completion_tokens if sent, else max_tokens (else null).
	RequestedOSL        *int    `json:"requested_osl"`
	MaxTokens           *int    `json:"max_tokens"`
	MaxCompletionTokens *int    `json:"max_completion_tokens"`
	MinTokens           *int    `json:"min_tokens"`
	IgnoreEOS           *bool   `json:"ignore_eos"`
	ReasoningEffort     *string `json:"reasoning_effort"`
	Stream              bool    `json:"stream"`
	// TokenizationMode is one of the Mode… constants.
	TokenizationMode string `json:"tokenization_mode"`

	// Seq numbers the requests in arrival order, from 1.
	Seq uint64 `json:"seq"`
	// Status is the HTTP status answered (200 even when a fault cut the stream).
	Status int `json:"status"`
	// OSL is the number of output tokens generated and sent.
	OSL int `json:"osl"`
	// ReasoningTokens is how many of the OSL tokens were reasoning (reasoning_content,
	// thinking blocks); 0 when none.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// ToolCall names the function the answer called (tools and tool_choice asked for
	// a call); its arguments' tokens are in OSL. "" = a text answer.
	ToolCall string `json:"tool_call,omitempty"`
	// TargetOSL is the output length the server decided to generate (OSL is smaller
	// only when the stream was cut by a client disconnect or a fault).
	TargetOSL int `json:"target_osl"`
	// FinishReason is "length", "stop" (or "" for non-generating endpoints and errors).
	FinishReason string `json:"finish_reason,omitempty"`
	// RecvNS, FirstTokenNS and LastTokenNS are Unix nanosecond times: request fully
	// received, first output token written, last output token written (0 when none).
	RecvNS       int64 `json:"recv_ns"`
	FirstTokenNS int64 `json:"first_token_ns,omitempty"`
	LastTokenNS  int64 `json:"last_token_ns,omitempty"`
	// Chunks is the number of content chunks sent.
	Chunks int `json:"chunks,omitempty"`
	// Rejected is the reason a request was refused with a 4xx (e.g. "invalid_json",
	// "missing_field", "bad_api_key"); empty for served requests.
	Rejected string `json:"rejected,omitempty"`
	// Param names the offending field of a rejected request.
	Param string `json:"param,omitempty"`
	// Fault names an injected fault ("error_429", "disconnect", "slow_first_byte",
	// "malformed_chunk", "not_ready"); empty if none.
	Fault string `json:"fault,omitempty"`
	// ClientGone reports that the client disconnected before the response ended.
	ClientGone bool `json:"client_gone,omitempty"`
	// Session is the value of the session header the mock was told to record
	// (mockserver.Config.SessionHeader), and Peer the client's address of the
	// connection the request came on (ip:port), recorded with it: a session's turns
	// carry one value, and under sticky sessions come on one connection.
	Session string `json:"session,omitempty"`
	Peer    string `json:"peer,omitempty"`
	// Inputs counts the texts received (embeddings inputs, ranking passages + query).
	Inputs int `json:"inputs,omitempty"`
	// NonTextParts counts non-text content parts replaced by placeholders.
	NonTextParts int `json:"non_text_parts,omitempty"`
	// ImageTokens and AudioTokens are the prompt tokens of the request's image and audio
	// parts, counted by the served model's rule (internal/media); ISL includes them, as
	// usage.prompt_tokens does, and TextISL is ISL without them. All 0 without media.
	ImageTokens int `json:"image_tokens,omitempty"`
	AudioTokens int `json:"audio_tokens,omitempty"`
	TextISL     int `json:"text_isl,omitempty"`
	// CachedTokens is the prompt tokens the prefix cache served (the leading whole
	// blocks found; internal/kvcache), as usage.prompt_tokens_details.cached_tokens
	// reported them. 0 for requests the cache does not see.
	CachedTokens int `json:"cached_tokens,omitempty"`
	// AudioSeconds is the duration of a transcription request's audio, read from its
	// header.
	AudioSeconds float64 `json:"audio_seconds,omitempty"`
	// ImagesGenerated is the number of images an image generation request asked for.
	ImagesGenerated int `json:"images_generated,omitempty"`
}

// Recv returns the receive time.
func (s *Server) Recv() time.Time { return time.Unix(0, s.RecvNS) }

// TTFT returns the server-side time to first token (0 if no token was sent).
func (s *Server) TTFT() time.Duration {
	if s.FirstTokenNS == 0 {
		return 0
	}
	return time.Duration(s.FirstTokenNS - s.RecvNS)
}

// AppendJSON appends s as one JSON object (no newline), byte-compatible with
// encoding/json's output for the same value, without reflection.
func (s *Server) AppendJSON(b []byte) []byte {
	b = append(b, `{"ts":`...)
	b = appendFloat(b, s.TS)
	b = append(b, `,"request_id":`...)
	b = AppendJSONString(b, s.RequestID)
	b = append(b, `,"endpoint":`...)
	b = AppendJSONString(b, s.Endpoint)
	b = append(b, `,"model":`...)
	b = AppendJSONString(b, s.Model)
	b = append(b, `,"isl":`...)
	b = strconv.AppendInt(b, int64(s.ISL), 10)
	b = append(b, `,"requested_osl":`...)
	b = appendIntPtr(b, s.RequestedOSL)
	b = append(b, `,"max_tokens":`...)
	b = appendIntPtr(b, s.MaxTokens)
	b = append(b, `,"max_completion_tokens":`...)
	b = appendIntPtr(b, s.MaxCompletionTokens)
	b = append(b, `,"min_tokens":`...)
	b = appendIntPtr(b, s.MinTokens)
	b = append(b, `,"ignore_eos":`...)
	if s.IgnoreEOS == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendBool(b, *s.IgnoreEOS)
	}
	b = append(b, `,"reasoning_effort":`...)
	if s.ReasoningEffort == nil {
		b = append(b, "null"...)
	} else {
		b = AppendJSONString(b, *s.ReasoningEffort)
	}
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, s.Stream)
	b = append(b, `,"tokenization_mode":`...)
	b = AppendJSONString(b, s.TokenizationMode)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, s.Seq, 10)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(s.Status), 10)
	b = append(b, `,"osl":`...)
	b = strconv.AppendInt(b, int64(s.OSL), 10)
	if s.ReasoningTokens != 0 {
		b = append(b, `,"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(s.ReasoningTokens), 10)
	}
	if s.ToolCall != "" {
		b = append(b, `,"tool_call":`...)
		b = AppendJSONString(b, s.ToolCall)
	}
	b = append(b, `,"target_osl":`...)
	b = strconv.AppendInt(b, int64(s.TargetOSL), 10)
	if s.FinishReason != "" {
		b = append(b, `,"finish_reason":`...)
		b = AppendJSONString(b, s.FinishReason)
	}
	b = append(b, `,"recv_ns":`...)
	b = strconv.AppendInt(b, s.RecvNS, 10)
	if s.FirstTokenNS != 0 {
		b = append(b, `,"first_token_ns":`...)
		b = strconv.AppendInt(b, s.FirstTokenNS, 10)
	}
	if s.LastTokenNS != 0 {
		b = append(b, `,"last_token_ns":`...)
		b = strconv.AppendInt(b, s.LastTokenNS, 10)
	}
	if s.Chunks != 0 {
		b = append(b, `,"chunks":`...)
		b = strconv.AppendInt(b, int64(s.Chunks), 10)
	}
	if s.Rejected != "" {
		b = append(b, `,"rejected":`...)
		b = AppendJSONString(b, s.Rejected)
	}
	if s.Param != "" {
		b = append(b, `,"param":`...)
		b = AppendJSONString(b, s.Param)
	}
	if s.Fault != "" {
		b = append(b, `,"fault":`...)
		b = AppendJSONString(b, s.Fault)
	}
	if s.ClientGone {
		b = append(b, `,"client_gone":true`...)
	}
	if s.Session != "" {
		b = append(b, `,"session":`...)
		b = AppendJSONString(b, s.Session)
	}
	if s.Peer != "" {
		b = append(b, `,"peer":`...)
		b = AppendJSONString(b, s.Peer)
	}
	if s.Inputs != 0 {
		b = append(b, `,"inputs":`...)
		b = strconv.AppendInt(b, int64(s.Inputs), 10)
	}
	if s.NonTextParts != 0 {
		b = append(b, `,"non_text_parts":`...)
		b = strconv.AppendInt(b, int64(s.NonTextParts), 10)
	}
	if s.ImageTokens != 0 {
		b = append(b, `,"image_tokens":`...)
		b = strconv.AppendInt(b, int64(s.ImageTokens), 10)
	}
	if s.AudioTokens != 0 {
		b = append(b, `,"audio_tokens":`...)
		b = strconv.AppendInt(b, int64(s.AudioTokens), 10)
	}
	if s.TextISL != 0 {
		b = append(b, `,"text_isl":`...)
		b = strconv.AppendInt(b, int64(s.TextISL), 10)
	}
	if s.CachedTokens != 0 {
		b = append(b, `,"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(s.CachedTokens), 10)
	}
	if s.AudioSeconds != 0 {
		b = append(b, `,"audio_seconds":`...)
		b = appendFloat(b, s.AudioSeconds)
	}
	if s.ImagesGenerated != 0 {
		b = append(b, `,"images_generated":`...)
		b = strconv.AppendInt(b, int64(s.ImagesGenerated), 10)
	}
	return append(b, '}')
}

func appendIntPtr(b []byte, p *int) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*p), 10)
}

// appendFloat formats as encoding/json does.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	abs := math.Abs(f)
	fmtc := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmtc = 'e'
	}
	b = strconv.AppendFloat(b, f, fmtc, -1, 64)
	if fmtc == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string, as encoding/json does with HTML escaping
// off (invalid UTF-8 → U+FFFD, U+2028/2029 escaped).
func AppendJSONString(b []byte, s string) []byte { return appendJSONString(b, s, false) }

// AppendJSONStringHTML appends s quoted byte for byte as encoding/json.Marshal does: as
// [AppendJSONString], and also <, > and & as \u00XX and \b and \f in their short forms.
func AppendJSONStringHTML(b []byte, s string) []byte { return appendJSONString(b, s, true) }

// jsonPlain[c] and jsonPlainHTML[c] say that byte c is written as it is: ASCII that
// needs no escape (a table lookup per byte instead of five comparisons).
var jsonPlain, jsonPlainHTML = func() (plain, html [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		plain[c] = c != '"' && c != '\\'
		html[c] = plain[c] && c != '<' && c != '>' && c != '&'
	}
	return
}()

func appendJSONString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	plain := &jsonPlain
	if html {
		plain = &jsonPlainHTML
	}
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c < 0x80 {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				if html {
					b = append(b, '\\', 'b')
					break
				}
				b = append(b, '\\', 'u', '0', '0', '0', '8')
			case '\f':
				if html {
					b = append(b, '\\', 'f')
					break
				}
				b = append(b, '\\', 'u', '0', '0', '0', 'c')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 0xFFFD && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == 0x2028 || r == 0x2029 {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Summary statistics ---------------------------------------------------------------

// ServerSummary is FILE.summary.json, written when a recording mock server closes. Its
// first two fields and the per-endpoint "count", "streamed_count", "ignore_eos_count",
// "isl", "requested_osl", "min_tokens" and "vocab_distribution" blocks have AIPerf's
// recorder names and meanings; the rest are perfgate's.
type ServerSummary struct {
	// TotalRequests counts the requests served: the lines of the recording.
	TotalRequests int                        `json:"total_requests"`
	PerEndpoint   map[string]EndpointSummary `json:"per_endpoint"`

	// Answered counts the API requests that got a complete HTTP response (every
	// status): TotalRequests served plus the rejected ones. Requests to paths that are
	// not an API (probes such as /version or /health, wrong URLs) are answered but
	// neither counted here nor recorded.
	Answered int `json:"answered"`
	// Recorded counts lines written to the recording and FILE.rejected.jsonl (equals
	// Answered after Close).
	Recorded int `json:"recorded"`
	// Rejected counts refused requests by reason (see [Server.Rejected]); they are in
	// FILE.rejected.jsonl, not in the recording, nor in TotalRequests.
	Rejected map[string]int `json:"rejected_requests"`
	// Faults counts injected faults by kind.
	Faults map[string]int `json:"faults"`
	// TokenizationModes counts records by tokenization mode.
	TokenizationModes map[string]int `json:"tokenization_modes"`
	// FinishReasons counts generating requests by finish reason.
	FinishReasons map[string]int `json:"finish_reasons"`
	// ClientGone counts responses the client abandoned mid-way.
	ClientGone int `json:"client_gone"`
	// Tokenizer names the tokenizer that counted, and its fingerprint.
	Tokenizer            string `json:"tokenizer,omitempty"`
	TokenizerFingerprint string `json:"tokenizer_fingerprint,omitempty"`
	// Seed is the server's random seed.
	Seed uint64 `json:"seed"`
	// Started and Ended are Unix seconds.
	Started float64 `json:"started"`
	Ended   float64 `json:"ended"`
}

// EndpointSummary aggregates one endpoint's served (not rejected) requests.
type EndpointSummary struct {
	Count          int `json:"count"`
	StreamedCount  int `json:"streamed_count"`
	IgnoreEOSCount int `json:"ignore_eos_count"`
	// ReasoningEffortCounts counts reasoning_effort values (nil when none sent).
	ReasoningEffortCounts map[string]int `json:"reasoning_effort_counts"`
	// ISL is the input length distribution; RequestedOSL that of the requested caps
	// (only requests that sent one); MinTokens that of min_tokens.
	ISL          *StatBlock `json:"isl"`
	RequestedOSL *StatBlock `json:"requested_osl"`
	MinTokens    *Quantiles `json:"min_tokens"`
	// OSL is the distribution of generated output lengths (perfgate).
	OSL *StatBlock `json:"osl"`
	// ReasoningTokens is the distribution of the reasoning part of OSL, over the
	// requests that reasoned (nil when none did).
	ReasoningTokens   *Quantiles         `json:"reasoning_tokens,omitempty"`
	VocabDistribution *VocabDistribution `json:"vocab_distribution"`
	TokenizationModes map[string]int     `json:"tokenization_modes"`
	FinishReasons     map[string]int     `json:"finish_reasons,omitempty"`
}

// Quantiles summarises a sample. Percentiles use linear interpolation between order
// statistics (numpy "linear", Python statistics.quantiles(method="inclusive")).
type Quantiles struct {
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
	Stdev float64 `json:"stdev"` // population standard deviation (numpy std, ddof=0)
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
}

// StatBlock is [Quantiles] plus the number of distinct values and a histogram.
type StatBlock struct {
	Quantiles
	UniqueValues int        `json:"unique_values"`
	Histogram    *Histogram `json:"histogram"`
}

// Histogram has len(BinEdges) == len(Counts)+1 equal-width bins; the last bin is closed
// on both ends. At least 10 bins, each at most 100 wide (AIPerf's rule); one bin
// [v, v] when all values are equal.
type Histogram struct {
	BinEdges []float64 `json:"bin_edges"`
	Counts   []int     `json:"counts"`
}

// VocabDistribution describes the token ids received on one endpoint.
type VocabDistribution struct {
	VocabSize             int        `json:"vocab_size"`
	VocabSizeSource       string     `json:"vocab_size_source"` // "tokenizer" or "observed"
	UniqueIDs             int        `json:"unique_ids"`
	CoveragePct           float64    `json:"coverage_pct"`
	TotalTokens           int        `json:"total_tokens"`
	Top10ConcentrationPct float64    `json:"top_10_concentration_pct"`
	EntropyBits           float64    `json:"entropy_bits"`
	MaxEntropyBits        float64    `json:"max_entropy_bits"`
	TopTokens             []TopToken `json:"top_tokens"`
	// Shape80 sums counts into 80 equal-width buckets over [0, VocabSize).
	Shape80      []int          `json:"shape_80"`
	Shape80Stats *Quantiles     `json:"shape_80_stats"`
	Frequencies  map[string]int `json:"frequencies"` // token id (decimal) → count
}

// TopToken is one of the most frequent ids with its decoded text ("<id=N>" when not
// printable).
type TopToken struct {
	ID    int    `json:"id"`
	Text  string `json:"text"`
	Count int    `json:"count"`
}
