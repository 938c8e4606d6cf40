package record

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Sources of [ServerData]: the response format a server's per-request data came in.
const (
	// ServerVLLM: vLLM's "metrics" object (--enable-per-request-metrics, with
	// "speculative_decoding" under --per-request-spec-decode-metrics and
	// "output_token_metrics" under --enable-per-request-output-token-metrics).
	ServerVLLM = "vllm"
	// ServerLlamaCpp: llama.cpp server's "timings" object.
	ServerLlamaCpp = "llamacpp"
	// ServerSGLang: SGLang's "meta_info" object.
	ServerSGLang = "sglang"
)

// ServerSources lists the [ServerData] sources.
var ServerSources = []string{ServerVLLM, ServerLlamaCpp, ServerSGLang}

// ServerData is what the server itself reported about one request's handling, read
// from its answer (docs/measurement.md, "The server's side of TTFT"). Each field is
// known only when the server sent it (or the fields it is computed from) with the
// right type; an unknown field is absent from the record, never 0, so a recording
// made before the fields existed, or against a server that sends none, reads as
// unknown. Times are the server's own clock: durations it measured, not the client's.
//
// How each server's fields map here:
//
//	field          vLLM metrics.…                    llama.cpp timings.…  SGLang meta_info.…
//	TTFT           queue_time_ms + time_to_first_token_ms  prompt_ms    prefill_finished_ts − request_received_ts
//	Queue          queue_time_ms                     —                    queue_time (s)
//	Prefill        time_to_first_token_ms            prompt_ms            TTFT − queue_time
//	Decode         generation_time_ms                predicted_ms         decode_finished_ts − prefill_finished_ts
//	E2E            TTFT + generation_time_ms         prompt_ms + predicted_ms  e2e_latency (s)
//	MeanITL        mean_itl_ms                       predicted_per_token_ms  —
//	OutputTPS      tokens_per_second                 predicted_per_second decode_throughput
//	DraftTokens    speculative_decoding.num_draft_tokens  draft_n         spec_num_proposed_drafts (before: spec_proposed_drafts, spec_draft_token_num)
//	AcceptedTokens …num_accepted_draft_tokens         draft_n_accepted     spec_num_correct_drafts (before: spec_accepted_drafts, spec_accept_token_num)
//	SpecSteps      …num_spec_steps                   —                    spec_verify_ct
//	AcceptHist     …acceptance_histogram             —                    spec_correct_drafts_histogram (before: spec_accept_histogram)
type ServerData struct {
	// Source is the format the data came in: [ServerVLLM], [ServerLlamaCpp] or
	// [ServerSGLang]; "" when the answer carried none (every other field is then
	// unknown).
	Source string `json:"source"`
	// TTFT is the server's time to first token: from the request's arrival at the
	// server's engine (vLLM, SGLang: queue included) or the start of its prompt's
	// processing (llama.cpp, which reports no queue) to the first output token.
	TTFT OptionalDuration `json:"ttft,omitzero"`
	// Queue is the time the request waited in the server's scheduler queue.
	Queue OptionalDuration `json:"queue,omitzero"`
	// Prefill is the time from the request's scheduling to its first output token
	// (the prompt's processing and the first token's sampling).
	Prefill OptionalDuration `json:"prefill,omitzero"`
	// Decode is the time from the first output token to the last (generation).
	Decode OptionalDuration `json:"decode,omitzero"`
	// E2E is the server's whole time on the request, arrival to last token.
	E2E OptionalDuration `json:"e2e,omitzero"`
	// MeanITL is the server's mean time between output tokens in the decode phase
	// (unknown for a one-token answer).
	MeanITL OptionalDuration `json:"mean_itl,omitzero"`
	// OutputTPS is the server's output tokens per second, as the server computed it
	// (vLLM: over scheduling → last token; llama.cpp and SGLang: over the decode).
	OutputTPS OptionalFloat `json:"output_tps,omitzero"`
	// PromptTokens is the prompt tokens the server processed in prefill, those its
	// cache did not serve (llama.cpp's prompt_n).
	PromptTokens Optional `json:"prompt_tokens,omitzero"`
	// Cached is the prompt tokens the server's cache served, as its timings say
	// (llama.cpp's cache_n, SGLang's cached_tokens); usage's cached_tokens is the
	// record's CachedTokens.
	Cached Optional `json:"cached,omitzero"`
	// DraftTokens, AcceptedTokens and SpecSteps are the request's speculative
	// decoding: draft tokens proposed (after grammar invalidation), accepted (the bonus
	// token excluded), and verification steps. SpecLen is the configured draft length
	// (vLLM's num_spec_tokens).
	DraftTokens    Optional `json:"draft_tokens,omitzero"`
	AcceptedTokens Optional `json:"accepted_tokens,omitzero"`
	SpecSteps      Optional `json:"spec_steps,omitzero"`
	SpecLen        Optional `json:"spec_len,omitzero"`
	// AcceptHist is vLLM's acceptance_histogram (SGLang's spec_accept_histogram, now
	// spec_correct_drafts_histogram): entry j counts the verification steps that
	// accepted exactly j draft tokens. Nil when not reported.
	AcceptHist []int `json:"accept_hist,omitempty"`
	// Reasoning and Content are vLLM's output_token_metrics: the output split into
	// reasoning and final-answer tokens, each with its own first-token time (from the
	// request's scheduling) and generation time; Unclassified counts the parser's
	// control tokens.
	ReasoningTokens    Optional         `json:"reasoning_tokens,omitzero"`
	ReasoningTTFT      OptionalDuration `json:"reasoning_ttft,omitzero"`
	ReasoningDecode    OptionalDuration `json:"reasoning_decode,omitzero"`
	ContentTokens      Optional         `json:"content_tokens,omitzero"`
	ContentTTFT        OptionalDuration `json:"content_ttft,omitzero"`
	ContentDecode      OptionalDuration `json:"content_decode,omitzero"`
	UnclassifiedTokens Optional         `json:"unclassified_tokens,omitzero"`
}

