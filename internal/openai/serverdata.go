package openai

import (
	"math"
	"strconv"
	"time"

	"github.com/perfgate/perfgate/internal/jsonscan"
	"github.com/perfgate/perfgate/record"
)

// A server's per-request data, read from an answer's top-level object (or a
// Responses event's "response") into [StreamChunk].Server:
//
//   - vLLM: "metrics" (--enable-per-request-metrics; docs/features/per_request_metrics.md
//     and docs/features/speculative_decoding/acceptance_metrics.md of vllm-project/vllm):
//     time_to_first_token_ms (scheduled → first token), generation_time_ms,
//     queue_time_ms, mean_itl_ms, tokens_per_second, speculative_decoding{…} and
//     output_token_metrics{reasoning{…}, content{…}, unclassified_token_count}, on the
//     final usage chunk of a stream or the whole answer; null for n > 1.
//   - llama.cpp server: "timings" (tools/server/server-task.cpp, result_timings::to_json
//     of ggml-org/llama.cpp): cache_n, prompt_n, prompt_ms, prompt_per_token_ms,
//     prompt_per_second, predicted_n, predicted_ms, predicted_per_token_ms,
//     predicted_per_second, draft_n and draft_n_accepted, on the final chunk (every
//     chunk with timings_per_token: the last one read wins).
//   - SGLang: "meta_info" (python/sglang/srt/managers/tokenizer_manager.py of
//     sgl-project/sglang): queue_time and e2e_latency in seconds,
//     request_received_ts, prefill_finished_ts and decode_finished_ts (Unix seconds),
//     decode_throughput, cached_tokens, spec_verify_ct, spec_accept_token_num and
//     spec_draft_token_num.
//
// record.ServerData says how each maps. A field of the wrong type (a string, a
// negative time, a fraction where a count goes) is left unknown and named in
// StreamChunk.ServerBad; the rest of the answer is read. Fields derived from others
// (vLLM's draft_acceptance_rate and mean_acceptance_length, per_step_accepted and
// per_step_drafted, acceptance_histogram_by_draft_length, the per-category mean ITL
// and throughput; llama.cpp's prompt_per_token_ms and prompt_per_second; SGLang's
// spec_accept_rate and spec_accept_length) are skipped: the record keeps what they
// are computed from.

// Top-level keys of the server-data objects.
const (
	keyVLLM     = "metrics"
	keyLlamaCpp = "timings"
	keySGLang   = "meta_info"
)

// maxDuration bounds a time a server may report, in ns: past it a time.Duration
// overflows when two or three of them are added (73 years), so such a time is of the
// wrong value, as a negative one is.
const maxDuration = float64(math.MaxInt64) / 4

// value is one scalar's reading: absent (missing or null), a number, or bad.
type value struct {
	v   float64
	ok  bool // a finite number
	bad bool // present, not null, not a usable number
}

// num reads the value at b[i] as a number. end is the index after it.
func num(b []byte, i int) (value, int, error) {
	end, err := jsonscan.Skip(b, i)
	if err != nil {
		return value{}, 0, err
	}
	raw := b[i:end]
	if isNull(raw) {
		return value{}, end, nil
	}
	if e, ok := jsonscan.Number(b, i); !ok || e != end {
		return value{bad: true}, end, nil
	}
	v, perr := strconv.ParseFloat(string(raw), 64)
	if perr != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return value{bad: true}, end, nil
	}
	return value{v: v, ok: true}, end, nil
}

// serverReader reads one server-data object into p.server, naming the first bad
// field in c.ServerBad.
type serverReader struct {
	p *ChunkParser
	c *StreamChunk
	s *record.ServerData
}

// serverStart makes p.server the chunk's server data, of source src, reset. Its
// AcceptHist is a new slice each time (only vLLM's spec-decode answers have one), so a
// record that keeps a copy of the data does not share it with the next chunk's.
func (p *ChunkParser) serverStart(c *StreamChunk, src string) serverReader {
	p.server = record.ServerData{Source: src}
	c.Server = &p.server
	return serverReader{p: p, c: c, s: &p.server}
}

