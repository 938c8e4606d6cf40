package mockserver

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/kvcache"
	"github.com/perfgate/perfgate/record"
)

// Defaults shared by [Config], the `perfgate mock` flags and the docs.
const (
	DefaultHost           = "127.0.0.1"
	DefaultTokenizer      = "gpt2"
	DefaultModel          = "mock-model"
	DefaultMaxTokens      = 128      // output cap when a request sends none
	DefaultMaxTokensCap   = 1 << 20  // requests asking for more are rejected
	DefaultBodyLimit      = 64 << 20 // bytes
	DefaultGracePeriod    = 10 * time.Second
	DefaultRecordQueue    = 4096 // records buffered between handlers and the writer
	DefaultTTFTMs         = 20.0 // aiperf-mock-server's default
	DefaultITLMs          = 5.0  // aiperf-mock-server's default
	DefaultEmbeddingDim   = 768
	DefaultRetryAfterSecs = 1
	DefaultTokensPerChunk = 1
	DefaultBatchStep      = 10 * time.Millisecond
	DefaultBatchMaxBatch  = 256
	DefaultBatchTokens    = 8192
	DefaultBatchPrefill   = 4096
	// DefaultReadTimeout bounds reading one request, headers and body, from its first
	// byte (and a new connection's wait for that byte): a slowloris client is cut then.
	DefaultReadTimeout = 60 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may wait for its next
	// request. Longer than the 5 s of uvicorn (vLLM's server) so a client's pool is
	// not reset between a benchmark's phases.
	DefaultIdleTimeout = 120 * time.Second
	// DefaultMaxModelLen is vLLM's --max-model-len for the mock: a request whose input
	// plus requested output exceeds it is refused, and tokenizing stops past it.
	DefaultMaxModelLen = 131072
	// DefaultMaxEmbeddingInputs caps the inputs of one embeddings request.
	DefaultMaxEmbeddingInputs = 2048 // OpenAI's limit
	// DefaultMaxRankingDocs caps the documents of one ranking request.
	DefaultMaxRankingDocs = 1000
	// DefaultTranscriptTokensPerSecond is a transcript's length per second of audio
	// when Config.OSL is unset: speech at about 150 words a minute.
	DefaultTranscriptTokensPerSecond = 3.0
	// DefaultImageLatencyMs is the time to generate one image when
	// Config.ImageLatency is unset.
	DefaultImageLatencyMs = 100.0
)