// IsZero reports that the answer carried no server data (Source is ""): the record
// leaves "server" out.
func (s ServerData) IsZero() bool { return s.Source == "" }

// AcceptanceRate returns the fraction of the proposed draft tokens the server
// accepted (vLLM's draft_acceptance_rate), and whether it is known (draft tokens
// reported and > 0).
func (s *ServerData) AcceptanceRate() (float64, bool) {
	if !s.DraftTokens.Known || !s.AcceptedTokens.Known || s.DraftTokens.N <= 0 {
		return 0, false
	}
	return float64(s.AcceptedTokens.N) / float64(s.DraftTokens.N), true
}

// AcceptanceLength returns the mean tokens emitted per verification step, the bonus
// token included: 1 + accepted / steps (vLLM's mean_acceptance_length), and whether
// it is known (steps reported and > 0).
func (s *ServerData) AcceptanceLength() (float64, bool) {
	if !s.SpecSteps.Known || !s.AcceptedTokens.Known || s.SpecSteps.N <= 0 {
		return 0, false
	}
	return 1 + float64(s.AcceptedTokens.N)/float64(s.SpecSteps.N), true
}

// OptionalDuration is a duration a server may or may not report. Its zero value is
// unknown; in JSON it is the duration in nanoseconds, as the record's other times,
// and a field tagged omitzero is absent when unknown.
type OptionalDuration struct {
	D     time.Duration
	Known bool
}

// SomeDuration returns the known duration d.
func SomeDuration(d time.Duration) OptionalDuration { return OptionalDuration{D: d, Known: true} }

// MarshalJSON writes the duration in ns (null when unknown).
func (o OptionalDuration) MarshalJSON() ([]byte, error) {
	if !o.Known {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, int64(o.D), 10), nil
}

// UnmarshalJSON reads a whole number of ns; null is unknown.
func (o *OptionalDuration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = OptionalDuration{}
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("record: want a whole number of ns, got %s", b)
	}
	*o = SomeDuration(time.Duration(n))
	return nil
}

// OptionalFloat is a number a server may or may not report. Its zero value is
// unknown; a field tagged omitzero is absent when unknown.
type OptionalFloat struct {
	V     float64
	Known bool
}

// SomeFloat returns the known number v.
func SomeFloat(v float64) OptionalFloat { return OptionalFloat{V: v, Known: true} }

// MarshalJSON writes the number as strconv's shortest form (null when unknown or
// not finite).
func (o OptionalFloat) MarshalJSON() ([]byte, error) { return appendOptionalFloat(nil, o), nil }

func appendOptionalFloat(b []byte, o OptionalFloat) []byte {
	if !o.Known || math.IsInf(o.V, 0) || math.IsNaN(o.V) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, o.V, 'g', -1, 64)
}

// UnmarshalJSON reads a JSON number; null is unknown.
func (o *OptionalFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = OptionalFloat{}
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("record: want a number, got %s", b)
	}
	*o = SomeFloat(v)
	return nil
}