// bad notes name as the chunk's first field of the wrong type.
func (r serverReader) bad(name string) {
	if r.c.ServerBad == "" {
		r.c.ServerBad = name
	}
}

// dur reads a time of unit (time.Millisecond, time.Second) at b[i] into *dst; a
// negative one is bad.
func (r serverReader) dur(b []byte, i int, unit time.Duration, dst *record.OptionalDuration, name string) (int, error) {
	v, end, err := num(b, i)
	switch {
	case err != nil:
		return 0, err
	case v.bad || v.ok && (v.v < 0 || v.v*float64(unit) >= maxDuration):
		r.bad(name)
	case v.ok:
		*dst = record.SomeDuration(time.Duration(math.Round(v.v * float64(unit))))
	}
	return end, nil
}

// float reads a number >= 0 at b[i] into *dst.
func (r serverReader) float(b []byte, i int, dst *record.OptionalFloat, name string) (int, error) {
	v, end, err := num(b, i)
	switch {
	case err != nil:
		return 0, err
	case v.bad || v.ok && v.v < 0:
		r.bad(name)
	case v.ok:
		*dst = record.SomeFloat(v.v)
	}
	return end, nil
}

// raw reads a number at b[i] into *dst (a timestamp: any finite number).
func (r serverReader) raw(b []byte, i int, dst *value, name string) (int, error) {
	v, end, err := num(b, i)
	switch {
	case err != nil:
		return 0, err
	case v.bad:
		r.bad(name)
	case v.ok:
		*dst = v
	}
	return end, nil
}

// count reads a whole number >= 0 at b[i] into *dst.
func (r serverReader) count(b []byte, i int, dst *record.Optional, name string) (int, error) {
	end, err := jsonscan.Skip(b, i)
	if err != nil || isNull(b[i:end]) {
		return end, err
	}
	if n, ok := jsonscan.Atoi(b[i:end]); ok && n >= 0 {
		*dst = record.Some(n)
	} else {
		r.bad(name)
	}
	return end, nil
}

// object calls f for each member of the object at b[i]; a value that is not an object
// (null aside) is bad.
func (r serverReader) object(b []byte, i int, name string, f func(k, b []byte, j int) (int, error)) (int, error) {
	if i < len(b) && b[i] == '{' {
		return jsonscan.Object(b, i, f)
	}
	end, err := jsonscan.Skip(b, i)
	if err == nil && !isNull(b[i:end]) {
		r.bad(name)
	}
	return end, err
}

// serverObject reads the server-data object of source src at b[i]: null is none,
// another value that is not an object is bad.
func (p *ChunkParser) serverObject(b []byte, i int, c *StreamChunk, src string) (int, error) {
	if i >= len(b) || b[i] != '{' {
		end, err := jsonscan.Skip(b, i)
		if err == nil && !isNull(b[i:end]) && c.ServerBad == "" {
			c.ServerBad = serverKey(src)
		}
		return end, err
	}
	r := p.serverStart(c, src)
	switch src {
	case record.ServerVLLM:
		return r.vllm(b, i)
	case record.ServerLlamaCpp:
		return r.llamaCpp(b, i)
	}
	return r.sglang(b, i)
}

// serverKey is the top-level key of source src's object.
func serverKey(src string) string {
	switch src {
	case record.ServerVLLM:
		return keyVLLM
	case record.ServerLlamaCpp:
		return keyLlamaCpp
	}
	return keySGLang
}

// vllm reads vLLM's "metrics" object.
func (r serverReader) vllm(b []byte, i int) (int, error) {
	s := r.s
	end, err := jsonscan.Object(b, i, func(k, b []byte, j int) (int, error) {
		switch string(k) {
		case "time_to_first_token_ms":
			return r.dur(b, j, time.Millisecond, &s.Prefill, "metrics.time_to_first_token_ms")
		case "generation_time_ms":
			return r.dur(b, j, time.Millisecond, &s.Decode, "metrics.generation_time_ms")
		case "queue_time_ms":
			return r.dur(b, j, time.Millisecond, &s.Queue, "metrics.queue_time_ms")
		case "mean_itl_ms":
			return r.dur(b, j, time.Millisecond, &s.MeanITL, "metrics.mean_itl_ms")
		case "tokens_per_second":
			return r.float(b, j, &s.OutputTPS, "metrics.tokens_per_second")
		case "speculative_decoding":
			return r.object(b, j, "metrics.speculative_decoding", r.vllmSpec)
		case "output_token_metrics":
			return r.object(b, j, "metrics.output_token_metrics", r.vllmOutputTokens)
		}
		return jsonscan.Skip(b, j)
	})
	if err != nil {
		return 0, err
	}
	if s.Queue.Known && s.Prefill.Known {
		s.TTFT = record.SomeDuration(s.Queue.D + s.Prefill.D)
		if s.Decode.Known {
			s.E2E = record.SomeDuration(s.TTFT.D + s.Decode.D)
		}
	}
	return end, nil
}

