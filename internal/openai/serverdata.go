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
//     decode_throughput, cached_tokens, and its speculative decoding under three
//     generations of names (fill_spec_decoding_meta in
//     python/sglang/srt/managers/tokenizer_manager_components/spec_decoding_meta.py,
//     before it TokenizerManager._calculate_spec_decoding_metrics): spec_verify_ct
//     (verification steps); the accepted draft tokens, the bonus token excluded, as
//     spec_accept_token_num, then spec_accepted_drafts, now spec_num_correct_drafts
//     (spec_accepted_drafts kept as its alias); the proposed draft tokens (steps ×
//     (speculative_num_draft_tokens − 1)) as spec_draft_token_num, then
//     spec_proposed_drafts, now spec_num_proposed_drafts; and the histogram of steps by
//     accepted drafts as spec_accept_histogram, now spec_correct_drafts_histogram.
//
// record.ServerData says how each maps. A field of the wrong type (a string, a
// negative time, a fraction where a count goes) is left unknown and named in
// StreamChunk.ServerBad; the rest of the answer is read. Fields derived from others
// (vLLM's draft_acceptance_rate and mean_acceptance_length, per_step_accepted and
// per_step_drafted, acceptance_histogram_by_draft_length, the per-category mean ITL
// and throughput; llama.cpp's prompt_per_token_ms and prompt_per_second; SGLang's
// spec_accept_rate, accepted / proposed drafts, and spec_accept_length,
// completion_tokens / spec_verify_ct) are skipped: the record keeps what they are
// computed from.

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
	p.server, p.stamps = record.ServerData{Source: src}, [numStamps]value{}
	c.Server = &p.server
	return serverReader{p: p, c: c, s: &p.server}
}

// bad notes name as the chunk's first field of the wrong type.
func (r serverReader) bad(name string) {
	if r.c.ServerBad == "" {
		r.c.ServerBad = name
	}
}

