package loadgen

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/record"
)

// startMock runs the mock server (which loadgen never imports outside tests).
func startMock(t *testing.T, cfg mockserver.Config) *mockserver.Server {
	t.Helper()
	s, err := mockserver.New(mockserver.WithConfig(cfg), mockserver.WithTokenizer(gpt2(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Against the mock with reasoning on, chat and Anthropic messages, streamed and whole,
// record reasoning and content apart: the first output token comes after the first
// reasoning token, OSL is content + reasoning and agrees with usage, and the metrics
// carry TTFO, reasoning_token_count and output_token_count.
func TestReasoningAgainstMock(t *testing.T) {
	s := startMock(t, mockserver.Config{ReasoningTokens: spec(t, "fixed:6"), TTFT: spec(t, "fixed:1"), ITL: spec(t, "fixed:1"), APIKey: "sk-x"})
	for _, tc := range []struct {
		e      Endpoint
		stream bool
	}{{EndpointChat, true}, {EndpointChat, false}, {EndpointMessages, true}, {EndpointMessages, false}} {
		t.Run(string(tc.e)+map[bool]string{true: " stream", false: " whole"}[tc.stream], func(t *testing.T) {
			out, err := Run(context.Background(), Config{
				Target: Target{
					URLs:     []string{s.BaseURL()},
					API:      tc.e,
					NoStream: !(tc.stream),
					APIKey:   "sk-x",
				},
				Workload: Workload{
					ISL:       spec(t, "fixed:20"),
					OSL:       spec(t, "fixed:16"),
					IgnoreEOS: true,
				},
				Load: Load{
					Concurrency: 2,
				},
				Stop: Stop{
					Requests: 4,
				},
			}, gpt2(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range out.Records {
				if !r.OK() {
					t.Fatalf("request failed: %s %s", r.ErrorKind, r.Error)
				}
				if r.ReasoningTokens != 6 || r.OSL != 16 || r.UsageCompletionTokens != 16 {
					t.Errorf("reasoning %d, OSL %d, usage %d; want 6, 16, 16", r.ReasoningTokens, r.OSL, r.UsageCompletionTokens)
				}
				if r.UsageReasoningTokens != 6 && tc.e == EndpointChat {
					t.Errorf("usage reasoning_tokens %d, want 6", r.UsageReasoningTokens)
				}
				if r.ISLTemplate == 0 || r.UsagePromptTokens != r.ISLTemplate {
					t.Errorf("usage prompt tokens %d, client's templated count %d; want equal (chat template counted like chat)", r.UsagePromptTokens, r.ISLTemplate)
				}
				if tc.stream {
					checkFirstOutput(t, &r)
				}
				want := "length"
				if tc.e == EndpointMessages {
					want = "max_tokens"
				}
				if r.FinishReason != want {
					t.Errorf("finish reason %q, want %q", r.FinishReason, want)
				}
			}
			m := out.Metrics
			if st, ok := m.Stat(record.MetricReasoningTokens); !ok || st.Avg != 6 {
				t.Errorf("reasoning_token_count %+v, want avg 6", st)
			}
			if st, ok := m.Stat(record.MetricOutputTokens); !ok || st.Avg != 10 {
				t.Errorf("output_token_count %+v, want avg 10", st)
			}
			if tc.stream {
				// TTFO is each record's first output less its send time, in ms.
				var want []float64
				for _, r := range out.Records {
					want = append(want, float64(r.FirstOutput-r.Sent)/1e6)
				}
				slices.Sort(want)
				if ttfo, ok := m.Stat(record.MetricTTFO); !ok || math.Abs(ttfo.Min-want[0]) > 1e-6 || math.Abs(ttfo.Max-want[len(want)-1]) > 1e-6 {
					t.Errorf("TTFO %+v; want min %v, max %v ms (the records' first output less sent)", ttfo, want[0], want[len(want)-1])
				}
			}
		})
	}
}

// checkFirstOutput checks a streamed record with reasoning: FirstOutput is the time of
// the first chunk past the reasoning (the mock never mixes the two in one chunk), a
// later chunk than the first token's, within the stream. It compares chunk positions,
// not times: under load the reasoning and the first content chunk may arrive in one
// read and share its time.
func checkFirstOutput(t *testing.T, r *record.Client) {
	t.Helper()
	firstTok, firstOut, n := -1, -1, 0
	for i, ch := range r.Chunks {
		if ch.Tokens == 0 {
			continue
		}
		if firstTok < 0 {
			firstTok = i
		}
		if n += ch.Tokens; n > r.ReasoningTokens {
			firstOut = i
			break
		}
	}
	switch {
	case firstTok < 0 || firstOut <= firstTok:
		t.Errorf("first token in chunk %d, first output in chunk %d of %d: want reasoning chunks before the first output", firstTok, firstOut, len(r.Chunks))
	case r.FirstOutput != r.Chunks[firstOut].T || r.FirstOutput > r.Done:
		t.Errorf("first output %v, chunk %d (the first past %d reasoning tokens) at %v, done %v: want the chunk's time, <= done",
			r.FirstOutput, firstOut, r.ReasoningTokens, r.Chunks[firstOut].T, r.Done)
	}
}