// appendJSON appends s as the JSON object encoding/json writes for it.
func (s *ServerData) appendJSON(b []byte) []byte {
	b = append(b, `{"source":`...)
	b = AppendJSONString(b, s.Source)
	b = appendOptDur(b, `,"ttft":`, s.TTFT)
	b = appendOptDur(b, `,"queue":`, s.Queue)
	b = appendOptDur(b, `,"prefill":`, s.Prefill)
	b = appendOptDur(b, `,"decode":`, s.Decode)
	b = appendOptDur(b, `,"e2e":`, s.E2E)
	b = appendOptDur(b, `,"mean_itl":`, s.MeanITL)
	if s.OutputTPS.Known {
		b = append(b, `,"output_tps":`...)
		b = appendOptionalFloat(b, s.OutputTPS)
	}
	b = appendOpt(b, `,"prompt_tokens":`, s.PromptTokens)
	b = appendOpt(b, `,"cached":`, s.Cached)
	b = appendOpt(b, `,"draft_tokens":`, s.DraftTokens)
	b = appendOpt(b, `,"accepted_tokens":`, s.AcceptedTokens)
	b = appendOpt(b, `,"spec_steps":`, s.SpecSteps)
	b = appendOpt(b, `,"spec_len":`, s.SpecLen)
	if len(s.AcceptHist) > 0 {
		b = append(b, `,"accept_hist":[`...)
		for i, n := range s.AcceptHist {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(n), 10)
		}
		b = append(b, ']')
	}
	b = appendOpt(b, `,"reasoning_tokens":`, s.ReasoningTokens)
	b = appendOptDur(b, `,"reasoning_ttft":`, s.ReasoningTTFT)
	b = appendOptDur(b, `,"reasoning_decode":`, s.ReasoningDecode)
	b = appendOpt(b, `,"content_tokens":`, s.ContentTokens)
	b = appendOptDur(b, `,"content_ttft":`, s.ContentTTFT)
	b = appendOptDur(b, `,"content_decode":`, s.ContentDecode)
	b = appendOpt(b, `,"unclassified_tokens":`, s.UnclassifiedTokens)
	return append(b, '}')
}

func appendOptDur(b []byte, key string, o OptionalDuration) []byte {
	if !o.Known {
		return b
	}
	b = append(b, key...)
	return strconv.AppendInt(b, int64(o.D), 10)
}

func appendOpt(b []byte, key string, o Optional) []byte {
	if !o.Known {
		return b
	}
	b = append(b, key...)
	return strconv.AppendInt(b, int64(o.N), 10)
}

// serverData reads the object AppendJSON writes for a [ServerData] (the JSON subset
// of the fast parser); false at the first byte it does not expect.
func (p *parser) serverData(s *ServerData, prev string) bool {
	return p.Object(func(k []byte) bool {
		var ok bool
		var n int64
		dur := func(o *OptionalDuration) {
			n, ok = p.Int()
			*o = SomeDuration(time.Duration(n))
		}
		cnt := func(o *Optional) {
			n, ok = p.Int()
			*o = Some(int(n))
		}
		switch string(k) {
		case "source":
			s.Source, ok = p.str(prev)
		case "ttft":
			dur(&s.TTFT)
		case "queue":
			dur(&s.Queue)
		case "prefill":
			dur(&s.Prefill)
		case "decode":
			dur(&s.Decode)
		case "e2e":
			dur(&s.E2E)
		case "mean_itl":
			dur(&s.MeanITL)
		case "output_tps":
			var v []byte
			if v, ok = p.Number(); ok {
				f, err := strconv.ParseFloat(string(v), 64)
				s.OutputTPS, ok = SomeFloat(f), err == nil
			}
		case "prompt_tokens":
			cnt(&s.PromptTokens)
		case "cached":
			cnt(&s.Cached)
		case "draft_tokens":
			cnt(&s.DraftTokens)
		case "accepted_tokens":
			cnt(&s.AcceptedTokens)
		case "spec_steps":
			cnt(&s.SpecSteps)
		case "spec_len":
			cnt(&s.SpecLen)
		case "accept_hist":
			s.AcceptHist = s.AcceptHist[:0]
			ok = p.Array(func() bool {
				n, ok := p.Int()
				s.AcceptHist = append(s.AcceptHist, int(n))
				return ok
			})
		case "reasoning_tokens":
			cnt(&s.ReasoningTokens)
		case "reasoning_ttft":
			dur(&s.ReasoningTTFT)
		case "reasoning_decode":
			dur(&s.ReasoningDecode)
		case "content_tokens":
			cnt(&s.ContentTokens)
		case "content_ttft":
			dur(&s.ContentTTFT)
		case "content_decode":
			dur(&s.ContentDecode)
		case "unclassified_tokens":
			cnt(&s.UnclassifiedTokens)
		}
		return ok
	})
}
