package loadgen

import (
	"context"
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
				first, _ := r.FirstToken()
				if tc.stream && (r.FirstOutput <= first || r.FirstOutput > r.Done) {
					t.Errorf("first output %v, first token %v, done %v: want first token < first output <= done", r.FirstOutput, first, r.Done)
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
			ttfo, ok := m.Stat(record.MetricTTFO)
			ttft, _ := m.Stat(record.MetricTTFT)
			if tc.stream && (!ok || ttfo.Min <= ttft.Min) {
				t.Errorf("TTFO %v, TTFT %v: want TTFO measured and later", ttfo, ttft)
			}
		})
	}
}
