package openai

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// ms is a known duration of v milliseconds, rounded to the ns as the parser does.
func ms(v float64) record.OptionalDuration {
	return record.SomeDuration(time.Duration(v*1e6 + 0.5))
}

// TestServerDataVendors reads each server's documented answer (testdata/serverdata,
// each file naming its source in "_source") and checks every field the record keeps,
// by hand-computed value. SGLang's times are differences of Unix-second stamps, good to
// about 0.25 µs as float64s, so they are compared to the µs.
func TestServerDataVendors(t *testing.T) {
	some := record.Some
	for _, tc := range []struct {
		file string
		want record.ServerData
		// approx: the durations compared to the µs (SGLang's stamps).
		approx bool
	}{
		{"vllm_chat_completion.json", record.ServerData{Source: record.ServerVLLM,
			TTFT: ms(97.5), Queue: ms(12.3), Prefill: ms(85.2), Decode: ms(1240.5), E2E: ms(1338), MeanITL: ms(9.1),
			OutputTPS: record.SomeFloat(103.2)}, false},
		{"vllm_stream_spec_summary.json", record.ServerData{Source: record.ServerVLLM,
			TTFT: ms(20.5), Queue: ms(0.5), Prefill: ms(20), Decode: ms(0), E2E: ms(20.5), OutputTPS: record.SomeFloat(50),
			DraftTokens: some(129), AcceptedTokens: some(10), SpecSteps: some(43), SpecLen: some(3), AcceptHist: []int{39, 1, 0, 3}}, false},
		{"vllm_responses_completed_detailed.json", record.ServerData{Source: record.ServerVLLM,
			TTFT: ms(111.22), Queue: ms(3), Prefill: ms(108.22), Decode: ms(370), E2E: ms(481.22), MeanITL: ms(6.491228070175438),
			OutputTPS:   record.SomeFloat(121.33),
			DraftTokens: some(9), AcceptedTokens: some(6), SpecSteps: some(3), SpecLen: some(3), AcceptHist: []int{0, 1, 1, 1},
			ReasoningTokens: some(36), ReasoningTTFT: ms(108.22), ReasoningDecode: ms(160),
			ContentTokens: some(20), ContentTTFT: ms(268.22), ContentDecode: ms(210), UnclassifiedTokens: some(2)}, false},
		{"llamacpp_chat_stream_usage.json", record.ServerData{Source: record.ServerLlamaCpp,
			TTFT: ms(48.25), Prefill: ms(48.25), Decode: ms(1016), E2E: ms(1064.25), MeanITL: ms(7.9375),
			OutputTPS: record.SomeFloat(125.98425196850394), PromptTokens: some(512), Cached: some(64)}, false},
		{"llamacpp_completion_draft.json", record.ServerData{Source: record.ServerLlamaCpp,
			TTFT: ms(6.5), Prefill: ms(6.5), Decode: ms(480), E2E: ms(486.5), MeanITL: ms(5),
			OutputTPS: record.SomeFloat(200), PromptTokens: some(20), Cached: some(0), DraftTokens: some(98), AcceptedTokens: some(70)}, false},
		{"sglang_meta_info.json", record.ServerData{Source: record.ServerSGLang,
			TTFT: ms(50), Queue: ms(12.3), Prefill: ms(37.7), Decode: ms(465), E2E: ms(520),
			OutputTPS: record.SomeFloat(139.78494623655914), Cached: some(128),
			DraftTokens: some(78), AcceptedTokens: some(39), SpecSteps: some(26)}, true},
		// SGLang's later names for the same counts, and its histogram.
		{"sglang_meta_info_drafts.json", record.ServerData{Source: record.ServerSGLang,
			Queue: ms(2), E2E: ms(310), Cached: some(0),
			DraftTokens: some(60), AcceptedTokens: some(33), SpecSteps: some(20), AcceptHist: []int{4, 4, 7, 5}}, true},
		{"sglang_meta_info_correct_drafts.json", record.ServerData{Source: record.ServerSGLang,
			Queue: ms(2), E2E: ms(310), Cached: some(0),
			DraftTokens: some(60), AcceptedTokens: some(33), SpecSteps: some(20), AcceptHist: []int{4, 4, 7, 5}}, true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "serverdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var src struct {
				Source string `json:"_source"`
			}
			if json.Unmarshal(b, &src) != nil || src.Source == "" {
				t.Fatalf("%s names no source (_source)", tc.file)
			}
			var p ChunkParser
			var c StreamChunk
			if err := p.Parse(b, &c); err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if c.Server == nil {
				t.Fatalf("Parse(%s).Server = nil, want %+v", tc.file, tc.want)
			}
			if c.ServerBad != "" {
				t.Errorf("ServerBad = %q, want none", c.ServerBad)
			}
			got := *c.Server
			if tc.approx {
				roundServer(&got)
				roundServer(&tc.want)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%s).Server =\n %+v\nwant\n %+v", tc.file, got, tc.want)
			}
		})
	}
}