// Config is the whole configuration of a mock server: a plain struct, JSON/YAML-able,
// whose zero value is a working server (gpt2 tokenizer, 127.0.0.1 on a free port,
// TTFT 20 ms, ITL 5 ms, no faults, no recording file). Latencies are in milliseconds, as
// aiperf-mock-server's flags are.
type Config struct {
	// Host to bind; "" = 127.0.0.1. Port 0 = a free port.
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
	// TLSCert and TLSKey, both set, are PEM files of a certificate (chain) and its
	// private key: the server then speaks TLS (https://), as a serving stack behind a
	// TLS terminator does. Both empty: plain HTTP.
	TLSCert string `json:"tls_cert,omitempty"`
	TLSKey  string `json:"tls_key,omitempty"`

	// Tokenizer is what tokenizer.Load accepts: a built-in name ("gpt2",
	// "cl100k_base", …), a tokenizer.json file, a directory, or a hub id. "" = gpt2.
	Tokenizer string `json:"tokenizer,omitempty"`
	// Models are the served model ids (listed by /v1/models). The first is the
	// default; "" entries are ignored. Empty = [DefaultModel].
	Models []string `json:"models,omitempty"`
	// StrictModel rejects requests for a model not in Models with vLLM's 404 ("The
	// model `X` does not exist."), as `perfgate mock` does by default. Off in the zero
	// Config (the library's and the in-process mock's): any model name is served, as
	// aiperf-mock-server does, and not listed.
	StrictModel bool `json:"strict_model,omitempty"`
	// AnyModel serves any model name and lists each one asked for (by a request, or
	// GET /v1/models/NAME, which a preflight asks) in /v1/models from then on: a mock
	// that agrees with a client's preflight whatever model it names. It overrides
	// StrictModel.
	AnyModel bool `json:"any_model,omitempty"`
	// APIKey, when set, is required as "Authorization: Bearer KEY" (401 otherwise), or
	// as the bare key in AuthHeader when that names another header.
	APIKey string `json:"api_key,omitempty"`
	// TokenizerRevision is the Hub revision of Tokenizer when that is an "org/name" id
	// (AIPerf's --tokenizer-revision); "" = main.
	TokenizerRevision string `json:"tokenizer_revision,omitempty"`
	// AuthHeader is the header APIKey is checked in; "" = Authorization (AIPerf's
	// --auth-header-name).
	AuthHeader string `json:"auth_header,omitempty"`
	// SessionHeader names a request header the recording keeps (record.Server.Session,
	// with the client's address of the connection, Peer): a client's per-session value (loadgen's
	// Target.SessionHeader), so a test can prove every turn of a session carried one
	// value. A value that is not 1 to 128 printable ASCII characters is not kept. ""
	// = none.
	SessionHeader string `json:"session_header,omitempty"`
	// DisableModels answers GET /v1/models with 404, for clients' fallback readiness
	// probes (AIPerf's --disable-models-endpoint).
	DisableModels bool `json:"disable_models,omitempty"`

	// RecordFile, when set, receives one JSON line per answered request and, on
	// Close, FILE.summary.json.
	RecordFile string `json:"record_file,omitempty"`
	// DiscardRecords stops keeping records in memory ([Server.Records] returns nil);
	// the summary is still computed. For long runs.
	DiscardRecords bool `json:"discard_records,omitempty"`
	// RecordQueue is the capacity of the queue between handlers and the record writer
	// (0 = DefaultRecordQueue). When it is full, handlers wait: nothing is dropped.
	RecordQueue int `json:"record_queue,omitempty"`

	// Seed makes generation, latency samples and faults reproducible. 0 = seed 0 (still
	// deterministic).
	Seed uint64 `json:"seed,omitempty"`

	// Latency model. Fast zeroes every latency (ignores the fields below).
	Fast bool `json:"fast,omitempty"`
	// TTFT and ITL are distributions in milliseconds; unset = Fixed 20 and Fixed 5.
	TTFT distribution.Spec `json:"ttft_ms,omitzero"`
	ITL  distribution.Spec `json:"itl_ms,omitzero"`
	// TTFTPerISLToken adds prefill time per input token ("20us" in files; files
	// written with the older ttft_per_isl_token_ms, a number of ms, still read).
	TTFTPerISLToken time.Duration `json:"ttft_per_isl_token,omitzero"`
	// ITLConcurrencyLin adds this much ITL per other stream in flight (older files:
	// itl_concurrency_lin_ms).
	ITLConcurrencyLin time.Duration `json:"itl_concurrency_lin,omitzero"`
	// TTFTConcurrencyLin adds this much TTFT per other request in flight (older
	// files: ttft_concurrency_lin_ms).
	TTFTConcurrencyLin time.Duration `json:"ttft_concurrency_lin,omitzero"`
	// TTFTJitterCV and ITLJitterCV multiply each sample by a log-normal factor with
	// mean 1 and this coefficient of variation (0 = none).
	TTFTJitterCV float64 `json:"ttft_jitter_cv,omitempty"`
	ITLJitterCV  float64 `json:"itl_jitter_cv,omitempty"`
	// LatencyScale multiplies every latency the mock sleeps for (TTFT, ITL and their
	// per-token and concurrency terms, or the batch scheduler's step times) by one factor
	// for the whole run: 1.1 is a server 10% slower. It stands for a run-to-run change of
	// server speed: a build that regressed, or the between-run noise of a real server
	// (bench/gate draws it per run). 0 = 1.
	LatencyScale float64 `json:"latency_scale,omitempty"`
	// Batch, when Enabled, replaces TTFT/ITL sampling by a continuous-batching
	// scheduler whose throughput saturates (see [BatchConfig]).
	Batch BatchConfig `json:"batch,omitzero"`

	// Output length. OSL, when set, draws the length of requests without ignore_eos,
	// clamped to [min_tokens, max]; unset = the maximum (finish_reason "length").
	OSL distribution.Spec `json:"osl,omitzero"`
	// ReasoningTokens, when set, makes chat completions and Anthropic messages requests
	// generate reasoning before their content: a length drawn from this distribution,
	// or for a request with reasoning_effort low, medium or high AIPerf's 100, 250 or
	// 500 tokens ([ReasoningEffortTokens]). Chat streams it as delta.reasoning_content
	// (message.reasoning_content when whole), messages as a thinking block; usage counts
	// it in completion_tokens and completion_tokens_details.reasoning_tokens. Reasoning
	// counts toward max_tokens, as in vLLM, and the content's length (OSL) is drawn
	// within what is left. Unset = no reasoning.
	ReasoningTokens distribution.Spec `json:"reasoning_tokens,omitzero"`
	// ToolCallTokens, when set, draws the length in tokens of the argument words of a
	// tool call (a chat request with tools whose tool_choice is not "none" is answered
	// with one; docs/tools.md), within the output cap; unset = the length a text
	// answer would have (the OSL rules).
	ToolCallTokens distribution.Spec `json:"tool_call_tokens,omitzero"`
	// DefaultMaxTokens is the cap when a request sends none (0 = DefaultMaxTokens).
	DefaultMaxTokens int `json:"default_max_tokens,omitempty"`
	// MaxTokensCap rejects requests asking for more output (0 = DefaultMaxTokensCap).
	MaxTokensCap int `json:"max_tokens_cap,omitempty"`
	// TokensPerChunk groups output tokens per SSE chunk (0 = 1).
	TokensPerChunk int `json:"tokens_per_chunk,omitempty"`
	// EmbeddingDim is the embedding vector length (0 = 768).
	EmbeddingDim int `json:"embedding_dim,omitempty"`
	// TranscriptTokensPerSecond is the length of a transcription's text per second of
	// its audio, when OSL is unset (0 = DefaultTranscriptTokensPerSecond); with OSL
	// set, the transcript's length is OSL's draw.
	TranscriptTokensPerSecond float64 `json:"transcript_tokens_per_second,omitempty"`
	// ImageLatency is the time to generate one image, in ms (a distribution; zero =
	// DefaultImageLatencyMs, Fast = none): an image generation request of n images
	// is answered after n draws, times LatencyScale.
	ImageLatency distribution.Spec `json:"image_latency_ms,omitzero"`

	// BodyLimit is the maximum request body in bytes (0 = 64 MiB); larger → 413.
	BodyLimit int `json:"body_limit,omitempty"`
	// MaxModelLen is the context length in tokens (0 = DefaultMaxModelLen): a request
	// whose input tokens, plus its requested output, exceed it is refused with vLLM's
	// 400 naming both numbers; tokenizing stops once the input alone passes it.
	MaxModelLen int `json:"max_model_len,omitempty"`
	// MaxEmbeddingInputs and MaxRankingDocs cap the inputs of one embeddings request
	// and the documents of one ranking request (0 = the Default… values); more → 400.
	MaxEmbeddingInputs int `json:"max_embedding_inputs,omitempty"`
	MaxRankingDocs     int `json:"max_ranking_docs,omitempty"`
	// ReadTimeout bounds reading a request (0 = DefaultReadTimeout); IdleTimeout how
	// long a keep-alive connection waits for its next one (0 = DefaultIdleTimeout).
	ReadTimeout time.Duration `json:"read_timeout,omitempty"`
	IdleTimeout time.Duration `json:"idle_timeout,omitempty"`
	// MaxConnections caps open connections (0 = no cap but the file-descriptor limit,
	// at which the server backs off and keeps accepting); connections over it are
	// answered 503 with Retry-After and recorded as rejected "too_many_connections".
	MaxConnections int `json:"max_connections,omitempty"`
	// GracePeriod is how long Close waits for in-flight responses (0 = 10 s).
	GracePeriod time.Duration `json:"grace_period,omitempty"`

	// Faults to inject; see [Faults].
	Faults Faults `json:"faults,omitzero"`

	// PrefixCache is the prefix (KV) cache the generative endpoints look prompts up
	// in; see [PrefixCache].
	PrefixCache PrefixCache `json:"prefix_cache,omitzero"`

	// ServerTimings makes chat and completions answers carry the per-request data of
	// one server, with the times this server measured for each request: "vllm"
	// (a "metrics" object, as vLLM's --enable-per-request-metrics), "llamacpp" (a
	// "timings" object, as llama.cpp's server) or "sglang" (a "meta_info" object); ""
	// or "none" = none (docs/mock.md). Streams carry it on the final usage chunk, as
	// vLLM does, so only a stream that asked for usage has it. vLLM's "metrics" also
	// rides Responses answers, as vLLM's does (at the top level of a whole answer, in
	// the response.completed event's response of a stream); Anthropic Messages answers
	// carry none, as vLLM's carry none.
	ServerTimings string `json:"server_timings,omitempty"`
}

