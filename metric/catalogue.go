package metric

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/perfgate/perfgate/record"
)

// Kind says how a metric is measured and aggregated.
type Kind uint8

const (
	// PerRequest metrics have one value per successful request ([Def.Value]),
	// summarised as a [record.Stat] (avg, std, min, max, percentiles). The rule
	// grammar bounds their quantiles.
	PerRequest Kind = iota + 1
	// PerChunk metrics have one value per gap between chunks ([Def.Gaps]), pooled over
	// the requests in a [Sketch] and summarised as a [record.Stat].
	PerChunk
	// PerRun metrics have one value for the whole run ([Def.Total]), a [record.Scalar].
	PerRun
)

// String returns the kind as the metrics reference writes it.
func (k Kind) String() string {
	switch k {
	case PerRequest:
		return "per request"
	case PerChunk:
		return "per chunk gap"
	case PerRun:
		return "per run"
	}
	return "unknown"
}

// Better says which direction of a metric is an improvement.
type Better int8

const (
	// Neither: a count or a length, neither better higher nor lower.
	Neither Better = iota
	// Lower is better (latencies, errors).
	Lower
	// Higher is better (throughputs, goodput).
	Higher
)

// String returns "lower", "higher" or "neither".
func (b Better) String() string {
	switch b {
	case Lower:
		return "lower"
	case Higher:
		return "higher"
	}
	return "neither"
}

// Totals are the run-level sums a [PerRun] metric is derived from.
type Totals struct {
	OK, Errors int     // successful and failed measured requests
	Good       int     // successful requests meeting the SLO (when HasSLO)
	HasSLO     bool    // the run counted goodput against an SLO
	Duration   float64 // first request sent → last one done, seconds
	ISL, OSL   int     // sums over the successful requests (OSL with reasoning)
	Reasoning  int     // sum of the reasoning tokens
	Audio      float64 // sum of the audio sent, seconds
	Images     int     // sum of the images received
	// Cached and CachedPrompt sum cached_tokens and the prompt tokens ([PrefixPrompt])
	// over the successful measured requests whose answer reported cached_tokens.
	Cached, CachedPrompt int
	// IdealRate is the ideal prefix-cache hit rate the load generator counted on the
	// prompts it sent (internal/kvcache), ServerRate the server's prefix-cache counters'
	// rate over the run (servermetrics); nil when unknown.
	IdealRate, ServerRate *float64
	// GPU is the GPU telemetry over the measured window (servermetrics' DCGM scrapes,
	// --gpu-telemetry); nil when none was scraped.
	GPU *GPU
	// Jobs are the run's agent jobs; nil when it has none.
	Jobs *JobTotals
}

// GPU is a run's GPU telemetry over its measured window, first measured request sent
// → last one done: what the GPU metrics (gpu_energy, tokens_per_joule, …) derive from.
type GPU struct {
	// Count is the number of GPUs that reported power or energy.
	Count int
	// EnergyJ is the energy all of them used over the window, in joules.
	EnergyJ float64
	// PowerW is their mean power over the window, added up, in watts.
	PowerW float64
	// Util is their mean utilisation, a fraction in [0, 1]; nil = not reported.
	Util *float64
	// MemMiB is the highest framebuffer memory used by any of them, in MiB; nil = not
	// reported.
	MemMiB *float64
}

// gpu returns t.GPU when it has GPUs and energy.
func (t *Totals) gpu() (*GPU, bool) {
	return t.GPU, t.GPU != nil && t.GPU.Count > 0
}

// PrefixPrompt returns the prompt tokens r's prefix-cache hit rate is a fraction of:
// the server's usage.prompt_tokens, else the client's count with the chat template
// (ISLTemplate), else ISL.
func PrefixPrompt(r *record.Client) int {
	switch {
	case r.UsagePromptTokens >= 0:
		return r.UsagePromptTokens
	case r.ISLTemplate > 0:
		return r.ISLTemplate
	}
	return r.ISL
}

// prefixHitRate is the measured prefix-cache hit rate: Σcached/Σprompt over the
// requests that reported cached_tokens, else the server counters' rate.
func (t *Totals) prefixHitRate() (float64, bool) {
	switch {
	case t.CachedPrompt > 0:
		return float64(t.Cached) / float64(t.CachedPrompt), true
	case t.ServerRate != nil:
		return *t.ServerRate, true
	}
	return 0, false
}

// prefixIdealRate is IdealRate, when known.
func (t *Totals) prefixIdealRate() (float64, bool) {
	if t.IdealRate == nil {
		return 0, false
	}
	return *t.IdealRate, true
}

// Def is one metric: its name, how it is shown and asserted on, and how it is derived.
// The catalogue ([Catalogue]) is the one place each of these facts is written; the
// record's names (record.Metric…), the [Accumulator], the reports and exports
// (reportgen), the rule grammar (perftest/check), perftest's constants, the CLI's
// --assert help and docs/metrics.md all read it.
type Def struct {
	// Name is the metric's key in metrics.json, in the AIPerf exports and in the
	// record.Metric… constants: AIPerf's tag where AIPerf has the metric. The rule
	// grammar accepts it for a per-request metric ("time_to_first_token_p99<=1s").
	Name string
	// Ident is the Go name after "record.Metric" (MetricTTFT).
	Ident string
	// Short is the rule grammar's short name ("ttft"); "" = Name only.
	Short string
	// Const is the Go name of the per-request metric constant in perftest/check and
	// perftest (check.TTFT, perftest.TTFT); "" = none.
	Const string
	// Header is the row title in the console table, the CSV and the HTML report.
	Header string
	// Label names the metric in verdicts ("TTFT p99 = 180 ms"); "" = Header.
	Label string
	// Unit is the unit every artifact reports the metric in.
	Unit string
	// Better says which direction is an improvement.
	Better Better
	// Kind says how it is measured and aggregated.
	Kind Kind
	// Origin is whose definition it follows: "AIPerf", "vLLM", "k6" or "perfgate".
	Origin string
	// Console: shown in the console summary table by default (all are with --all).
	Console bool
	// ReasoningOnly: reported only for runs in which some request had reasoning
	// tokens (without them it repeats another metric or is 0).
	ReasoningOnly bool
	// NoRunStat: runs do not record the metric as a regression gate's run statistic
	// (perftest/gate: a [PerRequest] metric's p50, p90 and p99, a [PerRun] metric's
	// value), so a gate cannot compare it. Every metric is recorded unless it sets this:
	// a metric added to the catalogue is gateable with no other edit. The built-in
	// metrics that set it are those the gate did not record before its statistics were
	// derived from the catalogue, so that runs.json and the gate's reports stay as they were.
	NoRunStat bool
	// FromSend: the value runs from the request's send, so the prompt's length explains
	// part of it; verdicts note each worst request's prompt length.
	FromSend bool
	// RunRule: a [PerRun] metric rules may bound by name ("prefix_cache_gap<=0.02",
	// perftest/check); a run that does not report it makes such a rule invalid.
	RunRule bool
	// Help is the definition, one or two sentences.
	Help string

	// Value derives a [PerRequest] metric from one successful request in Unit, and
	// whether the request has a value. Leave it nil for a raw metric (Record).
	Value func(*Request) (float64, bool)
	// Record makes a [PerRequest] metric a raw measurement: its value in Unit read
	// from the client's record, and whether the record has one. Nothing else is needed:
	// [Request.Reset] reads it, [Store] and the [Accumulator] keep it exactly (8 bytes a
	// request, only in runs where some request has it), Value is set to return it, and
	// derived metrics read it with [Request.Raw]. [RecordDuration] and [RecordCount]
	// adapt a record field.
	Record func(*record.Client) (float64, bool)
	// Gaps derives a [PerChunk] metric's gaps from one successful request.
	Gaps func(*Request) []time.Duration
	// Total derives a [PerRun] metric in Unit, and whether the run reports it.
	Total func(*Totals) (float64, bool)
}