// vllmSpec reads one member of vLLM's metrics.speculative_decoding.
func (r serverReader) vllmSpec(k, b []byte, j int) (int, error) {
	s := r.s
	switch string(k) {
	case "num_draft_tokens":
		return r.count(b, j, &s.DraftTokens, "metrics.speculative_decoding.num_draft_tokens")
	case "num_accepted_draft_tokens":
		return r.count(b, j, &s.AcceptedTokens, "metrics.speculative_decoding.num_accepted_draft_tokens")
	case "num_spec_steps":
		return r.count(b, j, &s.SpecSteps, "metrics.speculative_decoding.num_spec_steps")
	case "num_spec_tokens":
		return r.count(b, j, &s.SpecLen, "metrics.speculative_decoding.num_spec_tokens")
	case "acceptance_histogram":
		return r.histogram(b, j)
	}
	return jsonscan.Skip(b, j)
}

// histogram reads vLLM's acceptance_histogram (whole numbers >= 0) into s.AcceptHist;
// any other value leaves it out.
func (r serverReader) histogram(b []byte, i int) (int, error) {
	const name = "metrics.speculative_decoding.acceptance_histogram"
	if i >= len(b) || b[i] != '[' {
		end, err := jsonscan.Skip(b, i)
		if err == nil && !isNull(b[i:end]) {
			r.bad(name)
		}
		return end, err
	}
	s, ok := r.s, true
	var h []int
	end, err := jsonscan.Array(b, i, func(b []byte, j int) (int, error) {
		e, err := jsonscan.Skip(b, j)
		if err != nil {
			return 0, err
		}
		n, good := jsonscan.Atoi(b[j:e])
		ok = ok && good && n >= 0
		h = append(h, n)
		return e, nil
	})
	if err != nil {
		return 0, err
	}
	if ok {
		s.AcceptHist = h
	} else {
		s.AcceptHist = nil
		r.bad(name)
	}
	return end, nil
}

// vllmOutputTokens reads one member of vLLM's metrics.output_token_metrics.
func (r serverReader) vllmOutputTokens(k, b []byte, j int) (int, error) {
	s := r.s
	switch string(k) {
	case "reasoning":
		return r.object(b, j, "metrics.output_token_metrics.reasoning", func(k, b []byte, j int) (int, error) {
			return r.category(k, b, j, &s.ReasoningTokens, &s.ReasoningTTFT, &s.ReasoningDecode, "metrics.output_token_metrics.reasoning.")
		})
	case "content":
		return r.object(b, j, "metrics.output_token_metrics.content", func(k, b []byte, j int) (int, error) {
			return r.category(k, b, j, &s.ContentTokens, &s.ContentTTFT, &s.ContentDecode, "metrics.output_token_metrics.content.")
		})
	case "unclassified_token_count":
		return r.count(b, j, &s.UnclassifiedTokens, "metrics.output_token_metrics.unclassified_token_count")
	}
	return jsonscan.Skip(b, j)
}

// category reads one member of an output_token_metrics category; prefix names it.
func (r serverReader) category(k, b []byte, j int, n *record.Optional, ttft, dec *record.OptionalDuration, prefix string) (int, error) {
	switch string(k) {
	case "token_count":
		return r.count(b, j, n, prefix+"token_count")
	case "time_to_first_token_ms":
		return r.dur(b, j, time.Millisecond, ttft, prefix+"time_to_first_token_ms")
	case "generation_time_ms":
		return r.dur(b, j, time.Millisecond, dec, prefix+"generation_time_ms")
	}
	return jsonscan.Skip(b, j)
}