// ServerTimingsNone is [Config.ServerTimings]'s spelling of no server data.
const ServerTimingsNone = "none"

// serverTimings is the source the answers' server data takes, "" for none.
func (c *Config) serverTimings() string {
	if c.ServerTimings == ServerTimingsNone {
		return ""
	}
	return c.ServerTimings
}

// PrefixCache configures the mock's prefix cache (internal/kvcache's model: whole
// blocks of prompt token ids under chained hashes, LRU eviction). Chat, completions,
// responses and messages requests look their prompt up in it, report the cached
// tokens in usage.prompt_tokens_details.cached_tokens (chat and completions) and in
// vllm:prefix_cache_hits_total, and pay PrefillPerToken for each uncached one. The
// zero value is an unbounded cache of 16-token blocks, with no prefill cost and no
// fault.
type PrefixCache struct {
	// BlockSize is the tokens per block, 1 to 1,024 (0 = kvcache.DefaultBlockSize, 16,
	// vLLM's default).
	BlockSize int `json:"block_size,omitempty"`
	// Blocks is the capacity in blocks (0 = unbounded); the least recently used block
	// is evicted when it is full.
	Blocks int `json:"blocks,omitempty"`
	// PrefillPerToken is added to TTFT per prompt token the cache did not serve, so
	// that a hit shows in latency ("50us" in files). It adds to TTFTPerISLToken, which
	// counts every prompt token.
	PrefillPerToken time.Duration `json:"prefill_per_token,omitzero"`
	// Fault is the fraction of requests, in [0, 1], whose cache hit is lost: they
	// report 0 cached tokens and pay the whole prefill, as a server whose prefix
	// caching broke would; their blocks are still cached. Drawn from the request's
	// seeded generator, so a seed reproduces it.
	Fault float64 `json:"fault,omitempty"`
}