// RuleName returns the name rules and messages use for d: Short, else Name.
func (d Def) RuleName() string {
	if d.Short != "" {
		return d.Short
	}
	return d.Name
}

// VerdictLabel returns the name verdicts print for d: Label, else Header.
func (d Def) VerdictLabel() string {
	if d.Label != "" {
		return d.Label
	}
	return d.Header
}

// IsRunStat reports whether runs record d as run statistics, which a regression gate
// compares and the rule grammar bounds by name: a [PerRequest] metric's p50, p90 and
// p99, a [PerRun] metric's value; not a [PerChunk] one, nor one that sets NoRunStat.
func (d Def) IsRunStat() bool {
	return !d.NoRunStat && (d.Kind == PerRequest || d.Kind == PerRun)
}

// RunLabel returns the name a run-level metric's statistic and verdicts print: Label,
// else Header in lower case ("output token throughput").
func (d Def) RunLabel() string {
	if d.Label != "" {
		return d.Label
	}
	return strings.ToLower(d.Header)
}

// IsTime reports whether d is a duration (reported in ms).
func (d Def) IsTime() bool { return d.Unit == UnitMS }

// Units of the reported metrics.
const (
	UnitMS         = "ms"
	UnitTokens     = "tokens"
	UnitTokPerUser = "tokens/sec/user"
	UnitSec        = "sec"
	UnitRequests   = "requests"
	UnitReqPerSec  = "requests/sec"
	UnitTokPerSec  = "tokens/sec"
	UnitRatio      = "ratio"
	UnitImgPerSec  = "images/sec"
	UnitAudioRate  = "audio sec/sec"
	UnitImages     = "images"
	UnitJoules     = "J"
	UnitWatts      = "W"
	UnitMiB        = "MiB"
	UnitTokPerJ    = "tokens/J"
	UnitJPerReq    = "J/request"
	UnitTokPerGPU  = "tokens/sec/GPU"
	// Agent jobs (docs/agents.md).
	UnitJobsPerHour = "jobs/hour"
	UnitSessions    = "sessions"
)

// units is every unit a catalogue metric may have. [Extend] refuses a metric in any
// other (a panic), so a consumer that maps each unit (perftest/check's verdicts parse
// and print each in its own way) can check at init that it maps every one of [Units].
var units = []string{UnitMS, UnitSec, UnitTokens, UnitTokPerUser, UnitTokPerSec, UnitRequests,
	UnitReqPerSec, UnitRatio, UnitImages, UnitImgPerSec, UnitAudioRate,
	UnitJoules, UnitWatts, UnitMiB, UnitTokPerJ, UnitJPerReq, UnitTokPerGPU, UnitJobsPerHour, UnitSessions}

// Units returns every unit a catalogue metric may have ([Def.Unit]).
func Units() []string { return slices.Clone(units) }

func ms(f func(*Request) (time.Duration, bool)) func(*Request) (float64, bool) {
	return func(q *Request) (float64, bool) {
		d, ok := f(q)
		return MS(d), ok
	}
}

// RecordDuration is a [Def.Record] for a duration the record holds, reported in ms.
func RecordDuration(f func(*record.Client) (time.Duration, bool)) func(*record.Client) (float64, bool) {
	return func(r *record.Client) (float64, bool) {
		d, ok := f(r)
		return MS(d), ok
	}
}

// RecordCount is a [Def.Record] for a count the record holds.
func RecordCount(f func(*record.Client) (int, bool)) func(*record.Client) (float64, bool) {
	return func(r *record.Client) (float64, bool) {
		n, ok := f(r)
		return float64(n), ok
	}
}

func tokens(f func(*Request) int) func(*Request) (float64, bool) {
	return func(q *Request) (float64, bool) { return float64(f(q)), true }
}

// builtin is perfgate's catalogue, in report order: AIPerf's console order, then
// perfgate's and vLLM's metrics, then the run-level ones.
var builtin = slices.Concat(requestAndRunDefs, jobDefs)

