package loadgen

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/metric"
)

// OpenLoop reports whether l's data asks for sends on a schedule (a rate, a rate
// series or a replayed schedule) rather than closed-loop workers. A Pacer, which is not
// part of the data, is not looked at.
func (l *Load) OpenLoop() bool {
	return l.Rate > 0 || len(l.RateSeries) > 0 || l.Schedule
}

// Endpoint is the API a request goes to.
type Endpoint string

// Endpoints. The zero value means EndpointChat.
const (
	EndpointChat        Endpoint = openai.KindChat        // POST /v1/chat/completions
	EndpointCompletions Endpoint = openai.KindCompletions // POST /v1/completions
	EndpointEmbeddings  Endpoint = openai.KindEmbeddings  // POST /v1/embeddings
	EndpointRankings    Endpoint = openai.KindRankings    // POST /v1/ranking (NVIDIA NIM: query + passages)
	EndpointRerank      Endpoint = openai.KindRerank      // POST /v1/rerank (vLLM/Cohere: query + documents)
	EndpointResponses   Endpoint = openai.KindResponses   // POST /v1/responses (OpenAI Responses API)
	EndpointMessages    Endpoint = openai.KindMessages    // POST /v1/messages (Anthropic Messages API)
)

// Anthropic Messages API constants: the version header every request carries (unless
// Config.Headers sets its own) and the max_tokens sent when a turn asks for no output
// length (the API requires the field).
const (
	AnthropicVersion         = openai.AnthropicVersion
	DefaultMessagesMaxTokens = 4096
)

// Corpus styles for synthetic prompts.
const (
	CorpusShakespeare = "shakespeare" // natural text cut from the embedded public-domain corpus (default)
	CorpusRandom      = "random"      // random token ids (excluding special tokens), exact length
	CorpusVLLM        = "vllm"        // vLLM's RandomDataset, reproduced with numpy default_rng(Seed)
)

// Input file formats.
const (
	FormatPayloads   = "payloads"    // JSONL of request bodies, sent as they are
	FormatMooncake   = "mooncake"    // mooncake trace: timestamp, input_length, output_length, hash_ids
	FormatShareGPT   = "sharegpt"    // ShareGPT JSON/JSONL conversations
	FormatRecording  = "recording"   // a mock-server recording (record.Server JSONL): replay what another tool sent
	FormatAgentTrace = "agent_trace" // agent jobs: sessions, sub-agents, think and tool times (docs/agents.md)
)

// Arrival processes for open-loop mode.
const (
	ArrivalPoisson  = "poisson"  // exponential gaps (default)
	ArrivalConstant = "constant" // fixed gaps
	ArrivalGamma    = "gamma"    // gamma gaps with shape Burstiness
)

// Routing policies over several URLs.
const (
	RouteRoundRobin       = "round_robin"       // default
	RouteLeastOutstanding = "least_outstanding" // the URL with the fewest requests in flight
)

// OSL fields.
const (
	OSLMaxCompletionTokens = "max_completion_tokens"
	OSLMaxTokens           = "max_tokens"
	OSLNone                = "none"
)

// Defaults used when the corresponding Config field is zero.
const (
	// RecordFlushInterval bounds how long a finished request's record may wait in
	// memory before it is written to Config.RecordFile.
	RecordFlushInterval = time.Second

	DefaultTimeout     = 10 * time.Minute
	DefaultIdleTimeout = 60 * time.Second
	DefaultGracePeriod = 30 * time.Second
	// DefaultMaxScheduleLag is Stop.MaxScheduleLag's default: an open loop more than
	// 3 s behind its schedule for 3 s is stopped (docs/validity.md).
	DefaultMaxScheduleLag = 3 * time.Second
	DefaultConcurrency    = 1
	DefaultConnectTime    = 10 * time.Second
	DefaultModel          = "perfgate-model"
)

// The allowed values of each enumerated setting, in the order messages list them:
// [Config.Validate], scenario files and the CLI all check against these.
var (
	Endpoints    = endpointNames() // the adapter table's kinds (adapter.go)
	Corpora      = []string{CorpusShakespeare, CorpusRandom, CorpusVLLM}
	Arrivals     = []string{ArrivalPoisson, ArrivalConstant, ArrivalGamma}
	InputFormats = []string{FormatPayloads, FormatMooncake, FormatShareGPT, FormatRecording, FormatAgentTrace}
	Routings     = []string{RouteRoundRobin, RouteLeastOutstanding}
	OSLFields    = []string{OSLMaxCompletionTokens, OSLMaxTokens, OSLNone}
)

// OrList writes values as "a, b or c", as the messages about them do.
func OrList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// checkEnum adds a problem when v is set and not one of allowed.
func (p *problems) checkEnum(name, v string, allowed []string) {
	if v != "" && !slices.Contains(allowed, v) {
		p.add("%s %q: want %s", name, v, OrList(allowed))
	}
}

// Limits checked by [Config.Validate] before anything is sent: a length no server
// accepts, or more workers than any machine holds, is a configuration error, not a
// run that exhausts memory first.
const (
	// MaxTokens bounds a configured input or output length (its mean, and for a
	// fixed length the value itself): no served model takes 10M tokens in one request.
	MaxTokens = 10_000_000
	// MaxConcurrency bounds Concurrency (one goroutine and one connection per worker).
	MaxConcurrency = 1_000_000
)

// Headers are request headers by name. They marshal (JSON, YAML, %v) with the values
// of credential headers — Authorization, Proxy-Authorization, X-Api-Key, Api-Key,
// Cookie, and any name containing key, token or secret — replaced by "[redacted]", so a
// scenario.json, a manifest or a log line never carries a key.
type Headers map[string]string