// blockSize is the cache's block size, the default applied.
func (p PrefixCache) blockSize() int {
	if p.BlockSize == 0 {
		return kvcache.DefaultBlockSize
	}
	return p.BlockSize
}

// BatchConfig models a continuous-batching engine: every step takes
// Step + DecodeToken·(decoding sequences) + PrefillToken·(prefill tokens) and
// advances each running sequence by one token; a request waits until it fits in
// MaxBatch and its prompt is prefilled in pieces of at most PrefillBudget tokens per
// step, with at most TokenBudget tokens (prefill + decode) in a step. Throughput thus
// saturates and latency has a knee when the offered load exceeds
// MaxBatch / (OSL · step time).
type BatchConfig struct {
	Enabled bool `json:"enabled,omitempty"`
	// The step's durations ("10ms" in files; older files' step_ms, decode_token_ms
	// and prefill_token_ms, numbers of ms, still read).
	Step          time.Duration `json:"step,omitzero"`            // 0 = 10ms
	DecodeToken   time.Duration `json:"decode_token,omitzero"`    // per decoding sequence per step
	PrefillToken  time.Duration `json:"prefill_token,omitzero"`   // per prefilled token
	MaxBatch      int           `json:"max_batch,omitempty"`      // 0 = 256
	TokenBudget   int           `json:"token_budget,omitempty"`   // 0 = 8192
	PrefillBudget int           `json:"prefill_budget,omitempty"` // 0 = 4096
}

// Faults configures injected failures. Rates are probabilities in [0, 1] per request,
// drawn from the request's seeded generator, so a seed reproduces them. Each injected
// fault is counted in /metrics and in the summary.
type Faults struct {
	// ErrorRate answers with an error status instead of serving.
	ErrorRate float64 `json:"error_rate,omitempty"`
	// ErrorStatuses are chosen uniformly for injected errors (default [500]); allowed:
	// 429, 500, 503. 429 and 503 carry Retry-After.
	ErrorStatuses []int `json:"error_statuses,omitempty"`
	// RetryAfterSeconds is the Retry-After value (0 = 1).
	RetryAfterSeconds int `json:"retry_after_seconds,omitempty"`
	// DisconnectRate cuts a stream after a uniformly chosen number of tokens.
	DisconnectRate float64 `json:"disconnect_rate,omitempty"`
	// SlowFirstByteRate delays the response headers by SlowFirstByte.
	SlowFirstByteRate float64       `json:"slow_first_byte_rate,omitempty"`
	SlowFirstByte     time.Duration `json:"slow_first_byte,omitempty"`
	// MalformedChunkRate replaces one chunk of a stream with invalid JSON.
	MalformedChunkRate float64 `json:"malformed_chunk_rate,omitempty"`
	// ModelsReadyDelay and InferenceReadyDelay make /v1/models and the inference
	// endpoints answer 503 until that long after Start; /health answers 503 until both.
	ModelsReadyDelay    time.Duration `json:"models_ready_delay,omitempty"`
	InferenceReadyDelay time.Duration `json:"inference_ready_delay,omitempty"`
}

func (c *Config) host() string {
	if c.Host == "" {
		return DefaultHost
	}
	return c.Host
}

func (c *Config) tokenizerName() string {
	if c.Tokenizer == "" {
		return DefaultTokenizer
	}
	return c.Tokenizer
}

// tokenizerRef is what the server loads: tokenizerName, with "@TokenizerRevision" for a
// Hub id ("org/name") that names no revision of its own.
func (c *Config) tokenizerRef() string {
	name := c.tokenizerName()
	if rev := c.TokenizerRevision; rev != "" && rev != "main" && strings.Count(name, "/") == 1 && !strings.Contains(name, "@") {
		if _, err := os.Stat(name); err != nil { // a local path is not a Hub id
			return name + "@" + rev
		}
	}
	return name
}