// roundServer rounds s's durations to the µs.
func roundServer(s *record.ServerData) {
	for _, d := range []*record.OptionalDuration{&s.TTFT, &s.Queue, &s.Prefill, &s.Decode, &s.E2E, &s.MeanITL} {
		d.D = d.D.Round(time.Microsecond)
	}
}

// TestServerDataAcceptance: the derived spec-decode figures are vLLM's own
// draft_acceptance_rate and mean_acceptance_length for the documented example.
func TestServerDataAcceptance(t *testing.T) {
	s := record.ServerData{DraftTokens: record.Some(129), AcceptedTokens: record.Some(10), SpecSteps: record.Some(43)}
	if r, ok := s.AcceptanceRate(); !ok || r != 0.07751937984496124 {
		t.Errorf("AcceptanceRate = %v, %v; want 0.07751937984496124 (vLLM's draft_acceptance_rate)", r, ok)
	}
	if l, ok := s.AcceptanceLength(); !ok || l != 1.2325581395348837 {
		t.Errorf("AcceptanceLength = %v, %v; want 1.2325581395348837 (vLLM's mean_acceptance_length)", l, ok)
	}
	if _, ok := (&record.ServerData{DraftTokens: record.Some(0), AcceptedTokens: record.Some(0)}).AcceptanceRate(); ok {
		t.Error("AcceptanceRate with no draft tokens is known, want unknown")
	}
}

// TestServerDataSGLangAcceptance: what SGLang derives from the counts the record
// keeps is SGLang's own figure in each of its answers (every generation of its names):
// spec_accept_rate is the record's AcceptanceRate (accepted / proposed drafts), and
// spec_accept_length is completion_tokens / spec_verify_ct (the bonus tokens and the
// prefill's first token included, so 1/steps above vLLM's mean_acceptance_length,
// which AcceptanceLength gives). The histogram has one entry per step and sums to the
// accepted drafts, as SGLang counts them.
func TestServerDataSGLangAcceptance(t *testing.T) {
	for _, file := range []string{"sglang_meta_info.json", "sglang_meta_info_drafts.json", "sglang_meta_info_correct_drafts.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "serverdata", file))
		if err != nil {
			t.Fatal(err)
		}
		var ans struct {
			Meta struct {
				Rate       float64 `json:"spec_accept_rate"`
				Length     float64 `json:"spec_accept_length"`
				Completion int     `json:"completion_tokens"`
			} `json:"meta_info"`
		}
		if err := json.Unmarshal(b, &ans); err != nil {
			t.Fatal(err)
		}
		var p ChunkParser
		var c StreamChunk
		if err := p.Parse(b, &c); err != nil || c.Server == nil {
			t.Fatalf("%s: Parse: %v, server %v", file, err, c.Server)
		}
		s := c.Server
		if r, ok := s.AcceptanceRate(); !ok || math.Abs(r-ans.Meta.Rate) > 1e-12 {
			t.Errorf("%s: AcceptanceRate = %v (%v), SGLang's spec_accept_rate %v", file, r, ok, ans.Meta.Rate)
		}
		if l := float64(ans.Meta.Completion) / float64(s.SpecSteps.N); !s.SpecSteps.Known || math.Abs(l-ans.Meta.Length) > 1e-12 {
			t.Errorf("%s: completion_tokens / steps = %v, SGLang's spec_accept_length %v", file, l, ans.Meta.Length)
		}
		if s.AcceptHist == nil {
			continue
		}
		steps, accepted := 0, 0
		for j, n := range s.AcceptHist {
			steps, accepted = steps+n, accepted+j*n
		}
		if steps != s.SpecSteps.N || accepted != s.AcceptedTokens.N {
			t.Errorf("%s: histogram %v: %d steps, %d accepted; the counts say %d and %d", file, s.AcceptHist, steps, accepted, s.SpecSteps.N, s.AcceptedTokens.N)
		}
	}
}