// llamaCpp reads llama.cpp's "timings" object.
func (r serverReader) llamaCpp(b []byte, i int) (int, error) {
	s := r.s
	end, err := jsonscan.Object(b, i, func(k, b []byte, j int) (int, error) {
		switch string(k) {
		case "prompt_ms":
			return r.dur(b, j, time.Millisecond, &s.Prefill, "timings.prompt_ms")
		case "predicted_ms":
			return r.dur(b, j, time.Millisecond, &s.Decode, "timings.predicted_ms")
		case "predicted_per_token_ms":
			return r.dur(b, j, time.Millisecond, &s.MeanITL, "timings.predicted_per_token_ms")
		case "predicted_per_second":
			return r.float(b, j, &s.OutputTPS, "timings.predicted_per_second")
		case "prompt_n":
			return r.count(b, j, &s.PromptTokens, "timings.prompt_n")
		case "cache_n":
			return r.count(b, j, &s.Cached, "timings.cache_n")
		case "draft_n":
			return r.count(b, j, &s.DraftTokens, "timings.draft_n")
		case "draft_n_accepted":
			return r.count(b, j, &s.AcceptedTokens, "timings.draft_n_accepted")
		}
		return jsonscan.Skip(b, j)
	})
	if err != nil {
		return 0, err
	}
	if s.Prefill.Known {
		s.TTFT = s.Prefill // llama.cpp reports no queue: its TTFT starts at the prompt's processing
		if s.Decode.Known {
			s.E2E = record.SomeDuration(s.Prefill.D + s.Decode.D)
		}
	}
	return end, nil
}

// sglang reads SGLang's "meta_info" object.
func (r serverReader) sglang(b []byte, i int) (int, error) {
	s := r.s
	var received, prefilled, decoded value
	end, err := jsonscan.Object(b, i, func(k, b []byte, j int) (int, error) {
		switch string(k) {
		case "queue_time":
			return r.dur(b, j, time.Second, &s.Queue, "meta_info.queue_time")
		case "e2e_latency":
			return r.dur(b, j, time.Second, &s.E2E, "meta_info.e2e_latency")
		case "request_received_ts":
			return r.raw(b, j, &received, "meta_info.request_received_ts")
		case "prefill_finished_ts":
			return r.raw(b, j, &prefilled, "meta_info.prefill_finished_ts")
		case "decode_finished_ts":
			return r.raw(b, j, &decoded, "meta_info.decode_finished_ts")
		case "decode_throughput":
			return r.float(b, j, &s.OutputTPS, "meta_info.decode_throughput")
		case "cached_tokens":
			return r.count(b, j, &s.Cached, "meta_info.cached_tokens")
		case "spec_verify_ct":
			return r.count(b, j, &s.SpecSteps, "meta_info.spec_verify_ct")
		case "spec_accept_token_num":
			return r.count(b, j, &s.AcceptedTokens, "meta_info.spec_accept_token_num")
		case "spec_draft_token_num":
			return r.count(b, j, &s.DraftTokens, "meta_info.spec_draft_token_num")
		}
		return jsonscan.Skip(b, j)
	})
	if err != nil {
		return 0, err
	}
	// span is the time between two stamps, unknown when either is; a stamp before the
	// one it follows (or absurdly after it) is of the wrong value.
	span := func(from, to value, name string) record.OptionalDuration {
		if !from.ok || !to.ok {
			return record.OptionalDuration{}
		}
		diff := (to.v - from.v) * 1e9
		if !(diff >= 0 && diff < maxDuration) {
			r.bad(name)
			return record.OptionalDuration{}
		}
		return record.SomeDuration(time.Duration(math.Round(diff)))
	}
	s.TTFT = span(received, prefilled, "meta_info.prefill_finished_ts")
	s.Decode = span(prefilled, decoded, "meta_info.decode_finished_ts")
	if s.TTFT.Known && s.Queue.Known && s.TTFT.D >= s.Queue.D {
		s.Prefill = record.SomeDuration(s.TTFT.D - s.Queue.D)
	}
	return end, nil
}