func (c *Config) models() []string {
	var out []string
	for _, m := range c.Models {
		if m != "" {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		out = []string{DefaultModel}
	}
	return out
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// Validate reports every invalid field (errors.Join).
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("mockserver: "+format, a...)) }
	if c.Port < 0 || c.Port > 65535 {
		bad("port %d out of [0, 65535]", c.Port)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		bad("tls_cert and tls_key go together: set both (the certificate and its key) or neither")
	}
	for name, sp := range map[string]distribution.Spec{"osl": c.OSL, "reasoning_tokens": c.ReasoningTokens, "tool_call_tokens": c.ToolCallTokens} {
		if sp.Distribution == nil {
			continue
		}
		if err := (distribution.Length{Dist: sp.Distribution}).Err(); err != nil {
			bad("%s %v: %s", name, sp.Distribution, strings.TrimPrefix(err.Error(), "distribution: "))
		}
	}
	for name, v := range map[string]time.Duration{"ttft_per_isl_token": c.TTFTPerISLToken, "itl_concurrency_lin": c.ITLConcurrencyLin,
		"ttft_concurrency_lin": c.TTFTConcurrencyLin} {
		if v < 0 {
			bad("%s %v is negative", name, v)
		}
	}
	for name, v := range map[string]float64{"ttft_jitter_cv": c.TTFTJitterCV, "itl_jitter_cv": c.ITLJitterCV, "latency_scale": c.LatencyScale} {
		if v < 0 {
			bad("%s %v is negative", name, v)
		}
	}
	f := c.Faults
	for name, v := range map[string]float64{"error_rate": f.ErrorRate, "disconnect_rate": f.DisconnectRate,
		"slow_first_byte_rate": f.SlowFirstByteRate, "malformed_chunk_rate": f.MalformedChunkRate} {
		if !(v >= 0 && v <= 1) {
			bad("faults.%s %v out of [0, 1]", name, v)
		}
	}
	for _, s := range f.ErrorStatuses {
		if s != 429 && s != 500 && s != 503 {
			bad("faults.error_statuses: %d is not one of 429, 500, 503", s)
		}
	}
	if c.DefaultMaxTokens < 0 || c.MaxTokensCap < 0 || c.TokensPerChunk < 0 || c.BodyLimit < 0 || c.RecordQueue < 0 || c.EmbeddingDim < 0 ||
		c.MaxModelLen < 0 || c.MaxEmbeddingInputs < 0 || c.MaxRankingDocs < 0 || c.MaxConnections < 0 || c.ReadTimeout < 0 || c.IdleTimeout < 0 ||
		c.TranscriptTokensPerSecond < 0 {
		bad("negative size or count in config")
	}
	if c.MaxTokensCap > 0 && c.DefaultMaxTokens > c.MaxTokensCap {
		bad("default_max_tokens %d above max_tokens_cap %d", c.DefaultMaxTokens, c.MaxTokensCap)
	}
	pc := c.PrefixCache
	if pc.BlockSize != 0 {
		if err := kvcache.CheckBlockSize(pc.BlockSize); err != nil {
			bad("prefix_cache.block_size %d out of [1, %d]", pc.BlockSize, kvcache.MaxBlockSize)
		}
	}
	if pc.Blocks < 0 {
		bad("prefix_cache.blocks %d is negative (0 = unbounded)", pc.Blocks)
	}
	if pc.PrefillPerToken < 0 {
		bad("prefix_cache.prefill_per_token %v is negative", pc.PrefillPerToken)
	}
	if !(pc.Fault >= 0 && pc.Fault <= 1) {
		bad("prefix_cache.fault %v out of [0, 1]", pc.Fault)
	}
	if st := c.serverTimings(); st != "" && !slices.Contains(record.ServerSources, st) {
		bad("server_timings %q: want vllm, llamacpp, sglang or none", c.ServerTimings)
	}
	b := c.Batch
	if b.Step < 0 || b.DecodeToken < 0 || b.PrefillToken < 0 || b.MaxBatch < 0 || b.TokenBudget < 0 || b.PrefillBudget < 0 {
		bad("batch: negative value")
	}
	return errors.Join(errs...)
}