// Redacted returns a copy of h with credential values replaced.
func (h Headers) Redacted() map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		if openai.CredentialHeader(k) {
			v = openai.Redacted
		}
		out[k] = v
	}
	return out
}

// MarshalJSON writes the headers with credential values redacted.
func (h Headers) MarshalJSON() ([]byte, error) { return json.Marshal(h.Redacted()) }

// MarshalYAML writes the headers with credential values redacted.
func (h Headers) MarshalYAML() (any, error) { return h.Redacted(), nil }

// String prints the headers with credential values redacted.
func (h Headers) String() string { return fmt.Sprint(h.Redacted()) }

// Secret is a string that never prints or marshals: String and MarshalText give
// "[redacted]" (or "" when empty). UnmarshalText accepts the real value, so a config
// file can carry it; prefer APIKeyEnv.
type Secret string

// String returns "[redacted]", or "" for an empty secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString keeps %#v from printing the secret.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// MarshalText implements encoding.TextMarshaler without revealing the value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Secret) UnmarshalText(b []byte) error { *s = Secret(b); return nil }

// Config is a load generation run, as plain data (JSON/YAML-able; distributions are
// distribution.Spec text such as "normal:512,64"). The zero value of each field is
// documented; a valid Config needs at least a URL and a stop condition (Requests,
// Duration or an InputFile).
//
// The fields are grouped by concern in five embedded structs — [Target] (where
// requests go and in what shape), [Workload] (what is sent), [Load] (how fast),
// [Stop] (when the run and each request end) and [Recording] (what is kept and
// measured). Embedding keeps the JSON and YAML flat ("isl", "concurrency", … at the
// top level) and field access direct (cfg.ISL, cfg.Concurrency); only a composite
// literal names the group:
//
//	loadgen.Config{
//		Target:   loadgen.Target{URLs: []string{url}},
//		Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:128")},
//		Stop:     loadgen.Stop{Requests: 100},
//	}
//
// Load mode: Rate > 0 (or a RateSeries) is open loop (Arrival process, Concurrency then
// caps requests in flight and the wait shows as client_queue_time); Rate == 0 is closed
// loop with Concurrency workers (default 1). Schedule replays trace timestamps instead.
type Config struct {
	Target
	Workload
	Load
	Stop
	Recording
}

// Target is where requests go and in what shape: the servers, the API, the model,
// credentials, headers and the connections.
type Target struct {
	// URLs are the servers, base ("http://127.0.0.1:8000") or full endpoint URLs.
	// A base URL (no path, "/" or ".../v1") gets the API's path appended.
	URLs []string `json:"urls,omitempty"`
	// Routing spreads requests over URLs: RouteRoundRobin (zero) or RouteLeastOutstanding.
	Routing string `json:"routing,omitempty"`
	// API is the kind of API requests are sent to (one of [Endpoints]); zero =
	// EndpointChat. It was called Endpoint (JSON "endpoint") before; the JSON name is
	// "endpoint_type", as in scenario files.
	API Endpoint `json:"endpoint_type,omitempty"`
	// Model is the "model" field; zero = DefaultModel.
	Model string `json:"model,omitempty"`
	// ModelNames, instead of Model, spreads the requests over several models (a model
	// mix, such as several LoRA adapters of one server; AIPerf's --model-names with
	// more than one name): each request's model is chosen by ModelSelection and
	// recorded (record.Client.Model). Zero = Model alone. See docs/models.md.
	ModelNames []string `json:"model_names,omitempty"`
	// ModelSelection is how a request's model is chosen from ModelNames (one of
	// [ModelSelections]): ModelRoundRobin (zero), ModelRandom or ModelWeighted.
	ModelSelection string `json:"model_selection_strategy,omitempty"`
	// ModelWeights are ModelWeighted's relative weights, one per ModelNames entry in
	// order (3,1 sends about three requests to the first model for one to the second).
	ModelWeights []float64 `json:"model_weights,omitempty"`
	// NoStream turns SSE streaming off. The zero value streams when the API generates
	// (chat, completions, responses, messages: TTFT and ITL need it) and not otherwise
	// (embeddings, rankings, rerank); see [Target.Streams]. It replaces Stream, whose
	// zero value did not stream.
	NoStream bool `json:"no_stream,omitempty"`
	// NoUsage leaves out stream_options.include_usage (sent by default when streaming).
	NoUsage bool `json:"no_usage,omitempty"`
	// APIKey is sent as "Authorization: Bearer …"; never printed nor recorded.
	APIKey Secret `json:"api_key,omitempty"`
	// APIKeyEnv names an environment variable holding the API key (used when APIKey is empty).
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// Headers are extra request headers. One replaces the header the client would set
	// (Content-Type, Accept, Host, X-Request-Id), except the Content-Type of a kind whose
	// body has its own (a multipart upload's, which names its boundary). Credential
	// values (see [Headers]) are sent but never marshalled.
	Headers Headers `json:"headers,omitempty"`
	// ConnectTimeout bounds dialing; zero = DefaultConnectTime.
	ConnectTimeout time.Duration `json:"connect_timeout,omitempty"`
	// SourceAddrs are local IPs to dial from, round-robin (e.g. 127.0.0.1 … 127.0.0.4
	// to pass the ephemeral-port limit of one source address toward one destination).
	// On Linux the source port is picked at connect time (IP_BIND_ADDRESS_NO_PORT), so
	// each address gives a full ephemeral range per destination.
	SourceAddrs []string `json:"source_addrs,omitempty"`
	// TLSCA is a PEM file of the certificate authorities an https server's
	// certificate must chain to, in place of the system's roots (a private or test
	// CA). Empty: the system's roots.
	TLSCA string `json:"tls_ca,omitempty"`
	// InsecureSkipVerify accepts whatever certificate an https server presents
	// (no chain or name check): for a throwaway test server only. Off by default.
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
	// SessionHeader, when set, names a header every request carries with its session's
	// value, the same on every turn of the session and different between sessions:
	// "JOB/SESSION" for an agent job's sessions (job id and session id as recorded),
	// "session-N" for a conversation whose first request is N (AIPerf's
	// --session-header). "" = none.
	SessionHeader string `json:"session_header,omitempty"`
	// ConnectionReuse is how requests use connections (one of [ConnectionReuses];
	// AIPerf's --connection-reuse-strategy): ReusePooled (zero: any idle connection of
	// the pool), ReuseNever (a new connection per request, closed after it) or
	// ReuseSticky (each session keeps its own connection from turn to turn, and a
	// session sticks to one URL).
	ConnectionReuse string `json:"connection_reuse_strategy,omitempty"`
	// Transport is how the client sends requests (one of [Transports]): TransportAuto
	// (zero: Linux's epoll event loops wherever the run allows them, a closed loop
	// without a ramp or streaming to plain http:// targets; goroutine workers for the
	// rest) or TransportGoroutines (goroutine workers for every request: the readable
	// reference path, and the peer bench/loadgen measures the loops against). It decides
	// how fast the client can send, never what is sent or recorded.
	Transport string `json:"transport,omitempty"`
	// EventLoops caps the event loops TransportAuto uses; zero = one per processor
	// (GOMAXPROCS).
	EventLoops int `json:"event_loops,omitempty"`
}

