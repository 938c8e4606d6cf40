package metric

import (
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// A reasoning stream: two reasoning chunks, then content. TTFT is the first
// reasoning chunk, TTFO the first content chunk, output_token_count excludes reasoning
// and OSL is both (AIPerf's definitions).
func TestReasoningMetrics(t *testing.T) {
	ms := time.Millisecond
	r := record.Client{
		Stream: true, Sent: 10 * ms, Done: 100 * ms, FirstOutput: 60 * ms,
		Chunks: []record.Chunk{{T: 30 * ms, Tokens: 3}, {T: 40 * ms, Tokens: 3}, {T: 60 * ms, Tokens: 2}, {T: 100 * ms, Tokens: 2}},
		OSL:    10, ReasoningTokens: 6, UsagePromptTokens: 50, UsageCompletionTokens: 12, UsageReasoningTokens: 7, ISL: 40,
	}
	q := Of(&r, Options{})
	if !q.HasTTFT || q.TTFT != 20*ms || !q.HasTTFO || q.TTFO != 50*ms {
		t.Errorf("Of(client) TTFT, TTFO = %v %v, %v %v; want 20ms, 50ms", q.TTFT, q.HasTTFT, q.TTFO, q.HasTTFO)
	}
	if q.OSL != 10 || q.Reasoning != 6 || q.Output() != 4 || q.ISL != 40 {
		t.Errorf("Of(client) OSL, reasoning, output, ISL = %d, %d, %d, %d; want 10, 6, 4, 40", q.OSL, q.Reasoning, q.Output(), q.ISL)
	}
	u := Of(&r, Options{UsageOSL: true, UsageISL: true})
	if u.OSL != 12 || u.Reasoning != 7 || u.Output() != 5 || u.ISL != 50 {
		t.Errorf("Of(usage) OSL, reasoning, output, ISL = %d, %d, %d, %d; want 12, 7, 5, 50", u.OSL, u.Reasoning, u.Output(), u.ISL)
	}

	// Usage without a reasoning split (Anthropic's): the client's reasoning count.
	anth := r
	anth.UsageReasoningTokens = 0
	if q := Of(&anth, Options{UsageOSL: true}); q.OSL != 12 || q.Reasoning != 6 || q.Output() != 6 {
		t.Errorf("Of(usage without split) OSL, reasoning, output = %d, %d, %d; want 12, 6, 6", q.OSL, q.Reasoning, q.Output())
	}

	// Recorded before FirstOutput existed, no reasoning: TTFO falls back to TTFT.
	old := record.Client{Stream: true, Sent: 0, Done: 50 * ms, Chunks: []record.Chunk{{T: 5 * ms, Tokens: 1}}, OSL: 1}
	if q := Of(&old, Options{}); !q.HasTTFO || q.TTFO != 5*ms {
		t.Errorf("Of(old record) TTFO = %v %v, want 5ms", q.TTFO, q.HasTTFO)
	}
	// Reasoning only, no content: no TTFO.
	think := record.Client{Stream: true, Done: 50 * ms, Chunks: []record.Chunk{{T: 5 * ms, Tokens: 1}}, OSL: 1, ReasoningTokens: 1}
	if q := Of(&think, Options{}); q.HasTTFO {
		t.Errorf("Of(reasoning only) has TTFO %v, want none", q.TTFO)
	}

	// Through the accumulator, TTFO survives its compact storage, in ns below 2.1 s
	// and in µs beyond.
	long := r
	long.FirstOutput = 3*time.Second + 10*ms + 1234
	m := Compute([]record.Client{r, long}, Options{}, nil)
	got := m.Stats[record.MetricTTFO]
	if got.Min != 50 || got.Max != 3000.001 {
		t.Errorf("TTFO stat min, max = %v, %v ms; want 50, 3000.001", got.Min, got.Max)
	}
	if s := m.Stats[record.MetricReasoningTokens]; s.Avg != 6 {
		t.Errorf("reasoning_token_count avg = %v, want 6", s.Avg)
	}
	if s := m.Stats[record.MetricOutputTokens]; s.Avg != 4 {
		t.Errorf("output_token_count avg = %v, want 4", s.Avg)
	}
	if v := m.Value(record.MetricTotalReasoning); v != 12 {
		t.Errorf("total reasoning = %v, want 12", v)
	}
	if mu := Compute([]record.Client{r}, Options{UsageISL: true}, nil); mu.ISLSource != "usage" || mu.Stats[record.MetricISL].Avg != 50 {
		t.Errorf("UsageISL: ISL source %q avg %v, want usage 50", mu.ISLSource, mu.Stats[record.MetricISL].Avg)
	}
}