// requestAndRunDefs are the built-in metrics but the agent jobs' (jobDefs, jobs.go).
var requestAndRunDefs = []Def{
	{Name: "time_to_first_token", Ident: "TTFT", Short: "ttft", Const: "TTFT", Header: "Time to First Token", Label: "TTFT",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, FromSend: true, Origin: "AIPerf", Console: true,
		Help:  "First chunk with generated text − request sent; chunks without text (a role-only first chunk) are skipped. Streams only.",
		Value: ms(func(q *Request) (time.Duration, bool) { return q.TTFT, q.HasTTFT })},
	{Name: "time_to_first_output_token", Ident: "TTFO", Short: "ttfo", Const: "TTFO", Header: "Time to First Output Token", Label: "TTFO",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, FromSend: true, Origin: "AIPerf", NoRunStat: true, Console: true, ReasoningOnly: true,
		Help:  "First chunk with non-reasoning output text − request sent; equals TTFT without reasoning. Streams only.",
		Value: ms(func(q *Request) (time.Duration, bool) { return q.TTFO, q.HasTTFO })},
	{Name: "time_to_first_tool_call_token", Ident: "TTFTC", Short: "ttftc", Header: "Time to First Tool-Call Token", Label: "TTFTC",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, FromSend: true, Origin: "perfgate", NoRunStat: true,
		Help: "First chunk carrying a tool call (its function's name or arguments) − request sent, for requests answered with a tool call. Streams only.",
		Record: RecordDuration(func(r *record.Client) (time.Duration, bool) {
			return r.FirstToolCall - r.Sent, r.Stream && r.FirstToolCall > 0
		})},
	{Name: "tool_call_token_count", Ident: "ToolCallTokens", Header: "Tool Call Token Count", Label: "tool-call tokens",
		Unit: UnitTokens, Kind: PerRequest, Origin: "perfgate", NoRunStat: true,
		Help:   "Tokens of a request's tool-call arguments (part of OSL), for requests answered with a tool call.",
		Record: RecordCount(func(r *record.Client) (int, bool) { return r.ToolCallTokens, r.ToolCalls > 0 })},
	{Name: "time_to_second_token", Ident: "TTST", Header: "Time to Second Token", Label: "TTST",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true, Console: true,
		Help:  "Second chunk with text − the first. Streams only.",
		Value: ms(func(q *Request) (time.Duration, bool) { return q.TTST, q.HasTTST })},
	{Name: "request_latency", Ident: "RequestLatency", Short: "latency", Const: "Latency", Header: "Request Latency", Label: "request latency",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, FromSend: true, Origin: "AIPerf", Console: true,
		Help:  "Last byte of the answer − request sent.",
		Value: ms(func(q *Request) (time.Duration, bool) { return q.Latency, true })},
	{Name: "inter_token_latency", Ident: "ITL", Short: "itl", Const: "ITL", Header: "Inter Token Latency", Label: "ITL",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "AIPerf", Console: true,
		Help:  "Per request, (request latency − TTFT) / (OSL − 1), for streamed requests with OSL ≥ 2.",
		Value: (*Request).ITL},
	{Name: "output_token_throughput_per_user", Ident: "OutputTokenThroughputPerUser", Short: "output_tps_per_user", Const: "OutputTPS",
		Header: "Output Token Throughput Per User", Label: "output tokens/s per user",
		Unit: UnitTokPerUser, Better: Higher, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true, Console: true,
		Help:  "Per request, 1000 / ITL: output tokens per second after the first token.",
		Value: (*Request).OutputThroughputPerUser},
	{Name: "output_sequence_length", Ident: "OSL", Short: "osl", Const: "OSL", Header: "Output Sequence Length", Label: "OSL",
		Unit: UnitTokens, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true, Console: true,
		Help:  "Output tokens of a request, reasoning included: the client tokenizer's count of the received text, or usage.completion_tokens with --use-server-token-count.",
		Value: tokens(func(q *Request) int { return q.OSL })},
	{Name: "output_token_count", Ident: "OutputTokens", Header: "Output Token Count", Label: "output tokens",
		Unit: UnitTokens, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true, Console: true, ReasoningOnly: true,
		Help:  "Output tokens of a request without the reasoning: OSL − reasoning_token_count.",
		Value: tokens((*Request).Output)},
	{Name: "reasoning_token_count", Ident: "ReasoningTokens", Header: "Reasoning Token Count", Label: "reasoning tokens",
		Unit: UnitTokens, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true, Console: true, ReasoningOnly: true,
		Help:  "Reasoning tokens of a request: the client tokenizer's count of reasoning_content, or usage's reasoning_tokens when OSL comes from usage.",
		Value: tokens(func(q *Request) int { return q.Reasoning })},
	{Name: "input_sequence_length", Ident: "ISL", Short: "isl", Const: "ISL", Header: "Input Sequence Length", Label: "ISL",
		Unit: UnitTokens, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true, Console: true,
		Help:  "Input tokens of a request: the client tokenizer's count, or usage.prompt_tokens with --use-server-token-count.",
		Value: tokens(func(q *Request) int { return q.ISL })},
	{Name: "image_tokens", Ident: "ImageTokens", Header: "Image Tokens", Label: "image tokens",
		Unit: UnitTokens, Kind: PerRequest, Origin: "perfgate", NoRunStat: true,
		Help:   "Prompt tokens of a request's images under the served model's rule (Qwen2-VL patches, Llama 3.2 Vision tiles: docs/multimodal.md); not in ISL, in usage.prompt_tokens. Requests with images only.",
		Record: RecordCount(func(r *record.Client) (int, bool) { return r.ImageTokens, r.ImageTokens > 0 })},
	{Name: "audio_tokens", Ident: "AudioTokens", Header: "Audio Tokens", Label: "audio tokens",
		Unit: UnitTokens, Kind: PerRequest, Origin: "perfgate", NoRunStat: true,
		Help:   "Prompt tokens of a request's audio clips, 25 a second of audio (docs/multimodal.md); not in ISL, in usage.prompt_tokens. Requests with audio only.",
		Record: RecordCount(func(r *record.Client) (int, bool) { return r.AudioTokens, r.AudioTokens > 0 })},
	{Name: "inter_chunk_latency", Ident: "ICL", Header: "Inter Chunk Latency", Label: "inter-chunk latency",
		Unit: UnitMS, Better: Lower, Kind: PerChunk, Origin: "AIPerf",
		Help: "Every gap between consecutive chunks with text, pooled over the requests.",
		Gaps: func(q *Request) []time.Duration { return q.ICL }},
	{Name: "prefill_throughput_per_user", Ident: "PrefillThroughputPerUser", Header: "Prefill Throughput Per User", Label: "prefill tokens/s per user",
		Unit: UnitTokPerUser, Better: Higher, Kind: PerRequest, Origin: "perfgate", NoRunStat: true,
		Help:  "Per request, ISL / TTFT in tokens per second.",
		Value: (*Request).PrefillThroughputPerUser},
	{Name: "client_queue_time", Ident: "QueueTime", Header: "Client Queue Time", Label: "client queue time",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "perfgate", NoRunStat: true,
		Help:  "Request sent − scheduled: how long an open-loop request waited for a free connection under the concurrency ceiling.",
		Value: ms(func(q *Request) (time.Duration, bool) { return q.Queue, true })},
	{Name: "usage_completion_tokens", Ident: "UsageOSL", Header: "Usage Completion Tokens", Label: "usage completion tokens",
		Unit: UnitTokens, Kind: PerRequest, Origin: "perfgate", NoRunStat: true,
		Help:  "The server's usage.completion_tokens, for requests whose answer carried usage.",
		Value: func(q *Request) (float64, bool) { return float64(q.UsageOSL), q.UsageOSL >= 0 }},
	{Name: "time_to_first_token_vllm", Ident: "TTFTVLLM", Header: "Time to First Token (vLLM)", Label: "TTFT (vLLM)",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, FromSend: true, Origin: "vLLM", NoRunStat: true,
		Help:  "First chunk with \"choices\", text or not − request sent, as `vllm bench serve` measures it. Streams only.",
		Value: ms(func(q *Request) (time.Duration, bool) { return q.TTFTVLLM, q.HasTTFTVLLM })},
	{Name: "inter_token_latency_vllm", Ident: "ITLVLLM", Header: "Inter Token Latency (vLLM)", Label: "ITL (vLLM)",
		Unit: UnitMS, Better: Lower, Kind: PerChunk, Origin: "vLLM",
		Help: "Every gap between consecutive \"choices\" chunks after the first, pooled over the requests (vLLM's ITL).",
		Gaps: func(q *Request) []time.Duration { return q.ITLVLLM }},
	{Name: "time_per_output_token_vllm", Ident: "TPOTVLLM", Header: "Time per Output Token (vLLM)", Label: "TPOT (vLLM)",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "vLLM", NoRunStat: true,
		Help:  "Per request, (request latency − vLLM's TTFT) / (OSL − 1) (vLLM's TPOT).",
		Value: (*Request).TPOTVLLM},
	{Name: "audio_duration", Ident: "AudioDuration", Header: "Audio Duration", Label: "audio duration",
		Unit: UnitSec, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true,
		Help: "Duration of the audio a request sent (audio_transcription), from the clip's headers.",
		Record: func(r *record.Client) (float64, bool) {
			return r.AudioDuration.Seconds(), r.AudioDuration > 0
		}},
	{Name: "rtfx", Ident: "RTFx", Header: "Real-Time Factor (RTFx)", Label: "RTFx",
		Unit: UnitRatio, Better: Higher, Kind: PerRequest, FromSend: true, Origin: "AIPerf", NoRunStat: true, Console: true,
		Help:  "Per request, audio_duration / request latency: seconds of audio transcribed per second of processing (audio_transcription).",
		Value: (*Request).RTFx},
	{Name: "generated_images", Ident: "GeneratedImages", Header: "Generated Images", Label: "images",
		Unit: UnitImages, Kind: PerRequest, Origin: "perfgate", NoRunStat: true,
		Help:   "Images in the answer (image_generation): its data entries with a b64_json or url.",
		Record: RecordCount(func(r *record.Client) (int, bool) { return r.Images, r.Images > 0 })},
	{Name: "image_throughput", Ident: "ImageThroughput", Header: "Image Throughput", Label: "images/s",
		Unit: UnitImgPerSec, Better: Higher, Kind: PerRequest, FromSend: true, Origin: "AIPerf", NoRunStat: true, Console: true,
		Help:  "Per request, images in the answer / request latency (image_generation).",
		Value: (*Request).ImageThroughput},
	{Name: "image_latency", Ident: "ImageLatency", Header: "Image Latency", Label: "image latency",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, FromSend: true, Origin: "AIPerf", NoRunStat: true,
		Help:  "Per request, request latency / images in the answer (image_generation).",
		Value: (*Request).ImageLatency},

	{Name: "http_req_blocked", Ident: "HTTPBlocked", Const: "HTTPBlocked", Header: "HTTP Blocked", Label: "HTTP blocked",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true,
		Help:   "Start of the connection step → request sent, less DNS lookup and connecting: taking a connection from the pool and arming it (k6's http_req_blocked, HAR's blocked).",
		Record: recordPhase(func(p *record.Phases) time.Duration { return p.Blocked })},
	{Name: "http_req_dns_lookup", Ident: "HTTPDNSLookup", Const: "HTTPDNSLookup", Header: "HTTP DNS Lookup", Label: "HTTP DNS lookup",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true,
		Help:   "Resolving the host name of a new connection; 0 for an IP address or a reused connection (k6's http_req_looking_up, HAR's dns).",
		Record: recordPhase(func(p *record.Phases) time.Duration { return p.DNSLookup })},
	{Name: "http_req_connecting", Ident: "HTTPConnecting", Const: "HTTPConnecting", Header: "HTTP Connecting", Label: "HTTP connecting",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true,
		Help:   "Opening a new connection: TCP connect plus the TLS handshake, as HAR's connect and AIPerf count it; 0 on a reused connection.",
		Record: recordPhase(func(p *record.Phases) time.Duration { return p.Connecting })},
	{Name: "http_req_tls_handshaking", Ident: "HTTPTLSHandshaking", Const: "HTTPTLSHandshaking", Header: "HTTP TLS Handshaking", Label: "HTTP TLS handshaking",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "k6", NoRunStat: true,
		Help:   "The TLS handshake's part of http_req_connecting (k6's http_req_tls_handshaking, HAR's ssl); 0 for plain HTTP or a reused connection.",
		Record: recordPhase(func(p *record.Phases) time.Duration { return p.TLSHandshaking })},
	{Name: "http_req_sending", Ident: "HTTPSending", Const: "HTTPSending", Header: "HTTP Sending", Label: "HTTP sending",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true,
		Help:   "Request sent → its last byte written (k6's http_req_sending, HAR's send).",
		Record: recordPhase(func(p *record.Phases) time.Duration { return p.Sending })},
	{Name: "http_req_waiting", Ident: "HTTPWaiting", Const: "HTTPWaiting", Header: "HTTP Waiting", Label: "HTTP waiting",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true,
		Help:   "Last request byte written → first response byte: time to first byte (k6's http_req_waiting, HAR's wait).",
		Record: recordPhase(func(p *record.Phases) time.Duration { return p.Waiting })},
	{Name: "http_req_receiving", Ident: "HTTPReceiving", Const: "HTTPReceiving", Header: "HTTP Receiving", Label: "HTTP receiving",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true,
		Help: "First response byte → last (k6's http_req_receiving, HAR's receive): request_latency − sending − waiting.",
		Value: func(q *Request) (float64, bool) {
			s, ok1 := q.builtinRaw(rawSending)
			w, ok2 := q.builtinRaw(rawWaiting)
			return max(MS(q.Latency)-s-w, 0), ok1 && ok2
		}},
	{Name: "http_req_duration", Ident: "HTTPDuration", Header: "HTTP Duration", Label: "HTTP duration",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true,
		Help: "Sending + waiting + receiving: request sent → last response byte, the same as request_latency (k6's http_req_duration).",
		Value: func(q *Request) (float64, bool) {
			_, ok := q.builtinRaw(rawWaiting)
			return MS(q.Latency), ok
		}},
	{Name: "http_req_connection_overhead", Ident: "HTTPConnectionOverhead", Header: "HTTP Connection Overhead", Label: "HTTP connection overhead",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true,
		Help:  "Blocked + DNS lookup + connecting: the connection's cost before the request is sent.",
		Value: connectionOverhead},
	{Name: "http_req_total", Ident: "HTTPTotal", Header: "HTTP Total", Label: "HTTP total",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true,
		Help: "The six phases' sum, connection overhead + request_latency: start of the connection step → last response byte.",
		Value: func(q *Request) (float64, bool) {
			o, ok := connectionOverhead(q)
			return o + MS(q.Latency), ok
		}},
	{Name: "http_req_connection_reused", Ident: "HTTPConnectionReused", Header: "HTTP Connection Reused", Label: "HTTP connection reuse",
		Unit: UnitRatio, Better: Higher, Kind: PerRequest, Origin: "AIPerf", NoRunStat: true,
		Help: "1 when the request went on a kept-alive connection from the pool, else 0: the average is the reuse rate.",
		Record: func(r *record.Client) (float64, bool) {
			p, ok := r.Phases()
			if p.Reused {
				return 1, ok
			}
			return 0, ok
		}},

	// The server's own account of each request (record.ServerData: vLLM's per-request
	// metrics, llama.cpp's timings, SGLang's meta_info; docs/measurement.md, "The
	// server's side of TTFT"). Reported only for runs whose server sent it.
	serverTiming("server_ttft", "ServerTTFT", "Server TTFT", "server TTFT", "The server's time to first token, by its own clock: arrival at its engine → first output token, queue included (vLLM: queue_time_ms + time_to_first_token_ms; SGLang: prefill_finished_ts − request_received_ts; llama.cpp: prompt_ms, which has no queue).",
		func(s *record.ServerData) record.OptionalDuration { return s.TTFT }),
	serverTiming("server_queue_time", "ServerQueueTime", "Server Queue Time", "server queue time", "Time the request waited in the server's scheduler queue (vLLM's queue_time_ms, SGLang's queue_time).",
		func(s *record.ServerData) record.OptionalDuration { return s.Queue }),
	serverTiming("server_prefill_time", "ServerPrefillTime", "Server Prefill Time", "server prefill time", "Scheduled → first output token, by the server's clock: the prompt's processing (vLLM's time_to_first_token_ms, llama.cpp's prompt_ms, SGLang's TTFT − queue_time).",
		func(s *record.ServerData) record.OptionalDuration { return s.Prefill }),
	serverTiming("server_decode_time", "ServerDecodeTime", "Server Decode Time", "server decode time", "First output token → last, by the server's clock: generation (vLLM's generation_time_ms, llama.cpp's predicted_ms, SGLang's decode_finished_ts − prefill_finished_ts).",
		func(s *record.ServerData) record.OptionalDuration { return s.Decode }),
	serverTiming("server_request_latency", "ServerRequestLatency", "Server Request Latency", "server request latency", "The server's whole time on the request, arrival → last token (server TTFT + decode; SGLang's e2e_latency).",
		func(s *record.ServerData) record.OptionalDuration { return s.E2E }),
	withNoRunStat(serverTiming("server_inter_token_latency", "ServerITL", "Server Inter Token Latency", "server ITL", "The server's mean time between output tokens in the decode phase (vLLM's mean_itl_ms, llama.cpp's predicted_per_token_ms); none for a one-token answer.",
		func(s *record.ServerData) record.OptionalDuration { return s.MeanITL })),
	{Name: "spec_decode_acceptance_rate", Ident: "SpecDecodeAcceptanceRate", Header: "Spec Decode Acceptance Rate", Label: "spec-decode acceptance rate",
		Unit: UnitRatio, Better: Higher, Kind: PerRequest, Origin: "vLLM",
		Help: "Per request, accepted draft tokens / proposed draft tokens (vLLM's draft_acceptance_rate; llama.cpp's draft_n_accepted / draft_n; SGLang's spec_num_correct_drafts / spec_num_proposed_drafts, or their older names), for requests that drafted.",
		Record: func(r *record.Client) (float64, bool) {
			return r.Server.AcceptanceRate()
		}},
	{Name: "spec_decode_acceptance_length", Ident: "SpecDecodeAcceptanceLength", Header: "Spec Decode Acceptance Length", Label: "spec-decode acceptance length",
		Unit: UnitTokens, Better: Higher, Kind: PerRequest, Origin: "vLLM", NoRunStat: true,
		Help: "Per request, tokens emitted per verification step, the bonus token included: 1 + accepted draft tokens / steps (vLLM's mean_acceptance_length).",
		Record: func(r *record.Client) (float64, bool) {
			return r.Server.AcceptanceLength()
		}},
	{Name: "client_overhead", Ident: "ClientOverhead", Header: "Client Overhead", Label: "client overhead",
		Unit: UnitMS, Better: Lower, Kind: PerRequest, Origin: "perfgate",
		Help:  "TTFT − server_ttft − http_req_sending: the part of the client's TTFT that neither the server's clock nor the request's write accounts for (the network both ways, the server's front end before its clock starts, the client's delay in reading); streams whose server reported its TTFT (docs/measurement.md).",
		Value: ClientOverhead},
	{Name: "output_token_throughput", Ident: "OutputTokenThroughput", Header: "Output Token Throughput",
		Unit: UnitTokPerSec, Better: Higher, Kind: PerRun, Origin: "AIPerf", Console: true,
		Help:  "Sum of OSL over the successful requests / benchmark duration.",
		Total: func(t *Totals) (float64, bool) { return float64(t.OSL) / t.Duration, t.Duration > 0 }},
	{Name: "total_token_throughput", Ident: "TotalTokenThroughput", Header: "Total Token Throughput",
		Unit: UnitTokPerSec, Better: Higher, Kind: PerRun, Origin: "AIPerf", NoRunStat: true,
		Help:  "Sum of ISL and OSL over the successful requests / benchmark duration.",
		Total: func(t *Totals) (float64, bool) { return float64(t.OSL+t.ISL) / t.Duration, t.Duration > 0 }},
	{Name: "audio_throughput", Ident: "AudioThroughput", Header: "Audio Throughput",
		Unit: UnitAudioRate, Better: Higher, Kind: PerRun, Origin: "perfgate", NoRunStat: true, Console: true,
		Help:  "Sum of audio_duration over the successful requests / benchmark duration: the server's RTFx under the run's load; reported only when requests sent audio.",
		Total: func(t *Totals) (float64, bool) { return t.Audio / t.Duration, t.Audio > 0 && t.Duration > 0 }},
	{Name: "total_image_throughput", Ident: "TotalImageThroughput", Header: "Total Image Throughput",
		Unit: UnitImgPerSec, Better: Higher, Kind: PerRun, Origin: "perfgate", NoRunStat: true, Console: true,
		Help:  "Images received over the successful requests / benchmark duration; reported only when answers carried images.",
		Total: func(t *Totals) (float64, bool) { return float64(t.Images) / t.Duration, t.Images > 0 && t.Duration > 0 }},
	{Name: "request_throughput", Ident: "RequestThroughput", Header: "Request Throughput",
		Unit: UnitReqPerSec, Better: Higher, Kind: PerRun, Origin: "AIPerf", Console: true,
		Help:  "Successful requests / benchmark duration.",
		Total: func(t *Totals) (float64, bool) { return float64(t.OK) / t.Duration, t.Duration > 0 }},
	{Name: "goodput", Ident: "Goodput", Header: "Goodput",
		Unit: UnitReqPerSec, Better: Higher, Kind: PerRun, Origin: "AIPerf", NoRunStat: true, Console: true,
		Help:  "Requests meeting every bound of the goodput SLO / benchmark duration; reported only with an SLO.",
		Total: func(t *Totals) (float64, bool) { return float64(t.Good) / t.Duration, t.HasSLO && t.Duration > 0 }},
	{Name: "request_count", Ident: "RequestCount", Header: "Request Count",
		Unit: UnitRequests, Kind: PerRun, Origin: "AIPerf", NoRunStat: true, Console: true,
		Help:  "Successful measured (non-warm-up) requests.",
		Total: func(t *Totals) (float64, bool) { return float64(t.OK), true }},
	{Name: "good_request_count", Ident: "GoodRequestCount", Header: "Good Request Count",
		Unit: UnitRequests, Better: Higher, Kind: PerRun, Origin: "AIPerf", NoRunStat: true,
		Help:  "Requests meeting every bound of the goodput SLO; reported only with an SLO.",
		Total: func(t *Totals) (float64, bool) { return float64(t.Good), t.HasSLO }},
	{Name: "error_request_count", Ident: "ErrorCount", Header: "Error Request Count",
		Unit: UnitRequests, Better: Lower, Kind: PerRun, Origin: "AIPerf", NoRunStat: true, Console: true,
		Help:  "Failed measured requests.",
		Total: func(t *Totals) (float64, bool) { return float64(t.Errors), true }},
	{Name: "error_rate", Ident: "ErrorRate", Header: "Error Rate",
		Unit: UnitRatio, Better: Lower, Kind: PerRun, Origin: "perfgate", NoRunStat: true,
		Help: "Failed / (failed + successful) measured requests.",
		Total: func(t *Totals) (float64, bool) {
			return float64(t.Errors) / float64(t.OK+t.Errors), t.OK+t.Errors > 0
		}},
	{Name: "benchmark_duration", Ident: "BenchmarkDuration", Header: "Benchmark Duration",
		Unit: UnitSec, Kind: PerRun, Origin: "AIPerf", NoRunStat: true,
		Help:  "First measured request sent → last one done.",
		Total: func(t *Totals) (float64, bool) { return t.Duration, true }},
	{Name: "total_isl", Ident: "TotalISL", Header: "Total Input Sequence Length",
		Unit: UnitTokens, Kind: PerRun, Origin: "AIPerf", NoRunStat: true,
		Help:  "Sum of ISL over the successful requests.",
		Total: func(t *Totals) (float64, bool) { return float64(t.ISL), true }},
	{Name: "total_osl", Ident: "TotalOSL", Header: "Total Output Sequence Length",
		Unit: UnitTokens, Kind: PerRun, Origin: "AIPerf", NoRunStat: true,
		Help:  "Sum of OSL (reasoning included) over the successful requests.",
		Total: func(t *Totals) (float64, bool) { return float64(t.OSL), true }},
	{Name: "total_output_tokens", Ident: "TotalOutputTokens", Header: "Total Output Tokens",
		Unit: UnitTokens, Kind: PerRun, Origin: "AIPerf", NoRunStat: true,
		Help:  "Sum of output_token_count (OSL without reasoning) over the successful requests; equals total_osl without reasoning.",
		Total: func(t *Totals) (float64, bool) { return float64(t.OSL - t.Reasoning), true }},
	{Name: "total_reasoning_tokens", Ident: "TotalReasoning", Header: "Total Reasoning Tokens",
		Unit: UnitTokens, Kind: PerRun, Origin: "AIPerf", NoRunStat: true, ReasoningOnly: true,
		Help:  "Sum of reasoning_token_count over the successful requests.",
		Total: func(t *Totals) (float64, bool) { return float64(t.Reasoning), true }},
	{Name: "prefix_cache_hit_rate", Ident: "PrefixCacheHitRate", Header: "Prefix Cache Hit Rate",
		Unit: UnitRatio, Better: Higher, Kind: PerRun, Origin: "perfgate", Console: true, RunRule: true,
		Help:  "Σ usage.prompt_tokens_details.cached_tokens / Σ prompt tokens over the successful measured requests that reported it; else the delta of the server's prefix-cache counters (vLLM's prefix_cache_hits/queries) over the run; unknown without either (docs/prefix-cache.md).",
		Total: (*Totals).prefixHitRate},
	{Name: "prefix_cache_ideal_hit_rate", Ident: "PrefixCacheIdealHitRate", Header: "Prefix Cache Ideal Hit Rate",
		// Not a gate statistic: it is the workload's, the same for every run of a seed.
		Unit: UnitRatio, Kind: PerRun, Origin: "perfgate", Console: true, RunRule: true, NoRunStat: true,
		Help:  "The hit rate an ideal prefix cache (chained blocks of the run's block size; LRU of --kv-cache-blocks, else unbounded) reaches on the exact prompt token ids sent, in send order, over the measured requests (docs/prefix-cache.md).",
		Total: (*Totals).prefixIdealRate},
	{Name: "prefix_cache_gap", Ident: "PrefixCacheGap", Header: "Prefix Cache Gap",
		// Not a gate statistic: it may be negative, which run statistics never are; the
		// gate compares prefix_cache_hit_rate, and a rule bounds the gap.
		Unit: UnitRatio, Better: Lower, Kind: PerRun, Origin: "perfgate", Console: true, RunRule: true, NoRunStat: true,
		Help: "prefix_cache_ideal_hit_rate − prefix_cache_hit_rate: the hits the server lost beyond what an ideal cache of the stated capacity would; reported when both are known.",
		Total: func(t *Totals) (float64, bool) {
			m, ok := t.prefixHitRate()
			i, ok2 := t.prefixIdealRate()
			return i - m, ok && ok2
		}},
	// GPU telemetry (--gpu-telemetry: a DCGM exporter scraped during the run,
	// servermetrics): reported only when it was scraped. The derived efficiencies are
	// gate statistics; the raw readings are not (they scale with the run's length or
	// the hardware), but rules may bound them.
	{Name: "gpu_energy", Ident: "GPUEnergy", Header: "GPU Energy",
		Unit: UnitJoules, Kind: PerRun, Origin: "perfgate", Console: true, RunRule: true, NoRunStat: true,
		Help: "Energy the scraped GPUs used over the measured window, all GPUs added: DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION interpolated at the window's ends, else DCGM_FI_DEV_POWER_USAGE integrated over it (docs/outputs.md).",
		Total: func(t *Totals) (float64, bool) {
			g, ok := t.gpu()
			return g.energy(), ok
		}},
	{Name: "gpu_power", Ident: "GPUPower", Header: "GPU Power",
		Unit: UnitWatts, Kind: PerRun, Origin: "perfgate", RunRule: true, NoRunStat: true,
		Help: "gpu_energy / benchmark_duration: the scraped GPUs' mean power over the measured window, added up.",
		Total: func(t *Totals) (float64, bool) {
			g, ok := t.gpu()
			return g.power(), ok
		}},
	{Name: "gpu_utilization", Ident: "GPUUtilization", Header: "GPU Utilization",
		Unit: UnitRatio, Kind: PerRun, Origin: "perfgate", RunRule: true, NoRunStat: true,
		Help: "Mean of DCGM_FI_DEV_GPU_UTIL over the measured window's scrapes and the GPUs, as a fraction.",
		Total: func(t *Totals) (float64, bool) {
			g, ok := t.gpu()
			if !ok || g.Util == nil {
				return 0, false
			}
			return *g.Util, true
		}},
	{Name: "gpu_memory_used", Ident: "GPUMemoryUsed", Header: "GPU Memory Used",
		Unit: UnitMiB, Better: Lower, Kind: PerRun, Origin: "perfgate", RunRule: true, NoRunStat: true,
		Help: "Peak DCGM_FI_DEV_FB_USED of any scraped GPU over the measured window's scrapes.",
		Total: func(t *Totals) (float64, bool) {
			g, ok := t.gpu()
			if !ok || g.MemMiB == nil {
				return 0, false
			}
			return *g.MemMiB, true
		}},
	{Name: "tokens_per_joule", Ident: "TokensPerJoule", Header: "Tokens per Joule",
		Unit: UnitTokPerJ, Better: Higher, Kind: PerRun, Origin: "perfgate", Console: true, RunRule: true,
		Help: "total_osl / gpu_energy: output tokens (reasoning included) generated per joule the GPUs used over the measured window.",
		Total: func(t *Totals) (float64, bool) {
			g, ok := t.gpu()
			return float64(t.OSL) / g.energy(), ok && g.EnergyJ > 0
		}},
	{Name: "output_tps_per_gpu", Ident: "OutputTPSPerGPU", Header: "Output Token Throughput per GPU", Label: "output token throughput per GPU",
		Unit: UnitTokPerGPU, Better: Higher, Kind: PerRun, Origin: "perfgate", Console: true, RunRule: true,
		Help: "output_token_throughput / the number of GPUs the telemetry reported.",
		Total: func(t *Totals) (float64, bool) {
			g, ok := t.gpu()
			return float64(t.OSL) / t.Duration / float64(g.count()), ok && t.Duration > 0
		}},
	{Name: "energy_per_request", Ident: "EnergyPerRequest", Header: "Energy per Request",
		Unit: UnitJPerReq, Better: Lower, Kind: PerRun, Origin: "perfgate", Console: true, RunRule: true,
		Help: "gpu_energy / request_count: joules per successful measured request.",
		Total: func(t *Totals) (float64, bool) {
			g, ok := t.gpu()
			return g.energy() / float64(t.OK), ok && t.OK > 0
		}},
}