// RegisterFlags defines the aiperf-mock-server-compatible flags on fs, bound to c's
// fields (so values already in c are the defaults): --port, --host, --tls-cert, --tls-key, --tokenizer,
// --default-model, --record-requests, --ttft, --itl (milliseconds, or a distribution
// such as "lognormal:mean=20,stddev=5"), --ttft-per-isl-token-ms,
// --itl-concurrency-lin-ms, --ttft-jitter-cv, --itl-jitter-cv, --error-rate (percent,
// 0-100, as aiperf-mock-server), --random-seed, --api-key, --fast,
// --models-ready-delay-seconds, --inference-ready-delay-seconds; and perfgate's own:
// --models, --model-names, --strict-model, --osl, --default-max-tokens, --max-tokens-cap,
// --tokens-per-chunk, --tool-call-tokens, --error-statuses, --retry-after, --disconnect-rate,
// --slow-first-byte-rate, --slow-first-byte, --malformed-chunk-rate, --body-limit,
// --grace-period, --max-model-len, --max-embedding-inputs, --max-ranking-docs,
// --transcript-tokens-per-second, --image-latency,
// --read-timeout, --idle-timeout, --max-connections, --batch, --batch-step-ms, --batch-decode-token-ms,
// --batch-prefill-token-ms, --batch-max-batch, --batch-token-budget,
// --batch-prefill-budget, --block-size, --kv-cache-blocks, --prefill-ms-per-token,
// --prefill-per-token, --cache-fault, --server-timings.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.Port, "port", c.Port, "port to listen on (0 = a free port)")
	fs.IntVar(&c.Port, "p", c.Port, "short for --port")
	fs.StringVar(&c.Host, "host", c.host(), "host to bind")
	fs.StringVar(&c.TLSCert, "tls-cert", c.TLSCert, "serve TLS (https) with the PEM certificate in `FILE` (with --tls-key)")
	fs.StringVar(&c.TLSKey, "tls-key", c.TLSKey, "the PEM private key of --tls-cert, in `FILE`")
	fs.StringVar(&c.Tokenizer, "tokenizer", c.tokenizerName(), "tokenizer: built-in name, tokenizer.json, directory or hub id")
	registerModelFlags(fs, &c.Models, func() string { return c.models()[0] }, "model id served by default (default "+c.models()[0]+")")
	fs.BoolVar(&c.StrictModel, "strict-model", c.StrictModel, "reject unknown model names with vLLM's 404")
	fs.BoolVar(&c.AnyModel, "any-model", c.AnyModel, "serve any model name, and list each one asked for in /v1/models")
	fs.StringVar(&c.RecordFile, "record-requests", c.RecordFile, "write one JSON line per request to `FILE` and FILE.summary.json on exit")
	fs.Var(msDist{&c.TTFT, DefaultTTFTMs}, "ttft", "time to first token in ms, or a distribution (e.g. lognormal:mean=20,stddev=5)")
	fs.Var(msDist{&c.TTFT, DefaultTTFTMs}, "t", "short for --ttft")
	fs.Var(msDist{&c.ITL, DefaultITLMs}, "itl", "inter-token latency in ms, or a distribution")
	durFlag(fs, &c.TTFTPerISLToken, "ttft-per-isl-token", "prefill cost added to TTFT per input token")
	durFlag(fs, &c.ITLConcurrencyLin, "itl-concurrency-lin", "ITL added per other concurrent stream")
	durFlag(fs, &c.TTFTConcurrencyLin, "ttft-concurrency-lin", "TTFT added per other request in flight")
	fs.Float64Var(&c.TTFTJitterCV, "ttft-jitter-cv", c.TTFTJitterCV, "coefficient of variation of TTFT jitter")
	fs.Float64Var(&c.ITLJitterCV, "itl-jitter-cv", c.ITLJitterCV, "coefficient of variation of ITL jitter")
	fs.Float64Var(&c.LatencyScale, "latency-scale", c.LatencyScale, "multiply every latency by this factor (1.1 = 10% slower; 0 = 1)")
	fs.Func("error-rate", "percentage (0-100) of requests answered with an injected error", func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || v > 100 {
			return fmt.Errorf("want a percentage in [0, 100], got %q", s)
		}
		c.Faults.ErrorRate = v / 100
		return nil
	})
	fs.Func("random-seed", "random seed (generation, latency, faults)", func(s string) error {
		v, err := strconv.ParseUint(s, 0, 64)
		c.Seed = v
		return err
	})
	fs.StringVar(&c.APIKey, "api-key", c.APIKey, "require this bearer token")
	fs.StringVar(&c.SessionHeader, "session-header", c.SessionHeader, "record this request header's value (a client's per-session id) and the client's address (ip:port) in each request's record")
	fs.StringVar(&c.AuthHeader, "auth-header-name", c.AuthHeader, "header --api-key is checked in (default Authorization, as a bearer token; another header carries the bare key)")
	fs.BoolVar(&c.DisableModels, "disable-models-endpoint", c.DisableModels, "answer GET /v1/models with 404")
	fs.StringVar(&c.TokenizerRevision, "tokenizer-revision", c.TokenizerRevision, "revision (branch, tag or commit) of a Hugging Face Hub --tokenizer")
	fs.BoolVar(&c.Fast, "fast", c.Fast, "zero latency")
	fs.BoolVar(&c.Fast, "f", c.Fast, "short for --fast")
	fs.Func("models-ready-delay-seconds", "answer 503 on /v1/models for this long after start", secondsFlag(&c.Faults.ModelsReadyDelay))
	fs.Func("inference-ready-delay-seconds", "answer 503 on inference endpoints for this long after start", secondsFlag(&c.Faults.InferenceReadyDelay))
	fs.Var(specFlag{&c.OSL}, "osl", "output length distribution for requests without ignore_eos (default: the max)")
	fs.Var(specFlag{&c.ReasoningTokens}, "reasoning-tokens", "stream this many reasoning tokens (a length `SPEC`) before chat and messages content; reasoning_effort low/medium/high → 100/250/500")
	fs.Var(specFlag{&c.ToolCallTokens}, "tool-call-tokens", "length `SPEC` of a tool call's argument words, for chat requests with tools (default: as a text answer's)")
	fs.IntVar(&c.DefaultMaxTokens, "default-max-tokens", orInt(c.DefaultMaxTokens, DefaultMaxTokens), "output cap when a request sends none")
	fs.IntVar(&c.MaxTokensCap, "max-tokens-cap", orInt(c.MaxTokensCap, DefaultMaxTokensCap), "reject requests asking for more output tokens")
	fs.IntVar(&c.TokensPerChunk, "tokens-per-chunk", orInt(c.TokensPerChunk, DefaultTokensPerChunk), "output tokens per SSE chunk")
	fs.Func("error-statuses", "comma-separated statuses for injected errors (429,500,503)", func(s string) error {
		c.Faults.ErrorStatuses = nil
		for _, p := range strings.Split(s, ",") {
			v, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return err
			}
			c.Faults.ErrorStatuses = append(c.Faults.ErrorStatuses, v)
		}
		return nil
	})
	fs.IntVar(&c.Faults.RetryAfterSeconds, "retry-after", orInt(c.Faults.RetryAfterSeconds, DefaultRetryAfterSecs), "Retry-After seconds on 429/503")
	fs.Float64Var(&c.Faults.DisconnectRate, "disconnect-rate", c.Faults.DisconnectRate, "probability of cutting a stream mid-way")
	fs.Float64Var(&c.Faults.SlowFirstByteRate, "slow-first-byte-rate", c.Faults.SlowFirstByteRate, "probability of delaying the first byte")
	fs.DurationVar(&c.Faults.SlowFirstByte, "slow-first-byte", c.Faults.SlowFirstByte, "first-byte delay of a slow response")
	fs.Float64Var(&c.Faults.MalformedChunkRate, "malformed-chunk-rate", c.Faults.MalformedChunkRate, "probability of one malformed SSE chunk in a stream")
	fs.IntVar(&c.BodyLimit, "body-limit", orInt(c.BodyLimit, DefaultBodyLimit), "maximum request body in bytes")
	fs.IntVar(&c.MaxModelLen, "max-model-len", orInt(c.MaxModelLen, DefaultMaxModelLen), "context length in tokens: longer input + requested output is refused (400)")
	fs.IntVar(&c.MaxEmbeddingInputs, "max-embedding-inputs", orInt(c.MaxEmbeddingInputs, DefaultMaxEmbeddingInputs), "maximum inputs in one embeddings request")
	fs.IntVar(&c.MaxRankingDocs, "max-ranking-docs", orInt(c.MaxRankingDocs, DefaultMaxRankingDocs), "maximum documents in one ranking request")
	fs.Float64Var(&c.TranscriptTokensPerSecond, "transcript-tokens-per-second", orFloat(c.TranscriptTokensPerSecond, DefaultTranscriptTokensPerSecond), "transcription output tokens per second of audio (when --osl is unset)")
	fs.Var(msDist{&c.ImageLatency, DefaultImageLatencyMs}, "image-latency", "time to generate one image in ms, or a distribution (image generation waits n of them)")
	fs.DurationVar(&c.ReadTimeout, "read-timeout", orDur(c.ReadTimeout, DefaultReadTimeout), "time allowed to read one request (headers and body)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", orDur(c.IdleTimeout, DefaultIdleTimeout), "how long a keep-alive connection may wait for its next request")
	fs.IntVar(&c.MaxConnections, "max-connections", c.MaxConnections, "open connections allowed; more are answered 503 + Retry-After (0 = no cap)")
	fs.DurationVar(&c.GracePeriod, "grace-period", orDur(c.GracePeriod, DefaultGracePeriod), "how long shutdown waits for in-flight responses")
	fs.BoolVar(&c.Batch.Enabled, "batch", c.Batch.Enabled, "continuous-batching latency model (throughput saturates)")
	c.Batch.Step = orDur(c.Batch.Step, DefaultBatchStep)
	durFlag(fs, &c.Batch.Step, "batch-step", "base scheduler step time")
	durFlag(fs, &c.Batch.DecodeToken, "batch-decode-token", "step time per decoding sequence")
	durFlag(fs, &c.Batch.PrefillToken, "batch-prefill-token", "step time per prefilled token")
	fs.IntVar(&c.Batch.MaxBatch, "batch-max-batch", orInt(c.Batch.MaxBatch, DefaultBatchMaxBatch), "maximum running sequences")
	fs.IntVar(&c.Batch.TokenBudget, "batch-token-budget", orInt(c.Batch.TokenBudget, DefaultBatchTokens), "tokens per step (prefill + decode)")
	fs.IntVar(&c.Batch.PrefillBudget, "batch-prefill-budget", orInt(c.Batch.PrefillBudget, DefaultBatchPrefill), "prefill tokens per step")
	c.registerPrefixCacheFlags(fs)
}