// Transports (Target.Transport).
const (
	TransportAuto       = "auto"
	TransportGoroutines = "goroutines"
)

// Transports are the values of Target.Transport.
var Transports = []string{TransportAuto, TransportGoroutines}

// Connection reuse strategies (Target.ConnectionReuse).
const (
	ReusePooled = "pooled"
	ReuseNever  = "never"
	ReuseSticky = "sticky-user-sessions"
)

// ConnectionReuses are the connection reuse strategies.
var ConnectionReuses = []string{ReusePooled, ReuseNever, ReuseSticky}

// tlsConfig returns the https connections' settings: TLS 1.2 or later, verified
// against TLSCA's authorities (or the system's), with a session cache so a new
// connection to a server resumes an earlier session as HTTP clients do.
func (t *Target) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.InsecureSkipVerify, ClientSessionCache: tls.NewLRUClientSessionCache(0)}
	if t.TLSCA != "" {
		pem, err := os.ReadFile(t.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("tls_ca: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls_ca %s: no PEM certificate in it", t.TLSCA)
		}
	}
	return cfg, nil
}

// Workload is what is sent: lengths, prompts, conversations, an input file, extra
// body fields, and the seed of every random choice.
type Workload struct {
	// ISL and OSL are the input and output length distributions (tokens), rounded and
	// clamped to >= 1 by distribution.Length. Zero ISL = DefaultISL; zero OSL = no
	// output cap sent. For Corpus "vllm", ISL must be fixed:N or vllm-range:N,R and OSL
	// likewise (N is --random-input-len / --random-output-len).
	ISL distribution.Spec `json:"isl,omitzero"`
	OSL distribution.Spec `json:"osl,omitzero"`
	// OSLField names the body field carrying OSL: OSLMaxCompletionTokens (zero, chat),
	// OSLMaxTokens (zero for completions), or OSLNone.
	OSLField string `json:"osl_field,omitempty"`
	// IgnoreEOS sends "ignore_eos": true; MinTokens sends "min_tokens" = OSL, so the
	// server generates exactly OSL tokens.
	IgnoreEOS bool `json:"ignore_eos,omitempty"`
	MinTokens bool `json:"min_tokens,omitempty"`

	// Corpus is the synthetic prompt style: CorpusShakespeare (zero), CorpusRandom, CorpusVLLM.
	Corpus string `json:"corpus,omitempty"`
	// PrefixTokens is the length of a prompt prefix shared by every request (a shared
	// system prompt when the endpoint is chat). 0 = none.
	PrefixTokens int `json:"prefix_tokens,omitempty"`
	// PromptSalt, when set, is a per-run cache-bust salt (NewPromptSalt;
	// scenario.Validity.CacheBust sets one per run): a line "[INDEX SALT]" starts the
	// first prompt of every conversation (and so every request's input), counted in
	// ISL. Never written to files: each run has its own. Raw payload bodies
	// (input_format payloads) are sent as they are.
	PromptSalt string `json:"-"`
	// SystemPrompt, if set, is sent as the system message of every conversation.
	SystemPrompt string `json:"system_prompt,omitempty"`
	// Turns is the number of turns per conversation; zero = 1. History is carried.
	Turns distribution.Spec `json:"turns,omitzero"`
	// TurnDelay is the pause between a turn's response and the next turn, in seconds;
	// zero = none.
	TurnDelay distribution.Spec `json:"turn_delay,omitzero"`
	// SubAgents, when > 0, makes each synthetic conversation an agent job (see
	// docs/agents.md): after its turn SubAgentAfterTurn (from 0), SubAgents sub-agent
	// sessions of SubAgentTurns turns each (zero = 1) start with contexts of their own,
	// run in parallel, and the job's next turn waits for them all; that turn's context
	// is the job's so far (every prompt and answer) with the sub-agents' last answers,
	// one user message each, before its new input. Records carry the job's id, and the
	// job metrics follow. Synthetic prompts only.
	SubAgents         int `json:"subagents,omitempty"`
	SubAgentAfterTurn int `json:"subagent_after_turn,omitempty"`
	SubAgentTurns     int `json:"subagent_turns,omitempty"`
	// Passages is the number of passages/documents per rankings or rerank request; zero = 2.
	Passages int `json:"passages,omitempty"`
	// Tools is the number of synthetic function definitions sent as "tools" with each
	// chat request (0 = none; at most MaxTools); ToolsFile instead sends the JSON array
	// of tools in that file. See docs/tools.md.
	Tools     int    `json:"tools,omitempty"`
	ToolsFile string `json:"tools_file,omitempty"`
	// ToolChoice is the tool_choice sent with tools, drawn per request from weights:
	// "auto" (zero), or e.g. "auto:0.6,required:0.2,none:0.1,function:0.1" (function:
	// one of the tools by name, drawn uniformly). See [ParseToolChoice].
	ToolChoice string `json:"tool_choice,omitempty"`
	// ToolResults makes a conversation's next turn, after an answer with tool calls,
	// send the calls back (the assistant message with tool_calls) and the turn's
	// prompt as the first call's result (a tool message with its tool_call_id; any
	// other call gets an empty result) instead of a user message.
	ToolResults bool `json:"tool_results,omitempty"`
	// ExtraBody fields are added to every generated body (they win over generated fields).
	ExtraBody map[string]any `json:"extra_body,omitempty"`

	// InputFile replaces synthetic prompts with a file in InputFormat (one of
	// [InputFormats]).
	InputFile   string `json:"input_file,omitempty"`
	InputFormat string `json:"input_format,omitempty"`
	// VLLMVocabSize overrides the vocabulary size the vllm corpus draws offsets and
	// padding from; zero = the tokenizer's BaseVocabSize(), which is what vLLM uses
	// (Hugging Face's tokenizer.vocab_size, excluding added tokens: 128000 for Llama 3).
	VLLMVocabSize int `json:"vllm_vocab_size,omitempty"`
	// BlockTokens is the token count of one mooncake or agent-trace hash block; zero = 512.
	BlockTokens int `json:"block_tokens,omitempty"`
	// MaxContext is the model's context in tokens: an agent trace turn whose
	// input_tokens + output_tokens exceed it is refused (FILE:LINE) before anything is
	// sent. Zero = MaxTokens.
	MaxContext int `json:"max_context,omitempty"`
	// TraceSessionSampleRatio replays this fraction of an agent trace's jobs, chosen
	// by Seed (AIPerf's --trace-session-sample-ratio); zero = all.
	TraceSessionSampleRatio float64 `json:"trace_session_sample_ratio,omitempty"`
	// MaxIdleGap, when > 0, caps every wait an agent trace replays (a turn's think plus
	// tool time, a gap between job starts under Schedule), after Speedup (AIPerf's
	// --max-idle-gap-cap-seconds).
	MaxIdleGap time.Duration `json:"max_idle_gap,omitempty"`

	// Media are the images and audio clips chat requests carry (media.go).
	Media
	// Prefixes is a prefix-cache workload: a prefix pool, user contexts and a
	// priming phase (prefix.go).
	Prefixes

	// Seed seeds every random choice (lengths, prompts, arrivals, cancellations).
	Seed uint64 `json:"seed,omitempty"`
}