// energy, power and count are g's, 0 for a nil g.
func (g *GPU) energy() float64 {
	if g == nil {
		return 0
	}
	return g.EnergyJ
}

func (g *GPU) power() float64 {
	if g == nil {
		return 0
	}
	return g.PowerW
}

func (g *GPU) count() int {
	if g == nil {
		return 0
	}
	return g.Count
}

// catalogue is one state of the catalogue, with its raw metrics indexed.
type catalogue struct {
	given []Def // the defs as given (raw metrics without their Value), for Extend
	defs  []Def
	raw   []int          // positions in defs of the raw metrics (Def.Record), in order
	rawAt map[string]int // raw metric name → position in raw
}

// newCatalogue indexes defs (its own copy), setting each raw metric's Value. A Def
// that cannot be measured as written is a programming error: it panics.
func newCatalogue(defs []Def) *catalogue {
	c := &catalogue{given: slices.Clip(defs), defs: slices.Clone(defs), rawAt: map[string]int{}}
	for k := range c.defs {
		d := &c.defs[k]
		switch {
		case d.Record != nil && (d.Kind != PerRequest || d.Value != nil):
			panic("metric: " + d.Name + ": Record is for a PerRequest metric without Value")
		case d.Kind == PerRequest && d.Value == nil && d.Record == nil:
			panic("metric: " + d.Name + ": a PerRequest metric needs Value or Record")
		case d.Kind == PerChunk && d.Gaps == nil, d.Kind == PerRun && d.Total == nil:
			panic("metric: " + d.Name + ": no derivation for its kind")
		case !slices.Contains(units, d.Unit):
			panic("metric: " + d.Name + ": unit " + strconv.Quote(d.Unit) + " is not one of metric.Units")
		}
		if d.Record == nil {
			continue
		}
		j := len(c.raw)
		c.rawAt[d.Name] = j
		c.raw = append(c.raw, k)
		d.Value = func(q *Request) (float64, bool) { return q.rawOf(c, j) }
	}
	return c
}