// histogram reads an array of whole numbers >= 0 at b[i] into s.AcceptHist; any
// other value leaves it out.
func (r serverReader) histogram(b []byte, i int, name string) (int, error) {
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

// members reads the object at b[i] by fields: a member fields names is read by its
// entry, any other skipped. A value that is not an object (null aside) is bad, named
// name.
func (r serverReader) members(b []byte, i int, name string, fields []serverMember) (int, error) {
	if i >= len(b) || b[i] != '{' {
		end, err := jsonscan.Skip(b, i)
		if err == nil && !isNull(b[i:end]) {
			r.bad(name)
		}
		return end, err
	}
	return jsonscan.Object(b, i, func(k, b []byte, j int) (int, error) {
		for f := range fields {
			if fields[f].key == string(k) {
				return fields[f].read(r, b, j, fields[f].name)
			}
		}
		return jsonscan.Skip(b, j)
	})
}

// A serverMember is one member of a server's object that the record keeps: its key,
// the name a warning gives it (the path from the server's top-level key), and how
// its value is read.
type serverMember struct {
	key, name string
	read      func(r serverReader, b []byte, i int, name string) (int, error)
}

// membersOf names each of fs by prefix and its key.
func membersOf(prefix string, fs ...serverMember) []serverMember {
	for k := range fs {
		fs[k].name = prefix + fs[k].key
	}
	return fs
}

// durField is a time of unit (time.Millisecond, time.Second), read into the field at
// returns; a negative one is bad.
func durField(key string, unit time.Duration, at func(*record.ServerData) *record.OptionalDuration) serverMember {
	return serverMember{key: key, read: func(r serverReader, b []byte, i int, name string) (int, error) {
		v, end, err := num(b, i)
		switch {
		case v.bad || v.ok && (v.v < 0 || v.v*float64(unit) >= maxDuration):
			r.bad(name)
		case v.ok:
			*at(r.s) = record.SomeDuration(time.Duration(math.Round(v.v * float64(unit))))
		}
		return end, err
	}}
}

// floatField is a number >= 0, read into the field at returns.
func floatField(key string, at func(*record.ServerData) *record.OptionalFloat) serverMember {
	return serverMember{key: key, read: func(r serverReader, b []byte, i int, name string) (int, error) {
		v, end, err := num(b, i)
		switch {
		case v.bad || v.ok && v.v < 0:
			r.bad(name)
		case v.ok:
			*at(r.s) = record.SomeFloat(v.v)
		}
		return end, err
	}}
}

// countField is a whole number >= 0, read into the field at returns.
func countField(key string, at func(*record.ServerData) *record.Optional) serverMember {
	return serverMember{key: key, read: func(r serverReader, b []byte, i int, name string) (int, error) {
		end, err := jsonscan.Skip(b, i)
		if err != nil || isNull(b[i:end]) {
			return end, err
		}
		if n, ok := jsonscan.Atoi(b[i:end]); ok && n >= 0 {
			*at(r.s) = record.Some(n)
		} else {
			r.bad(name)
		}
		return end, nil
	}}
}

// stampField is a timestamp (any finite number) kept for the object's derivations,
// in r.p.stamps[k].
func stampField(key string, k int) serverMember {
	return serverMember{key: key, read: func(r serverReader, b []byte, i int, name string) (int, error) {
		v, end, err := num(b, i)
		switch {
		case v.bad:
			r.bad(name)
		case v.ok:
			r.p.stamps[k] = v
		}
		return end, err
	}}
}

// histogramField is an array of whole numbers >= 0, read into AcceptHist.
func histogramField(key string) serverMember {
	return serverMember{key: key, read: serverReader.histogram}
}

// objectField is a nested object, read by fields (named under the object's name).
func objectField(key string, fields []serverMember) serverMember {
	return serverMember{key: key, read: func(r serverReader, b []byte, i int, name string) (int, error) {
		return r.members(b, i, name, fields)
	}}
}

// A serverVendor is one server's per-request object: its source (record.ServerData's
// Source), its top-level key, the members the record keeps, and what is derived from
// them once the object is read.
type serverVendor struct {
	source, key string
	fields      []serverMember
	derive      func(r serverReader)
}

// SGLang's timestamps, kept in ChunkParser.stamps while its object is read.
const (
	stampReceived = iota
	stampPrefilled
	stampDecoded
	numStamps
)

// vendors are the servers whose per-request data is read, each member in one row.
var vendors = []serverVendor{
	{source: record.ServerVLLM, key: keyVLLM, derive: vllmDerive, fields: membersOf(keyVLLM+".",
		durField("time_to_first_token_ms", time.Millisecond, func(s *record.ServerData) *record.OptionalDuration { return &s.Prefill }),
		durField("generation_time_ms", time.Millisecond, func(s *record.ServerData) *record.OptionalDuration { return &s.Decode }),
		durField("queue_time_ms", time.Millisecond, func(s *record.ServerData) *record.OptionalDuration { return &s.Queue }),
		durField("mean_itl_ms", time.Millisecond, func(s *record.ServerData) *record.OptionalDuration { return &s.MeanITL }),
		floatField("tokens_per_second", func(s *record.ServerData) *record.OptionalFloat { return &s.OutputTPS }),
		objectField("speculative_decoding", vllmSpec),
		objectField("output_token_metrics", vllmOutputTokens),
	)},
	{source: record.ServerLlamaCpp, key: keyLlamaCpp, derive: llamaCppDerive, fields: membersOf(keyLlamaCpp+".",
		durField("prompt_ms", time.Millisecond, func(s *record.ServerData) *record.OptionalDuration { return &s.Prefill }),
		durField("predicted_ms", time.Millisecond, func(s *record.ServerData) *record.OptionalDuration { return &s.Decode }),
		durField("predicted_per_token_ms", time.Millisecond, func(s *record.ServerData) *record.OptionalDuration { return &s.MeanITL }),
		floatField("predicted_per_second", func(s *record.ServerData) *record.OptionalFloat { return &s.OutputTPS }),
		countField("prompt_n", func(s *record.ServerData) *record.Optional { return &s.PromptTokens }),
		countField("cache_n", func(s *record.ServerData) *record.Optional { return &s.Cached }),
		countField("draft_n", func(s *record.ServerData) *record.Optional { return &s.DraftTokens }),
		countField("draft_n_accepted", func(s *record.ServerData) *record.Optional { return &s.AcceptedTokens }),
	)},
	{source: record.ServerSGLang, key: keySGLang, derive: sglangDerive, fields: membersOf(keySGLang+".",
		durField("queue_time", time.Second, func(s *record.ServerData) *record.OptionalDuration { return &s.Queue }),
		durField("e2e_latency", time.Second, func(s *record.ServerData) *record.OptionalDuration { return &s.E2E }),
		stampField("request_received_ts", stampReceived),
		stampField("prefill_finished_ts", stampPrefilled),
		stampField("decode_finished_ts", stampDecoded),
		floatField("decode_throughput", func(s *record.ServerData) *record.OptionalFloat { return &s.OutputTPS }),
		countField("cached_tokens", func(s *record.ServerData) *record.Optional { return &s.Cached }),
		countField("spec_verify_ct", func(s *record.ServerData) *record.Optional { return &s.SpecSteps }),
		// Three names each for the accepted and the proposed draft tokens, oldest first
		// (an answer with two of them has the same count in both).
		countField("spec_accept_token_num", func(s *record.ServerData) *record.Optional { return &s.AcceptedTokens }),
		countField("spec_accepted_drafts", func(s *record.ServerData) *record.Optional { return &s.AcceptedTokens }),
		countField("spec_num_correct_drafts", func(s *record.ServerData) *record.Optional { return &s.AcceptedTokens }),
		countField("spec_draft_token_num", func(s *record.ServerData) *record.Optional { return &s.DraftTokens }),
		countField("spec_proposed_drafts", func(s *record.ServerData) *record.Optional { return &s.DraftTokens }),
		countField("spec_num_proposed_drafts", func(s *record.ServerData) *record.Optional { return &s.DraftTokens }),
		histogramField("spec_accept_histogram"),
		histogramField("spec_correct_drafts_histogram"),
	)},
}

// vLLM's metrics.speculative_decoding and metrics.output_token_metrics.
var (
	vllmSpec = membersOf(keyVLLM+".speculative_decoding.",
		countField("num_draft_tokens", func(s *record.ServerData) *record.Optional { return &s.DraftTokens }),
		countField("num_accepted_draft_tokens", func(s *record.ServerData) *record.Optional { return &s.AcceptedTokens }),
		countField("num_spec_steps", func(s *record.ServerData) *record.Optional { return &s.SpecSteps }),
		countField("num_spec_tokens", func(s *record.ServerData) *record.Optional { return &s.SpecLen }),
		histogramField("acceptance_histogram"),
	)
	vllmOutputTokens = membersOf(keyVLLM+".output_token_metrics.",
		objectField("reasoning", vllmReasoning),
		objectField("content", vllmContent),
		countField("unclassified_token_count", func(s *record.ServerData) *record.Optional { return &s.UnclassifiedTokens }),
	)
	vllmReasoning = membersOf(keyVLLM+".output_token_metrics.reasoning.",
		countField("token_count", func(s *record.ServerData) *record.Optional { return &s.ReasoningTokens }),
		durField("time_to_first_token_ms", time.Millisecond, func(s *record.ServerData) *record.OptionalDuration { return &s.ReasoningTTFT }),
		durField("generation_time_ms", time.Millisecond, func(s *record.ServerData) *record.OptionalDuration { return &s.ReasoningDecode }),
	)
	vllmContent = membersOf(keyVLLM+".output_token_metrics.content.",
		countField("token_count", func(s *record.ServerData) *record.Optional { return &s.ContentTokens }),
		durField("time_to_first_token_ms", time.Millisecond, func(s *record.ServerData) *record.OptionalDuration { return &s.ContentTTFT }),
		durField("generation_time_ms", time.Millisecond, func(s *record.ServerData) *record.OptionalDuration { return &s.ContentDecode }),
	)
)

// vllmDerive: vLLM's TTFT is its queue then its time to first token (which starts at
// scheduling), its whole time that and the generation.
func vllmDerive(r serverReader) {
	s := r.s
	if s.Queue.Known && s.Prefill.Known {
		s.TTFT = record.SomeDuration(s.Queue.D + s.Prefill.D)
		if s.Decode.Known {
			s.E2E = record.SomeDuration(s.TTFT.D + s.Decode.D)
		}
	}
}

// llamaCppDerive: llama.cpp reports no queue, so its TTFT starts at the prompt's
// processing.
func llamaCppDerive(r serverReader) {
	s := r.s
	if s.Prefill.Known {
		s.TTFT = s.Prefill
		if s.Decode.Known {
			s.E2E = record.SomeDuration(s.Prefill.D + s.Decode.D)
		}
	}
}

// sglangDerive: SGLang's TTFT and decode are spans between its timestamps, and its
// prefill the TTFT less the queue.
func sglangDerive(r serverReader) {
	s, ts := r.s, &r.p.stamps
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
	s.TTFT = span(ts[stampReceived], ts[stampPrefilled], "meta_info.prefill_finished_ts")
	s.Decode = span(ts[stampPrefilled], ts[stampDecoded], "meta_info.decode_finished_ts")
	if s.TTFT.Known && s.Queue.Known && s.TTFT.D >= s.Queue.D {
		s.Prefill = record.SomeDuration(s.TTFT.D - s.Queue.D)
	}
}

// vendorOf returns source src's vendor (the last, SGLang, for an unknown one).
func vendorOf(src string) *serverVendor {
	for k := range vendors {
		if vendors[k].source == src {
			return &vendors[k]
		}
	}
	return &vendors[len(vendors)-1]
}

// serverObject reads the server-data object of source src at b[i]: null is none,
// another value that is not an object is bad.
func (p *ChunkParser) serverObject(b []byte, i int, c *StreamChunk, src string) (int, error) {
	v := vendorOf(src)
	if i >= len(b) || b[i] != '{' {
		end, err := jsonscan.Skip(b, i)
		if err == nil && !isNull(b[i:end]) && c.ServerBad == "" {
			c.ServerBad = v.key
		}
		return end, err
	}
	r := p.serverStart(c, src)
	end, err := r.members(b, i, v.key, v.fields)
	if err != nil {
		return 0, err
	}
	v.derive(r)
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