// registerPrefixCacheFlags defines the prefix cache's flags; a value out of range is
// a flag error naming the flag.
func (c *Config) registerPrefixCacheFlags(fs *flag.FlagSet) {
	pc := &c.PrefixCache
	intIn := func(p *int, lo, hi int, what string) func(string) error {
		return func(s string) error {
			v, err := strconv.Atoi(s)
			if err != nil || v < lo || v > hi {
				return fmt.Errorf("want %s, got %q", what, s)
			}
			*p = v
			return nil
		}
	}
	fs.Func("block-size", fmt.Sprintf("prefix-cache block size in tokens, 1 to %d (default %d)", kvcache.MaxBlockSize, kvcache.DefaultBlockSize),
		intIn(&pc.BlockSize, 1, kvcache.MaxBlockSize, fmt.Sprintf("a block size of 1 to %d tokens", kvcache.MaxBlockSize)))
	fs.Func("kv-cache-blocks", "prefix-cache capacity in blocks, LRU-evicted (default 0 = unbounded)",
		intIn(&pc.Blocks, 0, math.MaxInt32-1, "0 (unbounded) or a number of blocks"))
	fs.DurationVar(&pc.PrefillPerToken, "prefill-per-token", pc.PrefillPerToken, "TTFT added per prompt token the prefix cache did not serve")
	fs.Func("prefill-ms-per-token", "--prefill-per-token as a number of milliseconds", func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("want a number of milliseconds >= 0, got %q", s)
		}
		pc.PrefillPerToken = time.Duration(v * float64(time.Millisecond))
		return nil
	})
	fs.Func("cache-fault", "fraction in [0, 1] of requests whose prefix-cache hit is lost (seeded)", func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0 && v <= 1) {
			return fmt.Errorf("want a fraction in [0, 1], got %q", s)
		}
		pc.Fault = v
		return nil
	})
	fs.Func("server-timings", "answers carry one server's per-request timings, measured by the mock: vllm (metrics), llamacpp (timings), sglang (meta_info) or none (default none)", func(s string) error {
		if s != ServerTimingsNone && !slices.Contains(record.ServerSources, s) {
			return fmt.Errorf("want vllm, llamacpp, sglang or none, got %q", s)
		}
		c.ServerTimings = s
		return nil
	})
}