var current atomic.Pointer[catalogue]

// The positions of the built-in raw metrics that derived metrics and the
// [Accumulator] read, in every catalogue's raw list: [Extend] only appends to the
// built-in metrics, so they are the same in each. [Request.builtinRaw] reads them
// without looking the name up (a map lookup per value was a visible part of the
// collector's cost per record).
var rawBlocked, rawDNSLookup, rawConnecting, rawSending, rawWaiting, rawAudio, rawImages, rawServerTTFT rawPos

// rawPos is a position in a catalogue's raw list.
type rawPos int

func init() {
	c := newCatalogue(builtin)
	current.Store(c)
	pos := func(name string) rawPos {
		j, ok := c.rawAt[name]
		if !ok {
			panic("metric: no raw metric " + name)
		}
		return rawPos(j)
	}
	rawBlocked, rawDNSLookup, rawConnecting = pos("http_req_blocked"), pos("http_req_dns_lookup"), pos("http_req_connecting")
	rawSending, rawWaiting = pos("http_req_sending"), pos("http_req_waiting")
	rawAudio, rawImages = pos(record.MetricAudioDuration), pos(record.MetricGeneratedImages)
	rawServerTTFT = pos(record.MetricServerTTFT)
}

// Catalogue returns every metric perfgate reports, in report order. The slice is
// shared: do not modify it.
func Catalogue() []Def { return current.Load().defs }