// Load is how fast requests are sent: closed-loop workers or an open-loop rate, its
// arrival process or Pacer, a ramp, a replayed schedule, and sharding over processes.
type Load struct {
	// Concurrency: closed-loop workers, or the open-loop ceiling (0 = none).
	Concurrency int `json:"concurrency,omitempty"`
	// PrefillConcurrency caps the requests waiting for their first token (AIPerf's
	// --prefill-concurrency): a request takes a prefill slot before it is sent and
	// gives it back at its first chunk carrying output (content or reasoning), or
	// when it ends without one. The wait for a slot shows as client queue time
	// (Sent − Scheduled). 0 = no cap.
	PrefillConcurrency int `json:"prefill_concurrency,omitempty"`
	// Rate is the open-loop request rate in req/s; 0 = closed loop.
	Rate float64 `json:"rate,omitempty"`
	// RateSeries, when set, is a time-varying open-loop rate instead of Rate (AIPerf's
	// --request-rate-series): linear between its points, with Arrival's process (see
	// [SeriesPacer]). Without Requests, Duration or an input file, the run lasts until
	// its last point; with them, the last point's rate holds until they stop it.
	RateSeries RateSeries `json:"request_rate_series,omitempty"`
	// Pacer, when set, paces the open loop with any [Pacer] — ConstantPacer,
	// PoissonPacer, GammaPacer, RampPacer, TracePacer or one of your own — instead of
	// the one Rate, Arrival and Ramp describe (which must then be zero). Concurrency is
	// still the ceiling on requests in flight. Not part of a scenario file.
	Pacer Pacer `json:"-" yaml:"-"`
	// Arrival is the open-loop arrival process (one of [Arrivals]): ArrivalPoisson
	// (zero), ArrivalConstant, ArrivalGamma.
	Arrival string `json:"arrival,omitempty"`
	// Burstiness is the gamma shape (ArrivalGamma); zero = 1.
	Burstiness float64 `json:"burstiness,omitempty"`
	// RampFrom and Ramp: the rate (open loop) ramps linearly from RampFrom to Rate over
	// Ramp; closed loop starts workers evenly over Ramp (concurrency ramps 1 → Concurrency).
	RampFrom float64       `json:"ramp_from,omitempty"`
	Ramp     time.Duration `json:"ramp,omitempty"`
	// Schedule replays the file's timestamps (mooncake "timestamp" in ms, recording
	// "ts", an agent trace's job starts "t") as the arrival schedule, divided by
	// Speedup (zero = 1). An agent trace's think and tool times are divided by
	// Speedup too, with or without Schedule (AIPerf's --replay-speedup).
	Schedule bool    `json:"schedule,omitempty"`
	Speedup  float64 `json:"speedup,omitempty"`
	// UserCentricRate, when > 0, is AIPerf's user-centric timing (--user-centric-rate):
	// Concurrency users (--num-users) share this many requests per second, each
	// sending its turns Concurrency/UserCentricRate apart on its own schedule, or at
	// once when its answer came later than that (see [UserCentricPacer]). The gap is a
	// user's think time (no TurnDelay); Arrival is ArrivalConstant (zero, AIPerf's
	// fixed gap) or ArrivalPoisson (exponential gaps, seeded). Exclusive with Rate,
	// RateSeries, Schedule, Ramp and a Pacer.
	UserCentricRate float64 `json:"user_centric_rate,omitempty"`
	// CoarseTimer turns off the spin before each open-loop send (see DefaultSpin):
	// less CPU, but arrivals are only as precise as Go's ~1 ms timers.
	CoarseTimer bool `json:"coarse_timer,omitempty"`

	// Shards splits the workload over this many processes and ShardIndex (0..Shards-1)
	// says which part this one sends: global request g when g ≡ ShardIndex (mod
	// Shards), at the global schedule's time for g, keeping g as its index (see
	// [ShardPacer] and the package's sharding notes in shard.go). Zero or 1 = one
	// process sends everything.
	Shards     int `json:"shards,omitempty"`
	ShardIndex int `json:"shard_index,omitempty"`
	// StartAt, if set, is the wall-clock instant the run clock starts: Run waits for
	// it, so shards on several hosts start one schedule together. A process that
	// reaches it late starts its clock at StartAt anyway (Outcome.StartLate).
	StartAt time.Time `json:"start_at,omitzero"`
}

