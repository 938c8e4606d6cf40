package metric

import (
	"math"
	"time"

	"github.com/perfgate/perfgate/record"
)

// Options chooses between the definitions a metric has. The zero value is AIPerf's
// default: OSL is the client tokenizer's count.
type Options struct {
	// UsageOSL makes OSL (and every metric derived from it: ITL, TPOT, throughputs)
	// the server's usage.completion_tokens when the server sent one, instead of the
	// client tokenizer's count of the received text.
	UsageOSL bool
	// UsageISL makes ISL (and prefill throughput and total_token_throughput) the
	// server's usage.prompt_tokens when the server sent one, instead of the client
	// tokenizer's count. For chat requests usage counts the chat template too, so ISL
	// is then the templated prompt, as the server sees it.
	UsageISL bool
	// ByModel breaks an [Accumulator]'s metrics down by the records' model as well
	// ([record.Metrics.Models]), for a run that spreads its requests over several
	// models (loadgen.Target.ModelNames). Each model's requests are kept a second
	// time (64 bytes a request more).
	ByModel bool
	// ByClass breaks an [Accumulator]'s metrics down by the records' traffic class
	// as well ([record.Metrics.Classes]), for a run of several classes (a scenario's
	// "classes:"; docs/classes.md): each class's requests, its jobs included, are
	// summarised as the run's are, and kept a second time.
	ByClass bool
}

// Request is one request's derived values, each defined once here (see the
// record.Metric… constants for the names). Times are monotonic durations; a value
// whose Has… flag is false was not measured.
type Request struct {
	Warmup, OK, Stream bool
	// Sent and Done are the record's send and completion times since the run start.
	Sent, Done time.Duration
	// Latency is Done − Sent (record.MetricRequestLatency).
	Latency time.Duration
	// Queue is Sent − Scheduled, never negative (record.MetricQueueTime).
	Queue time.Duration
	// TTFT is the first chunk with text − Sent (AIPerf; streams only).
	TTFT    time.Duration
	HasTTFT bool
	// TTST is the second text chunk − the first (AIPerf; streams only).
	TTST    time.Duration
	HasTTST bool
	// TTFTVLLM is the first chunk with "choices", empty text included, − Sent (vLLM).
	TTFTVLLM    time.Duration
	HasTTFTVLLM bool
	// TTFO is the first chunk with non-reasoning output text − Sent (AIPerf
	// time_to_first_output_token; streams only). Without reasoning it equals TTFT.
	TTFO    time.Duration
	HasTTFO bool
	// ISL is the input count chosen by [Options.UsageISL]; OSL the output count
	// chosen by [Options.UsageOSL], reasoning included; UsageOSL the server's
	// usage.completion_tokens (-1 = none).
	ISL, OSL, UsageOSL int
	// Reasoning is the part of OSL that was reasoning (AIPerf reasoning_token_count):
	// the client's count, or usage's reasoning_tokens when OSL comes from usage (the
	// client's count when usage has no reasoning split, as Anthropic's has not).
	Reasoning int
	// ICL are the gaps between consecutive text chunks (AIPerf inter_chunk_latency).
	ICL []time.Duration
	// ITLVLLM are the gaps between consecutive "choices" chunks after the first
	// (vLLM's ITL).
	ITLVLLM []time.Duration

	// cat is the catalogue Reset read the raw metrics ([Def.Record]) of; raw their
	// values in cat.raw's order, noRaw for none. [Request.Raw] reads them.
	cat *catalogue
	raw []float64
}

// Of derives r's values under opt. It allocates the gap slices; [Request.Reset]
// reuses them.
func Of(r *record.Client, opt Options) Request {
	var q Request
	q.Reset(r, opt)
	return q
}

// TTFT returns r's [Request.TTFT] and whether it has one (HasTTFT): the first chunk with
// text − Sent, for a stream. It derives nothing else, for a caller that needs only TTFT
// for every record (a live progress display).
func TTFT(r *record.Client) (time.Duration, bool) {
	if !r.Stream {
		return 0, false
	}
	t, ok := r.FirstToken()
	if !ok {
		return 0, false
	}
	return t - r.Sent, true
}

// noRaw marks a raw metric without a value. It is -Inf, not NaN, so that two requests
// with the same values are equal (reflect.DeepEqual, ==) whether or not they have
// every raw metric; a record's infinite value counts as none.
var noRaw = math.Inf(-1)

// Reset sets q to r's values under opt, reusing q's ICL and ITLVLLM storage.
func (q *Request) Reset(r *record.Client, opt Options) {
	icl, itlv, raw := q.ICL[:0], q.ITLVLLM[:0], q.raw[:0]
	cat := current.Load()
	for j := range cat.raw {
		raw = append(raw, cat.rawValue(j, r))
	}
	*q = Request{
		cat: cat, raw: raw,
		Warmup: r.Warmup, OK: r.OK(), Stream: r.Stream,
		Sent: r.Sent, Done: r.Done, Latency: r.Latency(), Queue: r.QueueTime(),
	}
	q.ISL, q.OSL, q.UsageOSL, q.Reasoning = counts(r, opt)
	if r.Stream {
		var prevText, prevChoice time.Duration = -1, -1
		for _, ch := range r.Chunks {
			if ch.Tokens > 0 {
				if prevText < 0 {
					q.TTFT, q.HasTTFT = ch.T-r.Sent, true
				} else {
					icl = append(icl, ch.T-prevText)
				}
				prevText = ch.T
			}
			if ch.Choices || ch.Tokens > 0 {
				if prevChoice < 0 {
					q.TTFTVLLM, q.HasTTFTVLLM = ch.T-r.Sent, true
				} else {
					itlv = append(itlv, ch.T-prevChoice)
				}
				prevChoice = ch.T
			}
		}
		if len(icl) > 0 {
			q.TTST, q.HasTTST = icl[0], true
		}
		if t, ok := r.FirstOutputToken(); ok {
			q.TTFO, q.HasTTFO = t-r.Sent, true
		}
	}
	q.ICL, q.ITLVLLM = icl, itlv
}