// Lookup returns the metric named name (its [Def.Name]).
func Lookup(name string) (Def, bool) {
	for _, d := range Catalogue() {
		if d.Name == name {
			return d, true
		}
	}
	return Def{}, false
}

// LookupRunRule returns the run-level metric a rule may bound by name ([Def.RunRule]).
func LookupRunRule(name string) (Def, bool) {
	for _, d := range Catalogue() {
		if d.Kind == PerRun && d.RunRule && d.Name == name {
			return d, true
		}
	}
	return Def{}, false
}

// LookupRule returns the per-request metric a rule names, by its short name or its
// Name ("ttft" or "time_to_first_token").
func LookupRule(name string) (Def, bool) {
	for _, d := range Catalogue() {
		if d.Kind == PerRequest && (d.Short == name || d.Name == name) {
			return d, true
		}
	}
	return Def{}, false
}

// Extend adds defs to the catalogue, after the built-in metrics, until restore is
// called: every consumer (the accumulator made after it, the reports, the rule grammar,
// the CLI help) then knows them. It is for tests and for programs that add a metric
// of their own; it is not safe while a run or a report is being made.
func Extend(defs ...Def) (restore func()) {
	old := current.Load()
	current.Store(newCatalogue(append(slices.Clip(old.given), defs...)))
	return func() { current.Store(old) }
}