// Stop is when the run ends (requests, duration, grace period, warmup) and when one
// request does (timeouts, cancellation).
type Stop struct {
	// Requests stops after this many requests (warmup requests not included); Duration
	// stops sending after this long (after WarmupDuration, when that is set; requests
	// in flight then have GracePeriod to finish). Both zero with no input file:
	// invalid. With both set, whichever comes first. With closed-loop concurrency
	// above Requests, only Requests workers are started.
	Requests int           `json:"requests,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	// GracePeriod is how long requests still in flight when Duration ends may run on;
	// then they are cancelled and recorded as cancelled (AIPerf's
	// --benchmark-grace-period). Zero = DefaultGracePeriod, < 0 = no grace (cancel at
	// once). Only with Duration.
	GracePeriod time.Duration `json:"grace_period,omitempty"`
	// WarmupRequests / WarmupDuration: the first requests (by count) or those sent in
	// the first WarmupDuration are marked warmup and excluded from metrics.
	WarmupRequests int           `json:"warmup_requests,omitempty"`
	WarmupDuration time.Duration `json:"warmup_duration,omitempty"`

	// Timeout bounds a request from send to last byte; zero = DefaultTimeout, < 0 = none.
	// It fires at most Timeout/1024 late (a keep-alive connection's deadline is moved
	// only when it would otherwise be that much early or late).
	Timeout time.Duration `json:"timeout,omitempty"`
	// IdleTimeout bounds, for a streamed request, the wait for the response headers
	// and every gap between received chunks; zero = DefaultIdleTimeout, < 0 = none. A
	// non-streaming answer is bounded by Timeout only (it is generated whole before its
	// headers).
	IdleTimeout time.Duration `json:"idle_timeout,omitempty"`
	// CancelFraction of requests (chosen with Seed) are cancelled CancelAfter after sending.
	CancelFraction float64       `json:"cancel_fraction,omitempty"`
	CancelAfter    time.Duration `json:"cancel_after,omitempty"`
	// MaxScheduleLag stops an open-loop run without a concurrency ceiling whose
	// client has fallen behind its schedule: when the oldest request not yet sent has
	// been due for more than MaxScheduleLag, continuously for MaxScheduleLag, the run
	// stops sending, cancels what is in flight (as the end of the grace period does),
	// keeps every record, and says why in Self.Aborted. Zero = DefaultMaxScheduleLag,
	// < 0 = never stop. Under a ceiling, falling behind is the server's queueing, and
	// a closed loop has no schedule: neither is stopped.
	MaxScheduleLag time.Duration `json:"max_schedule_lag,omitempty"`
	// Watch, if not nil, is told of each measured request as it ends and asked every
	// AbortTick whether to stop the run (abort rules: see [AbortWatch]); a run it stops
	// ends as one the schedule watch stops. Set from Go only (package perftest/run builds
	// it from its Abort rules).
	Watch AbortWatch `json:"-"`
}

// Recording is what a run keeps and how it is measured: the record file, the
// token counts the metrics use, the goodput objective and the chunks' timestamps.
type Recording struct {
	// RecordFile, if set, is created (truncated) and receives one JSON line
	// ([record.Client]) per finished request, in completion order, as it finishes:
	// buffered, flushed at least every [RecordFlushInterval] and when Run returns
	// (also when its context is cancelled), so a killed process keeps every record
	// finished more than about a second before.
	RecordFile string `json:"record_file,omitempty"`
	// DiscardRecords keeps Outcome.Records empty, for very long runs: metrics are
	// still computed as records arrive; with a RecordFile, in constant memory (see
	// Outcome.Metrics).
	DiscardRecords bool `json:"discard_records,omitempty"`
	// TotalsOnly makes Outcome.Metrics hold only the run-level metrics (request and
	// error counts, throughputs, goodput, the benchmark duration), none of the
	// per-request and per-chunk distributions: for a caller that derives those from
	// RecordFile after the run (perftest's run.Run does), so that the collector
	// does not derive every record's values a first time while the load runs (about
	// a microsecond of client CPU per request). Set by programs, not scenario files.
	TotalsOnly bool `json:"-"`
	// Class, when set, names the traffic class this run is (a scenario's classes run as
	// one loadgen run each, concurrently, on one clock: docs/classes.md): each record
	// carries it (record.Client.Class), and "CLASS-" starts the run's request ids
	// ("CLASS-req-N"), job ids and session values, so that the classes' ids stay
	// unique in their one recording. Set by programs, not scenario files.
	Class string `json:"-"`
	// UsageOSL computes metrics with usage.completion_tokens as OSL (and usage's
	// completion_tokens_details.reasoning_tokens as the reasoning part of it).
	UsageOSL bool `json:"usage_osl,omitempty"`
	// UsageISL computes metrics with usage.prompt_tokens as ISL where the server sent
	// one (for chat that count includes the chat template). AIPerf's
	// --use-server-token-count sets both UsageOSL and UsageISL.
	UsageISL bool `json:"usage_isl,omitempty"`
	// SLO is the goodput objective ([metric.SLO], durations as "200ms" in JSON).
	// Zero: goodput is not reported.
	SLO metric.SLO `json:"slo,omitzero"`
	// AppTimestamps times chunks when the client's read returns, instead of with the
	// kernel's receive timestamp of the bytes (SO_TIMESTAMPING; Linux, plain TCP). The
	// kernel's time does not include the client process's own scheduling delays, which
	// on a busy machine dominate the measurement error.
	AppTimestamps bool `json:"app_timestamps,omitempty"`
}

// ErrInvalidConfig is wrapped by every configuration error.
var ErrInvalidConfig = errors.New("loadgen: invalid config")

func (c *Config) endpoint() Endpoint {
	if c.API == "" {
		return EndpointChat
	}
	return c.API
}

// Streams reports whether requests ask for SSE streaming: unless NoStream, when the
// API generates.
func (t *Target) Streams() bool {
	return !t.NoStream && t.API.generates()
}

func (c *Config) idleTimeout() time.Duration {
	switch {
	case c.IdleTimeout == 0:
		return DefaultIdleTimeout
	case c.IdleTimeout < 0:
		return 0
	}
	return c.IdleTimeout
}

// maxScheduleLag is Stop.MaxScheduleLag with its default applied; 0 = never stop.
func (c *Config) maxScheduleLag() time.Duration {
	switch {
	case c.MaxScheduleLag == 0:
		return DefaultMaxScheduleLag
	case c.MaxScheduleLag < 0:
		return 0
	}
	return c.MaxScheduleLag
}

func (c *Config) gracePeriod() time.Duration {
	switch {
	case c.GracePeriod == 0:
		return DefaultGracePeriod
	case c.GracePeriod < 0:
		return 0
	}
	return c.GracePeriod
}

func (c *Config) timeout() time.Duration {
	switch {
	case c.Timeout == 0:
		return DefaultTimeout
	case c.Timeout < 0:
		return 0
	}
	return c.Timeout
}

// Validate reports every problem of c at once (errors.Join), each wrapping
// ErrInvalidConfig. It sends nothing.
func (c *Config) Validate() error {
	var p problems
	c.checkTarget(&p)
	c.checkModels(&p)
	c.checkTools(&p)
	c.checkInput(&p)
	c.checkJobs(&p)
	c.checkPrefixes(&p)
	c.checkMedia(&p)
	c.checkLoad(&p)
	c.checkStop(&p)
	c.checkLimits(&p)
	c.checkLengths(&p)
	c.checkClient(&p)
	c.checkTokens(&p)
	c.checkSLO(&p)
	p = append(p, c.validateShards()...)
	return errors.Join(p...)
}

// problems collects a config's problems, each wrapping ErrInvalidConfig.
type problems []error

func (p *problems) add(format string, a ...any) {
	*p = append(*p, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, a...)...))
}

// checkTarget checks where requests go and in what shape: URLs, routing, endpoint,
// streaming and the output-length field.
func (c *Config) checkTarget(p *problems) {
	if len(c.URLs) == 0 {
		p.add("no URL")
	}
	for _, u := range c.URLs {
		pu, err := url.Parse(u)
		switch {
		case err != nil:
			p.add("url %q: %v", u, err)
		case pu.Scheme != "http" && pu.Scheme != "https":
			p.add("url %q: scheme must be http or https", u)
		case pu.Host == "":
			p.add("url %q: no host", u)
		}
	}
	p.checkEnum("routing", c.Routing, Routings)
	p.checkEnum("endpoint", string(c.API), Endpoints)
	p.checkEnum("osl_field", c.OSLField, OSLFields)
	p.checkEnum("connection_reuse_strategy", c.ConnectionReuse, ConnectionReuses)
	p.checkEnum("transport", c.Transport, Transports)
	if c.EventLoops < 0 {
		p.add("event_loops %d: want >= 0 (0 = one per processor)", c.EventLoops)
	}
	if h := c.SessionHeader; h != "" && (strings.ContainsAny(h, " \t\r\n:") || strings.EqualFold(h, "Content-Length") || strings.EqualFold(h, "Host")) {
		p.add("session_header %q: want a header name (no space or colon; not Content-Length or Host)", h)
	}
}

// checkInput checks what is sent: the corpus (and vLLM's length rules), prefixes,
// passages, an input file and its schedule.
func (c *Config) checkInput(p *problems) {
	p.checkEnum("corpus", c.Corpus, Corpora)
	if c.Corpus == CorpusVLLM {
		if c.Requests <= 0 {
			p.add("corpus vllm: requests must be set (vLLM draws all lengths up front)")
		}
		var ratios []float64
		for _, s := range []struct {
			name string
			spec distribution.Spec
		}{{"isl", c.ISL}, {"osl", c.OSL}} {
			_, r, err := vllmLen(s.spec)
			if err != nil {
				p.add("corpus vllm: %s: %v", s.name, err)
			}
			if _, ok := s.spec.Distribution.(distribution.VLLMRange); ok {
				ratios = append(ratios, r)
			}
		}
		if len(ratios) == 2 && ratios[0] != ratios[1] {
			p.add("corpus vllm: isl and osl range ratios differ (%v, %v); vLLM has one --random-range-ratio", ratios[0], ratios[1])
		}
	}
	if c.PrefixTokens < 0 {
		p.add("prefix_tokens %d < 0", c.PrefixTokens)
	}
	if c.Passages < 0 {
		p.add("passages %d < 0", c.Passages)
	}
	p.checkEnum("input_format", c.InputFormat, InputFormats)
	if c.InputFile != "" && c.InputFormat == "" {
		p.add("input_file set without input_format")
	}
	if c.InputFile == "" && c.InputFormat != "" {
		p.add("input_format %q without input_file", c.InputFormat)
	}
	if c.Schedule {
		if c.InputFormat != FormatMooncake && c.InputFormat != FormatRecording && c.InputFormat != FormatAgentTrace {
			p.add("schedule needs a mooncake trace, an agent trace or a recording as input")
		}
		if c.Rate > 0 {
			p.add("schedule and rate are exclusive")
		}
	}
	if c.Speedup < 0 || math.IsNaN(c.Speedup) {
		p.add("speedup %v < 0", c.Speedup)
	}
	if c.MaxContext < 0 {
		p.add("max_context %d < 0", c.MaxContext)
	}
	if !(c.TraceSessionSampleRatio >= 0 && c.TraceSessionSampleRatio <= 1) {
		p.add("trace_session_sample_ratio %v: want 0 (all) to 1", c.TraceSessionSampleRatio)
	}
	if c.MaxIdleGap < 0 {
		p.add("max_idle_gap %v < 0", c.MaxIdleGap)
	}
	if (c.TraceSessionSampleRatio != 0 || c.MaxIdleGap != 0) && c.InputFormat != FormatAgentTrace {
		p.add("trace_session_sample_ratio and max_idle_gap need an agent trace as input (input_format %s)", FormatAgentTrace)
	}
}

// checkLoad checks how fast requests are sent: concurrency, rate, arrivals and ramp.
func (c *Config) checkLoad(p *problems) {
	if c.Concurrency < 0 {
		p.add("concurrency %d < 0", c.Concurrency)
	}
	if c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) {
		p.add("rate %v: want >= 0 and finite", c.Rate)
	}
	p.checkEnum("arrival", c.Arrival, Arrivals)
	if c.Arrival != "" && c.Rate == 0 && len(c.RateSeries) == 0 && c.UserCentricRate == 0 {
		p.add("arrival %q needs rate > 0 or a request_rate_series", c.Arrival)
	}
	c.checkUserCentric(p)
	if len(c.RateSeries) > 0 {
		if err := c.RateSeries.Err(); err != nil {
			p.add("request_rate_series: %v", err)
		}
		if c.Rate > 0 || c.Ramp > 0 || c.RampFrom > 0 || c.Schedule || c.Pacer != nil {
			p.add("request_rate_series and rate, ramp, schedule or pacer conflict: give the load one way")
		}
	}
	if c.Burstiness < 0 {
		p.add("burstiness %v < 0", c.Burstiness)
	}
	if c.RampFrom < 0 || c.Ramp < 0 {
		p.add("ramp: ramp_from %v and ramp %v must be >= 0", c.RampFrom, c.Ramp)
	}
	if c.RampFrom > 0 && c.Rate == 0 {
		p.add("ramp_from needs rate > 0")
	}
}

// checkStop checks when the run stops: requests, duration and warmup.
func (c *Config) checkStop(p *problems) {
	if c.Requests < 0 || c.Duration < 0 || c.WarmupRequests < 0 || c.WarmupDuration < 0 {
		p.add("requests, duration and warmup must be >= 0")
	}
	if c.Requests == 0 && c.Duration == 0 && c.InputFile == "" && len(c.RateSeries) == 0 {
		p.add("no stop condition: set requests, duration, an input file or a request_rate_series")
	}
}

// checkLimits checks the client's limits: the connect timeout and the number of
// workers and prefill slots.
func (c *Config) checkLimits(p *problems) {
	if c.ConnectTimeout < 0 {
		p.add("connect_timeout must be >= 0")
	}
	if c.PrefillConcurrency < 0 || c.PrefillConcurrency > MaxConcurrency {
		p.add("prefill_concurrency %d: want 0 (no cap) to %d", c.PrefillConcurrency, MaxConcurrency)
	}
	if c.Pacer != nil && (c.Rate > 0 || c.Schedule || c.Ramp > 0 || c.Arrival != "") {
		p.add("pacer %v and rate, arrival, ramp or schedule conflict: give the load one way", c.Pacer)
	}
	if c.Concurrency > MaxConcurrency {
		p.add("concurrency %d: more than %d workers (one goroutine and connection each)", c.Concurrency, MaxConcurrency)
	}
}

// checkLengths checks the input and output length distributions.
func (c *Config) checkLengths(p *problems) {
	for _, l := range []struct {
		name string
		spec distribution.Spec
	}{{"isl", c.ISL}, {"osl", c.OSL}} {
		if err := checkLength(l.spec); err != nil {
			p.add("%s %v: %v", l.name, l.spec.Distribution, err)
		}
	}
}

// checkClient checks the client's behaviour: cancellations and source addresses.
func (c *Config) checkClient(p *problems) {
	if !(c.CancelFraction >= 0 && c.CancelFraction <= 1) {
		p.add("cancel_fraction %v: want 0..1", c.CancelFraction)
	}
	if c.CancelFraction > 0 && c.CancelAfter <= 0 {
		p.add("cancel_fraction needs cancel_after > 0")
	}
	for _, a := range c.SourceAddrs {
		if net.ParseIP(a) == nil {
			p.add("source_addrs: %q is not an IP", a)
		}
	}
	if c.TLSCA != "" {
		if _, err := c.tlsConfig(); err != nil {
			p.add("%v", err)
		}
	}
}

// checkTokens checks the token-level knobs: vLLM's vocabulary size and the block size.
func (c *Config) checkTokens(p *problems) {
	if c.VLLMVocabSize < 0 {
		p.add("vllm_vocab_size %d < 0", c.VLLMVocabSize)
	}
	if c.BlockTokens < 0 {
		p.add("block_tokens %d < 0", c.BlockTokens)
	}
}

// checkSLO checks the per-request objectives.
func (c *Config) checkSLO(p *problems) {
	if err := c.SLO.Err(); err != nil {
		for _, e := range strings.Split(err.Error(), "\n") {
			p.add("%s", e)
		}
	}
}

// checkLength rejects a length distribution no server accepts: a mean (or, for a
// fixed length, the value) above MaxTokens, or a mean that is not finite.
func checkLength(s distribution.Spec) error {
	if s.Distribution == nil {
		return nil
	}
	m, ok := s.Distribution.(interface{ Mean() float64 })
	if !ok {
		return nil
	}
	if err := (distribution.Length{Dist: s.Distribution}).Err(); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "distribution: "))
	}
	switch mean := m.Mean(); {
	case math.IsNaN(mean) || math.IsInf(mean, 0):
		return fmt.Errorf("the mean is %v; want a finite token length", mean)
	case mean > MaxTokens:
		return fmt.Errorf("a mean of %.4g tokens; no server takes more than %d in one request", mean, MaxTokens)
	}
	return nil
}

// vllmLen extracts vLLM's (length, range ratio) from a Spec: fixed:N or vllm-range:N,R.
// A zero Spec gives (0, 0).
func vllmLen(s distribution.Spec) (int, float64, error) {
	switch d := s.Distribution.(type) {
	case nil:
		return 0, 0, nil
	case distribution.Fixed:
		if d.Value < 0 || d.Value != math.Trunc(d.Value) {
			return 0, 0, fmt.Errorf("%v: want a non-negative integer", d)
		}
		return int(d.Value), 0, nil
	case distribution.VLLMRange:
		return d.Len, d.Ratio, nil
	}
	return 0, 0, fmt.Errorf("%v: want fixed:N or vllm-range:N,R", s.Distribution)
}

// endpointURL completes a base URL with the endpoint's path.
func endpointURL(raw string, e Endpoint) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	p := strings.TrimSuffix(u.Path, "/")
	switch {
	case p == "":
		u.Path = e.Path()
	case strings.HasSuffix(p, "/v1"):
		u.Path = strings.TrimSuffix(p, "/v1") + e.Path()
	default:
		return raw
	}
	return u.String()
}

// checkUserCentric checks user-centric timing: a finite rate > 0 shared by
// concurrency users, and no other way of pacing the load.
func (c *Config) checkUserCentric(p *problems) {
	u := c.UserCentricRate
	if u == 0 {
		return
	}
	if !(u > 0) || math.IsInf(u, 0) {
		p.add("user_centric_rate %v: want a finite rate > 0 (requests per second over all users)", u)
		return
	}
	if c.Concurrency < 1 {
		p.add("user_centric_rate needs concurrency >= 1: the number of users who share the rate (--num-users)")
	}
	if c.Rate > 0 || len(c.RateSeries) > 0 || c.Schedule || c.Ramp > 0 || c.Pacer != nil {
		p.add("user_centric_rate and rate, request_rate_series, schedule, ramp or pacer conflict: give the load one way")
	}
	if c.Arrival != "" && c.Arrival != ArrivalConstant && c.Arrival != ArrivalPoisson {
		p.add("arrival %q with user_centric_rate: want %s or %s", c.Arrival, ArrivalConstant, ArrivalPoisson)
	}
	if c.TurnDelay.Distribution != nil {
		p.add("turn_delay and user_centric_rate conflict: a user's gap between turns is its think time")
	}
	if c.shards() > 1 {
		p.add("user_centric_rate runs in one process: shards %d", c.Shards)
	}
}