// ServerTimes is what a server measured of one request, in Unix ns, for
// [AppendServerData]: when the request arrived, when its scheduler took it up, when
// its first and last output tokens went out; and its token counts.
type ServerTimes struct {
	Recv, Scheduled, FirstToken, LastToken   int64
	PromptTokens, CachedTokens, OutputTokens int
}

// AppendServerData puts t, in source's format (record.ServerVLLM's "metrics",
// record.ServerLlamaCpp's "timings", record.ServerSGLang's "meta_info"), into the
// JSON object dst ends with: before its closing brace. Another source appends nothing.
// The fields are those [ChunkParser] reads, with the units each server uses.
func AppendServerData(dst []byte, source string, t *ServerTimes) []byte {
	if len(dst) == 0 || dst[len(dst)-1] != '}' {
		return dst
	}
	queue := float64(max(t.Scheduled-t.Recv, 0))
	prefill := float64(max(t.FirstToken-t.Scheduled, 0))
	decode := float64(max(t.LastToken-t.FirstToken, 0))
	ms := func(ns float64) float64 { return ns / 1e6 }
	perSec := func(n int, ns float64) float64 {
		if ns <= 0 {
			return 0
		}
		return float64(n) / (ns / 1e9)
	}
	f := func(dst []byte, key string, v float64) []byte {
		dst = append(dst, key...)
		return strconv.AppendFloat(dst, v, 'f', -1, 64)
	}
	i := func(dst []byte, key string, n int) []byte {
		dst = append(dst, key...)
		return strconv.AppendInt(dst, int64(n), 10)
	}
	dst = dst[:len(dst)-1]
	switch source {
	case record.ServerVLLM:
		dst = f(dst, `,"metrics":{"time_to_first_token_ms":`, ms(prefill))
		dst = f(dst, `,"generation_time_ms":`, ms(decode))
		dst = f(dst, `,"queue_time_ms":`, ms(queue))
		if t.OutputTokens > 1 {
			dst = f(dst, `,"mean_itl_ms":`, ms(decode)/float64(t.OutputTokens-1))
		} else {
			dst = append(dst, `,"mean_itl_ms":null`...)
		}
		dst = f(dst, `,"tokens_per_second":`, perSec(t.OutputTokens, prefill+decode))
	case record.ServerLlamaCpp:
		n := max(t.PromptTokens-t.CachedTokens, 0)
		dst = i(dst, `,"timings":{"cache_n":`, t.CachedTokens)
		dst = i(dst, `,"prompt_n":`, n)
		dst = f(dst, `,"prompt_ms":`, ms(prefill))
		dst = f(dst, `,"prompt_per_token_ms":`, ms(prefill)/float64(max(n, 1)))
		dst = f(dst, `,"prompt_per_second":`, perSec(n, prefill))
		dst = i(dst, `,"predicted_n":`, t.OutputTokens)
		dst = f(dst, `,"predicted_ms":`, ms(decode))
		dst = f(dst, `,"predicted_per_token_ms":`, ms(decode)/float64(max(t.OutputTokens, 1)))
		dst = f(dst, `,"predicted_per_second":`, perSec(t.OutputTokens, decode))
	case record.ServerSGLang:
		sec := func(ns int64) float64 { return float64(ns) / 1e9 }
		dst = i(dst, `,"meta_info":{"prompt_tokens":`, t.PromptTokens)
		dst = i(dst, `,"completion_tokens":`, t.OutputTokens)
		dst = i(dst, `,"cached_tokens":`, t.CachedTokens)
		dst = f(dst, `,"queue_time":`, queue/1e9)
		dst = f(dst, `,"e2e_latency":`, float64(max(t.LastToken-t.Recv, 0))/1e9)
		dst = f(dst, `,"request_received_ts":`, sec(t.Recv))
		dst = f(dst, `,"prefill_finished_ts":`, sec(t.FirstToken))
		dst = f(dst, `,"decode_finished_ts":`, sec(t.LastToken))
		dst = f(dst, `,"decode_throughput":`, perSec(t.OutputTokens, decode))
	default:
		return append(dst, '}')
	}
	return append(dst, "}}"...)
}