// serverTiming is the metric of one of the server's reported durations
// (record.ServerData, which at reads): per request, in ms, lower better, for the
// records whose server reported it. Every server timing is one, so what such a metric
// is is written once.
func serverTiming(name, ident, header, label, help string, at func(*record.ServerData) record.OptionalDuration) Def {
	return Def{Name: name, Ident: ident, Header: header, Label: label, Unit: UnitMS, Better: Lower, Kind: PerRequest,
		Origin: "perfgate", Help: help, Record: func(r *record.Client) (float64, bool) {
			d := at(&r.Server)
			return MS(d.D), d.Known
		}}
}

// withNoRunStat is d, not recorded as a run statistic (Def.NoRunStat).
func withNoRunStat(d Def) Def {
	d.NoRunStat = true
	return d
}

// ClientOverhead returns q's client_overhead in ms, TTFT − server_ttft −
// http_req_sending, and whether it is defined: a stream with a first token whose
// server reported its TTFT and whose record has its HTTP phases. The network's
// propagation both ways and the server's time before its clock starts stay in it,
// so it bounds the client's own overhead from above (docs/measurement.md).
func ClientOverhead(q *Request) (float64, bool) {
	srv, ok1 := q.builtinRaw(rawServerTTFT)
	send, ok2 := q.builtinRaw(rawSending)
	return MS(q.TTFT) - srv - send, q.HasTTFT && ok1 && ok2
}

// recordPhase is a [Def.Record] for one of a record's HTTP phases, in ms, for records
// that have them.
func recordPhase(f func(*record.Phases) time.Duration) func(*record.Client) (float64, bool) {
	return func(r *record.Client) (float64, bool) {
		p, ok := r.Phases()
		return MS(f(&p)), ok
	}
}

// connectionOverhead is http_req_blocked + http_req_dns_lookup + http_req_connecting.
func connectionOverhead(q *Request) (float64, bool) {
	b, ok1 := q.builtinRaw(rawBlocked)
	d, ok2 := q.builtinRaw(rawDNSLookup)
	c, ok3 := q.builtinRaw(rawConnecting)
	return b + d + c, ok1 && ok2 && ok3
}