// TestServerDataWrongType: a field of the wrong type is left unknown and named in
// ServerBad; the object's other fields and the rest of the answer are read, and the
// chunk is no error.
func TestServerDataWrongType(t *testing.T) {
	usage := `"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}`
	for _, tc := range []struct {
		name, body, bad string
		check           func(s *record.ServerData) bool // the fields that must survive
	}{
		{"vllm string", `{"choices":[],` + usage + `,"metrics":{"time_to_first_token_ms":"85.2","generation_time_ms":10,"queue_time_ms":1}}`,
			"metrics.time_to_first_token_ms", func(s *record.ServerData) bool {
				return !s.Prefill.Known && !s.TTFT.Known && s.Decode == ms(10) && s.Queue == ms(1)
			}},
		{"vllm negative", `{"choices":[],` + usage + `,"metrics":{"time_to_first_token_ms":5,"queue_time_ms":-1}}`,
			"metrics.queue_time_ms", func(s *record.ServerData) bool { return s.Prefill == ms(5) && !s.Queue.Known && !s.TTFT.Known }},
		{"vllm bool", `{"choices":[],` + usage + `,"metrics":{"mean_itl_ms":true,"generation_time_ms":2}}`,
			"metrics.mean_itl_ms", func(s *record.ServerData) bool { return !s.MeanITL.Known && s.Decode == ms(2) }},
		{"vllm fraction count", `{"choices":[],` + usage + `,"metrics":{"speculative_decoding":{"num_draft_tokens":12.5,"num_accepted_draft_tokens":4}}}`,
			"metrics.speculative_decoding.num_draft_tokens", func(s *record.ServerData) bool { return !s.DraftTokens.Known && s.AcceptedTokens == record.Some(4) }},
		{"vllm histogram", `{"choices":[],` + usage + `,"metrics":{"speculative_decoding":{"acceptance_histogram":[1,"2"],"num_spec_steps":3}}}`,
			"metrics.speculative_decoding.acceptance_histogram", func(s *record.ServerData) bool { return s.AcceptHist == nil && s.SpecSteps == record.Some(3) }},
		{"vllm spec not an object", `{"choices":[],` + usage + `,"metrics":{"speculative_decoding":[1],"queue_time_ms":2}}`,
			"metrics.speculative_decoding", func(s *record.ServerData) bool { return s.Queue == ms(2) }},
		{"vllm metrics not an object", `{"choices":[],` + usage + `,"metrics":"fast"}`, "metrics", nil},
		{"llama.cpp object for a number", `{"choices":[],` + usage + `,"timings":{"prompt_ms":{"v":1},"predicted_ms":8,"predicted_n":2}}`,
			"timings.prompt_ms", func(s *record.ServerData) bool { return !s.Prefill.Known && s.Decode == ms(8) }},
		{"llama.cpp negative count", `{"choices":[],` + usage + `,"timings":{"draft_n":-3,"prompt_ms":1}}`,
			"timings.draft_n", func(s *record.ServerData) bool { return !s.DraftTokens.Known && s.Prefill == ms(1) }},
		{"sglang string stamp", `{"text":"x","meta_info":{"request_received_ts":"1767000000.1","prefill_finished_ts":1767000000.2,"queue_time":0.001}}`,
			"meta_info.request_received_ts", func(s *record.ServerData) bool { return !s.TTFT.Known && s.Queue == ms(1) }},
		{"sglang fraction count, new name", `{"text":"x","meta_info":{"spec_num_correct_drafts":3.5,"spec_num_proposed_drafts":9,"spec_verify_ct":3}}`,
			"meta_info.spec_num_correct_drafts", func(s *record.ServerData) bool {
				return !s.AcceptedTokens.Known && s.DraftTokens == record.Some(9) && s.SpecSteps == record.Some(3)
			}},
		{"sglang histogram of strings", `{"text":"x","meta_info":{"spec_correct_drafts_histogram":["1"],"spec_verify_ct":1}}`,
			"meta_info.spec_correct_drafts_histogram", func(s *record.ServerData) bool { return s.AcceptHist == nil && s.SpecSteps == record.Some(1) }},
		{"sglang stamps backwards", `{"text":"x","meta_info":{"request_received_ts":1767000000.5,"prefill_finished_ts":1767000000.2,"e2e_latency":0.5}}`,
			"meta_info.prefill_finished_ts", func(s *record.ServerData) bool { return !s.TTFT.Known && s.E2E == ms(500) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p ChunkParser
			var c StreamChunk
			if err := p.Parse([]byte(tc.body), &c); err != nil {
				t.Fatalf("Parse(%s): %v; want the chunk read, the field ignored", tc.body, err)
			}
			if c.ServerBad != tc.bad {
				t.Errorf("ServerBad = %q, want %q", c.ServerBad, tc.bad)
			}
			if strings.HasPrefix(tc.body, `{"choices"`) && (!c.HasUsage || c.Usage.PromptTokens != 7) {
				t.Errorf("usage %+v (has %v): want the rest of the answer read", c.Usage, c.HasUsage)
			}
			if tc.check != nil && (c.Server == nil || !tc.check(c.Server)) {
				t.Errorf("Server = %+v: the fields of the right type are not what was sent", c.Server)
			}
		})
	}
	// null is absent, not wrong: no server data, no complaint (vLLM's metrics for n > 1).
	var p ChunkParser
	var c StreamChunk
	if err := p.Parse([]byte(`{"choices":[],`+usage+`,"metrics":null,"timings":null}`), &c); err != nil || c.Server != nil || c.ServerBad != "" {
		t.Errorf("metrics null: err %v, server %+v, bad %q; want none of them", err, c.Server, c.ServerBad)
	}
	// A chunk without server data says none after one with it.
	if err := p.Parse([]byte(`{"choices":[{"index":0,"delta":{"content":"a"}}]}`), &c); err != nil || c.Server != nil {
		t.Errorf("a plain chunk after: server %+v, %v; want nil", c.Server, err)
	}
}