// counts returns r's ISL, OSL, usage OSL (-1 = none) and reasoning tokens under opt:
// the definitions of [Request]'s fields of those names.
func counts(r *record.Client, opt Options) (isl, osl, usage, reasoning int) {
	isl, osl, usage, reasoning = r.ISL, r.OSL, r.UsageCompletionTokens, r.ReasoningTokens
	if usage < 0 {
		usage = -1
	}
	if opt.UsageOSL && usage >= 0 {
		osl = usage
		if r.UsageReasoningTokens > 0 || r.ReasoningTokens == 0 {
			reasoning = min(max(r.UsageReasoningTokens, 0), osl)
		} else {
			// Usage without a reasoning split (Anthropic's never has one): the
			// client's count of the reasoning text.
			reasoning = min(r.ReasoningTokens, osl)
		}
	}
	if opt.UsageISL && r.UsagePromptTokens >= 0 {
		isl = r.UsagePromptTokens
	}
	return isl, osl, usage, reasoning
}

// rawValue returns the value of c's j-th raw metric read from r, noRaw when r has
// none (an infinite or NaN value counts as none).
func (c *catalogue) rawValue(j int, r *record.Client) float64 {
	v, ok := c.defs[c.raw[j]].Record(r)
	if !ok || math.IsInf(v, 0) || math.IsNaN(v) {
		return noRaw
	}
	return v
}

// Raw returns the value of the raw metric named name ([Def.Record]) for this request,
// in the metric's unit, and whether the request has one. A derived metric's
// [Def.Value] reads the raw values it is derived from this way.
func (q *Request) Raw(name string) (float64, bool) {
	if q.cat == nil {
		return 0, false
	}
	j, ok := q.cat.rawAt[name]
	if !ok {
		return 0, false
	}
	return q.rawOf(q.cat, j)
}

// rawOf returns the value of cat's j-th raw metric for q.
func (q *Request) rawOf(cat *catalogue, j int) (float64, bool) {
	if q.cat != cat {
		return q.Raw(cat.defs[cat.raw[j]].Name)
	}
	return q.builtinRaw(rawPos(j))
}

// builtinRaw returns the value of the built-in raw metric at position j of every
// catalogue's raw list (rawSending…), and whether q has one: [Request.Raw] without the
// name's lookup. It is also rawOf's read once the catalogue is q's.
func (q *Request) builtinRaw(j rawPos) (float64, bool) {
	if int(j) >= len(q.raw) || q.raw[j] == noRaw {
		return 0, false
	}
	return q.raw[j], true
}

// Output returns AIPerf's output_token_count: OSL without the reasoning tokens.
func (q *Request) Output() int { return max(q.OSL-q.Reasoning, 0) }

// MS converts a duration to the milliseconds every latency metric is reported in.
func MS(d time.Duration) float64 { return float64(d) / 1e6 }

// ITL returns AIPerf's per-request inter-token latency in ms,
// (Latency − TTFT) / (OSL − 1), and whether it is defined (a stream with a first
// token and OSL ≥ 2).
func (q *Request) ITL() (float64, bool) {
	if !q.HasTTFT || q.OSL < 2 {
		return 0, false
	}
	return MS(q.Latency-q.TTFT) / float64(q.OSL-1), true
}

// TPOTVLLM returns vLLM's TPOT in ms, (Latency − TTFTVLLM) / (OSL − 1), and whether
// it is defined.
func (q *Request) TPOTVLLM() (float64, bool) {
	if !q.HasTTFTVLLM || q.OSL < 2 {
		return 0, false
	}
	return MS(q.Latency-q.TTFTVLLM) / float64(q.OSL-1), true
}

// OutputThroughputPerUser returns 1000 / ITL, tokens/s/user, and whether it is defined
// (ITL defined and > 0).
func (q *Request) OutputThroughputPerUser() (float64, bool) {
	itl, ok := q.ITL()
	if !ok || itl <= 0 {
		return 0, false
	}
	return 1e3 / itl, true
}

// RTFx returns AIPerf's inverse real-time factor, audio_duration in seconds / request
// latency in seconds, and whether it is defined (the request sent audio and took time).
func (q *Request) RTFx() (float64, bool) {
	audio, ok := q.builtinRaw(rawAudio)
	if !ok || audio <= 0 || q.Latency <= 0 {
		return 0, false
	}
	return audio / q.Latency.Seconds(), true
}

// ImageThroughput returns AIPerf's image_throughput, the answer's images / request
// latency in seconds, and whether it is defined (the answer carried images).
func (q *Request) ImageThroughput() (float64, bool) {
	n, ok := q.builtinRaw(rawImages)
	if !ok || n <= 0 || q.Latency <= 0 {
		return 0, false
	}
	return n / q.Latency.Seconds(), true
}

// ImageLatency returns AIPerf's image_latency, request latency in ms / the answer's
// images, and whether it is defined.
func (q *Request) ImageLatency() (float64, bool) {
	n, ok := q.builtinRaw(rawImages)
	if !ok || n <= 0 {
		return 0, false
	}
	return MS(q.Latency) / n, true
}

// PrefillThroughputPerUser returns ISL / TTFT in tokens/s/user, and whether it is
// defined (TTFT measured and > 0).
func (q *Request) PrefillThroughputPerUser() (float64, bool) {
	if !q.HasTTFT || q.TTFT <= 0 {
		return 0, false
	}
	return float64(q.ISL) / q.TTFT.Seconds(), true
}