// durFlag defines --name as a duration ("20us") and --name-ms as a number of
// milliseconds (aiperf-mock-server's spelling for the latency terms it has, the older
// one for the batch model's); both set *d.
func durFlag(fs *flag.FlagSet, d *time.Duration, name, usage string) {
	fs.DurationVar(d, name, *d, usage)
	fs.Func(name+"-ms", "--"+name+" as a number of milliseconds", func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("want a number of milliseconds, got %q", s)
		}
		*d = time.Duration(v * float64(time.Millisecond))
		return nil
	})
}

func orDur(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

func secondsFlag(d *time.Duration) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("want non-negative seconds, got %q", s)
		}
		*d = time.Duration(v * float64(time.Second))
		return nil
	}
}

// msDist is a flag value: a number of milliseconds (Fixed) or a distribution text.
type msDist struct {
	s   *distribution.Spec
	def float64
}

func (f msDist) String() string {
	if f.s == nil {
		return ""
	}
	if f.s.IsZero() {
		return strconv.FormatFloat(f.def, 'g', -1, 64)
	}
	return f.s.String()
}

func (f msDist) Set(v string) error {
	if x, err := strconv.ParseFloat(v, 64); err == nil {
		if x < 0 {
			return fmt.Errorf("negative latency %q", v)
		}
		f.s.Distribution = distribution.Fixed{Value: x}
		return nil
	}
	return f.s.UnmarshalText([]byte(v))
}

type specFlag struct{ s *distribution.Spec }

func (f specFlag) String() string {
	if f.s == nil {
		return ""
	}
	return f.s.String()
}

func (f specFlag) Set(v string) error { return f.s.UnmarshalText([]byte(v)) }

func orFloat(v, def float64) float64 {
	if v <= 0 {
		return def
	}
	return v
}

// registerModelFlags defines --default-model and --models on fs for the mock and the
// capture server: *models lists the served model ids, the first served by default and
// listed first by /v1/models; first returns the current default.
func registerModelFlags(fs *flag.FlagSet, models *[]string, first func() string, defaultUsage string) {
	fs.Func("default-model", defaultUsage, func(s string) error {
		rest := *models
		if len(rest) > 0 {
			rest = rest[1:]
		}
		*models = append([]string{s}, rest...)
		return nil
	})
	fs.Func("model-names", "comma-separated model ids served (a model mix, such as LoRA adapters): the first is the default; replaces --default-model and --models", func(s string) error {
		var names []string
		for _, m := range strings.Split(s, ",") {
			if m = strings.TrimSpace(m); m != "" && !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
		if len(names) == 0 {
			return errors.New("want at least one model name")
		}
		*models = names
		return nil
	})
	fs.Func("models", "comma-separated extra model ids to list", func(s string) error {
		f := first()
		*models = []string{f}
		for _, m := range strings.Split(s, ",") {
			if m = strings.TrimSpace(m); m != "" && m != f {
				*models = append(*models, m)
			}
		}
		return nil
	})
}