// TestAppendServerDataRoundTrip: what the mock writes for each server (AppendServerData)
// reads back (ChunkParser) as the times it measured.
func TestAppendServerDataRoundTrip(t *testing.T) {
	const base = int64(1_767_000_000_000_000_000)
	st := ServerTimes{Recv: base, Scheduled: base + 2_000_000, FirstToken: base + 7_500_000, LastToken: base + 27_500_000,
		PromptTokens: 100, CachedTokens: 32, OutputTokens: 11}
	h := ChunkHeader{ID: "chatcmpl-1", Created: 1, Model: "m"}
	for _, tc := range []struct {
		src  string
		want record.ServerData
	}{
		{record.ServerVLLM, record.ServerData{Source: record.ServerVLLM, TTFT: ms(7.5), Queue: ms(2), Prefill: ms(5.5), Decode: ms(20), E2E: ms(27.5),
			MeanITL: ms(2), OutputTPS: record.SomeFloat(11 / 0.0255)}},
		{record.ServerLlamaCpp, record.ServerData{Source: record.ServerLlamaCpp, TTFT: ms(5.5), Prefill: ms(5.5), Decode: ms(20), E2E: ms(25.5),
			MeanITL: ms(20.0 / 11), OutputTPS: record.SomeFloat(11 / 0.02), PromptTokens: record.Some(68), Cached: record.Some(32)}},
		{record.ServerSGLang, record.ServerData{Source: record.ServerSGLang, TTFT: ms(7.5), Queue: ms(2), Prefill: ms(5.5), Decode: ms(20), E2E: ms(27.5),
			OutputTPS: record.SomeFloat(11 / 0.02), Cached: record.Some(32)}},
	} {
		b := AppendServerData(AppendChatUsageChunk(nil, h, Usage{PromptTokens: 100, CompletionTokens: 11, TotalTokens: 111}), tc.src, &st)
		if !json.Valid(b) {
			t.Fatalf("%s: not JSON: %s", tc.src, b)
		}
		var p ChunkParser
		var c StreamChunk
		if err := p.Parse(b, &c); err != nil || c.Server == nil || c.ServerBad != "" || !c.HasUsage {
			t.Fatalf("%s: Parse(%s) = %v, server %v, bad %q", tc.src, b, err, c.Server, c.ServerBad)
		}
		got, want := *c.Server, tc.want
		roundServer(&got) // SGLang's stamps are float64 seconds
		roundServer(&want)
		got.OutputTPS.V, want.OutputTPS.V = round6(got.OutputTPS.V), round6(want.OutputTPS.V)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read back\n %+v\nwant\n %+v\nfrom %s", tc.src, got, want, b)
		}
	}
	if b := AppendServerData([]byte(`{"a":1}`), "tgi", &st); string(b) != `{"a":1}` {
		t.Errorf("an unknown source appended %s", b)
	}
}

func round6(v float64) float64 { return float64(int64(v*1e6+0.5)) / 1e6 }
