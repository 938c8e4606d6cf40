package mockserver

import (
	"time"

	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/media"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/tokenizer"
)

func errorBody(t *testing.T, b []byte) openai.ErrorBody {
	t.Helper()
	var e openai.ErrorResponse
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Message == "" {
		t.Fatalf("body %s is not an OpenAI error body: %v", b, err)
	}
	return e.Error
}

func TestBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	s := start(t, Config{Fast: true, StrictModel: true, Models: []string{"m"}, BodyLimit: 1 << 16, MaxTokensCap: 1000, RecordFile: file})
	chat := s.URL() + "/v1/chat/completions"
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name, url, body string
		status          int
		param, reason   string
	}{
		{"malformed JSON", chat, `{"model":"m",`, 400, "", "invalid_json"},
		{"empty body", chat, ``, 400, "body", "invalid_json"},
		{"not an object", chat, `[1,2]`, 400, "body", "wrong_type"},
		{"wrong type max_tokens", chat, `{"model":"m",` + msgs + `,"max_tokens":"ten"}`, 400, "max_tokens", "wrong_type"},
		{"wrong type stream", chat, `{"model":"m",` + msgs + `,"stream":"yes"}`, 400, "stream", "wrong_type"},
		{"wrong type content", chat, `{"model":"m","messages":[{"role":"user","content":42}]}`, 400, "messages.content", "wrong_type"},
		{"missing messages", chat, `{"model":"m"}`, 400, "messages", "missing_field"},
		{"empty messages", chat, `{"model":"m","messages":[]}`, 400, "messages", "invalid_value"},
		{"missing role", chat, `{"model":"m","messages":[{"content":"x"}]}`, 400, "messages[0].role", "missing_field"},
		{"missing model", chat, `{` + msgs + `}`, 400, "model", "missing_field"},
		{"unknown model (strict)", chat, `{"model":"nope",` + msgs + `}`, 404, "model", "unknown_model"},
		{"max_tokens negative", chat, `{"model":"m",` + msgs + `,"max_tokens":-1}`, 400, "max_tokens", "invalid_value"},
		{"max_tokens zero", chat, `{"model":"m",` + msgs + `,"max_tokens":0}`, 400, "max_tokens", "invalid_value"},
		{"max_tokens above cap", chat, `{"model":"m",` + msgs + `,"max_tokens":1001}`, 400, "max_tokens", "invalid_value"},
		{"max_completion_tokens zero", chat, `{"model":"m",` + msgs + `,"max_completion_tokens":0}`, 400, "max_completion_tokens", "invalid_value"},
		{"n above 1", chat, `{"model":"m",` + msgs + `,"n":2}`, 400, "n", "invalid_value"},
		{"min_tokens above max", chat, `{"model":"m",` + msgs + `,"max_tokens":5,"min_tokens":6}`, 400, "min_tokens", "invalid_value"},
		{"invalid UTF-8", chat, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}", 400, "body", "invalid_utf8"},
		{"body over limit", chat, `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("a", 1<<16) + `"}]}`, 413, "body", "body_too_large"},
		{"missing prompt", s.URL() + "/v1/completions", `{"model":"m"}`, 400, "prompt", "missing_field"},
		{"bad token id", s.URL() + "/v1/completions", `{"model":"m","prompt":[1,99999999]}`, 400, "prompt[0]", "invalid_value"},
		{"missing input", s.URL() + "/v1/embeddings", `{"model":"m"}`, 400, "input", "missing_field"},
		{"bad encoding_format", s.URL() + "/v1/embeddings", `{"model":"m","input":"x","encoding_format":"hex"}`, 400, "encoding_format", "invalid_value"},
		{"missing query", s.URL() + "/v1/rerank", `{"model":"m","documents":["a"]}`, 400, "query", "missing_field"},
		{"missing documents", s.URL() + "/v1/rankings", `{"model":"m","query":{"text":"q"}}`, 400, "documents", "missing_field"},
		{"responses missing input", s.URL() + "/v1/responses", `{"model":"m"}`, 400, "input", "missing_field"},
		{"responses max_output_tokens zero", s.URL() + "/v1/responses", `{"model":"m","input":"x","max_output_tokens":0}`, 400, "max_output_tokens", "invalid_value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := post(t, tc.url, tc.body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d (body %s)", resp.StatusCode, tc.status, b)
			}
			e := errorBody(t, b)
			param := ""
			if e.Param != nil {
				param = *e.Param
			}
			if param != tc.param {
				t.Errorf("error param = %q, want %q (message %q)", param, tc.param, e.Message)
			}
		})
	}
	// The server keeps serving after all that.
	resp, b := post(t, chat, `{"model":"m",`+msgs+`,"max_tokens":3}`)
	if resp.StatusCode != 200 {
		t.Fatalf("valid request after bad ones: %d %s", resp.StatusCode, b)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sum := s.Summary()
	rejected := 0
	for _, tc := range tests {
		if sum.Rejected[tc.reason] == 0 {
			t.Errorf("summary rejected[%q] = 0, want > 0 (%s)", tc.reason, tc.name)
		}
	}
	for _, n := range sum.Rejected {
		rejected += n
	}
	if rejected != len(tests) || sum.TotalRequests != 1 || sum.Answered != len(tests)+1 {
		t.Errorf("rejected %d, total %d, answered %d; want %d, 1, %d", rejected, sum.TotalRequests, sum.Answered, len(tests), len(tests)+1)
	}
	// The recording holds the served request only (its ISL is a real count); the
	// rejected ones are in FILE.rejected.jsonl with their status and reason.
	if recs := s.Records(); len(recs) != 1 || recs[0].ISL == 0 || recs[0].Status != 200 {
		t.Errorf("recording = %+v; want the one served request", recs)
	}
	b, err := os.ReadFile(file + RejectedSuffix)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != len(tests) {
		t.Fatalf("%s has %d lines, want %d", file+RejectedSuffix, len(lines), len(tests))
	}
	for i, l := range lines {
		var m struct {
			Status int     `json:"status"`
			Reason string  `json:"reason"`
			ISL    *int    `json:"isl"`
			TS     float64 `json:"ts"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Status < 400 || m.Reason == "" || m.ISL == nil || m.TS == 0 {
			t.Errorf("rejected line %d = %s (%v); want a record with status >= 400 and a reason", i, l, err)
		}
	}
	if got := len(s.RejectedRecords()); got != len(tests) {
		t.Errorf("RejectedRecords() has %d, want %d", got, len(tests))
	}
}

func TestAPIKeyAndMethod(t *testing.T) {
	s := start(t, Config{Fast: true, APIKey: "k"})
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`
	if resp, b := post(t, s.URL()+"/v1/chat/completions", body); resp.StatusCode != 401 || errorBody(t, b).Type != openai.ErrAuthentication {
		t.Errorf("no key: %d %s, want 401 authentication_error", resp.StatusCode, b)
	}
	if resp, _ := post(t, s.URL()+"/v1/chat/completions", body, "Authorization", "Bearer k"); resp.StatusCode != 200 {
		t.Errorf("right key: %d, want 200", resp.StatusCode)
	}
	resp, err := http.Get(s.URL() + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Errorf("GET chat: %d, want 405", resp.StatusCode)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHealthModelsMetrics(t *testing.T) {
	s := start(t, Config{Fast: true, Models: []string{"a", "b"}})
	if st, b := get(t, s.URL()+"/health"); st != 200 || !strings.Contains(b, "ok") {
		t.Errorf("/health = %d %s", st, b)
	}
	st, b := get(t, s.URL()+"/v1/models")
	var ml openai.ModelList
	if err := json.Unmarshal([]byte(b), &ml); st != 200 || err != nil || len(ml.Data) != 2 || ml.Data[0].ID != "a" {
		t.Errorf("/v1/models = %d %s", st, b)
	}
	post(t, s.URL()+"/v1/chat/completions", `{"model":"a","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"ignore_eos":true}`)
	post(t, s.URL()+"/v1/nope", `{}`)
	st, b = get(t, s.URL()+"/metrics")
	if strings.Contains(b, `endpoint="/v1/nope"`) {
		t.Errorf("/metrics has a series for an unknown path:\n%s", b)
	}
	for _, want := range []string{
		`perfgate_mock_requests_total{endpoint="/v1/chat/completions",status="200"} 1`,
		`perfgate_mock_errors_total{kind="not_found"} 1`,
		`perfgate_mock_generation_tokens_total{endpoint="/v1/chat/completions"} 4`,
		`perfgate_mock_requests_in_flight 0`,
		`perfgate_mock_request_duration_seconds_count{endpoint="/v1/chat/completions"} 1`,
		`# TYPE perfgate_mock_time_to_first_token_seconds histogram`,
	} {
		if !strings.Contains(b, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, b)
		}
	}
	if st != 200 {
		t.Errorf("/metrics status %d", st)
	}
}

// TestProbesNotRecorded: requests to no API path — the probes clients send for a
// server's identity and health (GET /version, /health, /metrics, /v1/models) and
// wrong URLs (404, or 405 for another method on a probe's path) — are
// answered, and neither recorded nor counted as requests: the recording, the rejected
// requests and the summary hold the workload alone, numbered from 1. GET /version is
// answered as vLLM answers it.
func TestProbesNotRecorded(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	s := start(t, Config{Fast: true, RecordFile: file})
	for _, c := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/version", 200, `{"version":"perfgate-mock"}`},
		{"POST", "/version", 405, "method POST not allowed on /version"},
		{"GET", "/health", 200, "ok"},
		{"GET", "/metrics", 200, "perfgate_mock_requests_in_flight"},
		{"GET", "/v1/models", 200, `"object":"list"`},
		{"POST", "/v1/models", 405, "method POST not allowed on /v1/models"},
		{"GET", "/nope", 404, "unknown request URL: GET /nope"},
		{"POST", "/v1/v1/chat/completions", 404, "unknown request URL: POST /v1/v1/chat/completions"},
		{"GET", "/reset_prefix_cache", 405, "method GET not allowed on /reset_prefix_cache"},
	} {
		req, _ := http.NewRequest(c.method, s.URL()+c.path, strings.NewReader(`{}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.body) {
			t.Errorf("%s %s: %d %s; want %d with %q", c.method, c.path, resp.StatusCode, b, c.status, c.body)
		}
	}
	if resp, b := post(t, s.URL()+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`); resp.StatusCode != 200 {
		t.Fatalf("chat: %d %s", resp.StatusCode, b)
	}
	_, metrics := get(t, s.URL()+"/metrics")
	for _, p := range []string{"/version", "/nope", "/v1/models", "/health"} {
		if strings.Contains(metrics, `endpoint="`+p+`"`) {
			t.Errorf("/metrics counts requests to %s", p)
		}
	}
	if !strings.Contains(metrics, `perfgate_mock_errors_total{kind="not_found"} 2`) || !strings.Contains(metrics, `perfgate_mock_errors_total{kind="method_not_allowed"} 3`) {
		t.Errorf("/metrics does not count the wrong URLs as errors:\n%s", metrics)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sum := s.Summary()
	if sum.TotalRequests != 1 || sum.Answered != 1 || sum.Recorded != 1 || len(sum.Rejected) != 0 {
		t.Errorf("summary: total %d, answered %d, recorded %d, rejected %v; want the one chat request", sum.TotalRequests, sum.Answered, sum.Recorded, sum.Rejected)
	}
	if recs := s.Records(); len(recs) != 1 || recs[0].Seq != 1 {
		t.Errorf("recording %+v; want the chat request, numbered 1", recs)
	}
	if rej := s.RejectedRecords(); len(rej) != 0 {
		t.Errorf("rejected requests %+v; want none", rej)
	}
}

func TestContentPartsNormalised(t *testing.T) {
	s := start(t, Config{Fast: true})
	tok := gpt2(t)
	img := dataURI(t) // 10 x 10 PNG: the minimum 56 x 56 area, 2 x 2 cells + 2
	wav, _ := media.AppendAudioBase64(nil, media.WAV, 16000, 1, time.Second, 1)
	body := `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"Look at "},{"type":"image_url","image_url":{"url":"` + img + `"}},{"type":"text","text":" and this"},{"type":"input_audio","input_audio":{"data":"` + string(wav) + `","format":"wav"}}]}]}`
	resp, b := post(t, s.URL()+"/v1/chat/completions", body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	s.Close()
	r := s.Records()[0]
	want := tok.Count(tokenizer.RenderChatMLFallback([]tokenizer.Message{{Role: "user", Content: "Look at <image> and this<audio>"}}, true), false)
	if r.TextISL != want || r.ISL != want+6+25 || r.NonTextParts != 2 {
		t.Errorf("text ISL, ISL, non-text parts = %d, %d, %d; want %d, %d, 2", r.TextISL, r.ISL, r.NonTextParts, want, want+6+25)
	}
}

// TestTemplateInclusiveISL checks chat ISL against the model's own chat template
// (Qwen3 and Llama-3.1 tokenizers from the fixture cache).
func TestTemplateInclusiveISL(t *testing.T) {
	for _, model := range []string{"qwen3", "llama3_1"} {
		t.Run(model, func(t *testing.T) {
			tok := fixtureTok(t, model)
			dir := tok.Name()
			if !tok.HasChatTemplate() {
				t.Fatalf("%s has no chat template", dir)
			}
			s := start(t, Config{Fast: true, Tokenizer: dir}, WithTokenizer(tok))
			msgs := []tokenizer.Message{{Role: "system", Content: "You are terse."}, {Role: "user", Content: "Name three prime numbers. 日本語もどうぞ 🙂"}}
			mj, _ := json.Marshal(msgs)
			resp, b := post(t, s.URL()+"/v1/chat/completions", `{"model":"m","max_tokens":30,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true},"messages":`+string(mj)+`}`)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			text, _, _, usage := streamText(t, b)
			rendered, err := tok.ApplyChatTemplate(msgs, tokenizer.ChatOptions{AddGenerationPrompt: true})
			if err != nil {
				t.Fatal(err)
			}
			want := tok.Count(rendered, false)
			if usage == nil || usage.PromptTokens != want {
				t.Errorf("usage.prompt_tokens = %v, want %d (template-inclusive)", usage, want)
			}
			if n := tok.Count(text, false); n != 30 {
				t.Errorf("output re-count = %d, want 30 (%q)", n, text)
			}
			s.Close()
			if r := s.Records()[0]; r.TokenizationMode != record.ModeChatTemplate || r.ISL != want {
				t.Errorf("record mode %q ISL %d; want chat_template %d", r.TokenizationMode, r.ISL, want)
			}
		})
	}
}

func TestTokensPerChunkAndStop(t *testing.T) {
	s := start(t, Config{Fast: true, TokensPerChunk: 4})
	tok := gpt2(t)
	_, b := post(t, s.URL()+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":10,"ignore_eos":true,"stream":true}`)
	text, chunks, finish, _ := streamText(t, b)
	if n := tok.Count(text, false); n != 10 || chunks != 3 || finish != "length" {
		t.Errorf("tokens %d, chunks %d, finish %q; want 10, 3 (4+4+2), length", n, chunks, finish)
	}
	// A stop sequence: find a word the seeded output contains, then ask to stop at it.
	_, b = post(t, s.URL()+"/v1/completions", `{"model":"m","prompt":"p","max_tokens":200,"ignore_eos":true,"seed":42}`)
	var full openai.Completion
	if err := json.Unmarshal(b, &full); err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(full.Choices[0].Text)
	stop := " " + words[len(words)/2]
	cut := strings.Index(full.Choices[0].Text, stop)
	_, b = post(t, s.URL()+"/v1/completions", fmt.Sprintf(`{"model":"m","prompt":"p","max_tokens":200,"ignore_eos":true,"seed":42,"stop":[%q]}`, stop))
	var got openai.Completion
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	c := got.Choices[0]
	if strings.Contains(c.Text, stop) || *c.FinishReason != "stop" || !strings.HasPrefix(full.Choices[0].Text, c.Text) || len(c.Text) > cut+len(stop) {
		t.Errorf("stop %q: text %q finish %q; full output %q", stop, c.Text, *c.FinishReason, full.Choices[0].Text)
	}
	if n := tok.Count(c.Text, false); n != int(got.Usage.CompletionTokens) {
		t.Errorf("stopped output re-counts to %d, usage says %d", n, got.Usage.CompletionTokens)
	}
}

func TestOSLRules(t *testing.T) {
	s := start(t, Config{Fast: true, OSL: distribution.Spec{Distribution: distribution.Normal{Mu: 40, Sigma: 15}}, DefaultMaxTokens: 64, Seed: 7})
	req := func(extra string) (record.Server, string) {
		t.Helper()
		_, b := post(t, s.URL()+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]`+extra+`}`)
		var c openai.ChatCompletion
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return record.Server{OSL: c.Usage.CompletionTokens, FinishReason: c.Choices[0].FinishReason}, c.Choices[0].Message.Content
	}
	// ignore_eos: exactly max_completion_tokens, which wins over max_tokens.
	if r, _ := req(`,"max_tokens":5,"max_completion_tokens":77,"ignore_eos":true`); r.OSL != 77 || r.FinishReason != "length" {
		t.Errorf("ignore_eos with both caps: %d %q, want 77 length", r.OSL, r.FinishReason)
	}
	if r, _ := req(`,"max_tokens":12,"ignore_eos":true`); r.OSL != 12 || r.FinishReason != "length" {
		t.Errorf("ignore_eos max_tokens: %d %q, want 12 length", r.OSL, r.FinishReason)
	}
	// No cap sent: the default maximum bounds the draw.
	for i := range 20 {
		r, _ := req(fmt.Sprintf(`,"user":"%d"`, i))
		if r.OSL < 1 || r.OSL > 64 || (r.OSL == 64) != (r.FinishReason == "length") {
			t.Errorf("default cap: OSL %d finish %q", r.OSL, r.FinishReason)
		}
	}
	// Drawn lengths stay within [min_tokens, max_tokens], with stop below the cap.
	stops, lengths := 0, 0
	for i := range 60 {
		r, _ := req(fmt.Sprintf(`,"max_tokens":45,"min_tokens":30,"user":"%d"`, i))
		if r.OSL < 30 || r.OSL > 45 {
			t.Errorf("OSL %d outside [30, 45]", r.OSL)
		}
		switch {
		case r.FinishReason == "stop" && r.OSL < 45:
			stops++
		case r.FinishReason == "length" && r.OSL == 45:
			lengths++
		default:
			t.Errorf("OSL %d with finish %q", r.OSL, r.FinishReason)
		}
	}
	if stops == 0 || lengths == 0 {
		t.Errorf("60 draws of Normal(40,15) in [30,45]: %d stop, %d length; want both", stops, lengths)
	}
}

// TestOSLDistribution checks drawn lengths fit the configured distribution as
// distribution.Length defines it (clamped to [min, max]), with a chi-square-free
// discrete KS test at alpha = 0.01, seed fixed.
func TestOSLDistribution(t *testing.T) {
	s := start(t, Config{Fast: true, OSL: distribution.Spec{Distribution: distribution.Normal{Mu: 50, Sigma: 10}}, Seed: 3})
	var got []float64
	n := 300
	if testutil.Short() {
		n = 120
	}
	for i := range n {
		_, b := post(t, s.URL()+"/v1/completions", fmt.Sprintf(`{"model":"m","prompt":"%d","max_tokens":1000}`, i))
		var c openai.Completion
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		got = append(got, float64(c.Usage.CompletionTokens))
	}
	l := distribution.Length{Dist: distribution.Normal{Mu: 50, Sigma: 10}, Min: 0, Max: 1000}
	// Continuity-corrected comparison: compare against the exact discrete CDF.
	res := distribution.KS1(got, discreteCDF{l})
	if res.PValue < 0.01 {
		t.Errorf("OSL sample does not fit %v: %v", l, res)
	}
}

type discreteCDF struct{ l distribution.Length }

func (d discreteCDF) CDF(x float64) float64 { return d.l.CDF(int(x)) }

func TestDeterministicPerSeed(t *testing.T) {
	run := func(seed uint64) []string {
		s := start(t, Config{Fast: true, Seed: seed, OSL: distribution.Spec{Distribution: distribution.Uniform{Min: 1, Max: 30}}})
		var out []string
		for i := range 5 {
			_, b := post(t, s.URL()+"/v1/chat/completions", fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"q%d"}],"max_tokens":30}`, i%2))
			var c openai.ChatCompletion
			_ = json.Unmarshal(b, &c)
			out = append(out, c.Choices[0].Message.Content)
		}
		return out
	}
	a, b, c := run(1), run(1), run(2)
	if strings.Join(a, "|") != strings.Join(b, "|") {
		t.Errorf("same seed, different outputs:\n%q\n%q", a, b)
	}
	if strings.Join(a, "|") == strings.Join(c, "|") {
		t.Errorf("seeds 1 and 2 gave the same outputs %q", a)
	}
	if a[0] == a[2] {
		t.Errorf("repeated identical request got the same output %q; each occurrence should differ", a[0])
	}
}

// TestCompletionsEcho: with echo the prompt leads the output, streamed (in the first
// chunk, as vLLM sends it) and not, for a text prompt and for token ids; usage counts
// only the generated tokens.
func TestCompletionsEcho(t *testing.T) {
	s := start(t, Config{Fast: true})
	tok := gpt2(t)
	prompt := "Once upon a time"
	ids, _ := json.Marshal(tok.Encode(prompt, false))
	for _, p := range []string{`"` + prompt + `"`, string(ids)} {
		for _, stream := range []bool{true, false} {
			body := fmt.Sprintf(`{"model":"m","prompt":%s,"echo":true,"max_tokens":6,"ignore_eos":true,"stream":%v,"stream_options":{"include_usage":%v}}`, p, stream, stream)
			resp, b := post(t, s.URL()+"/v1/completions", body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			var text string
			var usage *openai.Usage
			if stream {
				var chunks int
				text, chunks, _, usage = streamText(t, b)
				if chunks != 6 {
					t.Errorf("prompt %s: content chunks = %d, want 6 (the echo rides on the first)", p, chunks)
				}
			} else {
				var c openai.Completion
				if err := json.Unmarshal(b, &c); err != nil || len(c.Choices) != 1 {
					t.Fatalf("body %s: %v", b, err)
				}
				text, usage = c.Choices[0].Text, c.Usage
			}
			out, found := strings.CutPrefix(text, prompt)
			if !found {
				t.Errorf("prompt %s stream=%v: text %q does not start with the prompt", p, stream, text)
			}
			if got := tok.Count(out, false); got != 6 {
				t.Errorf("prompt %s stream=%v: generated part counts %d tokens, want 6", p, stream, got)
			}
			if usage == nil || usage.CompletionTokens != 6 || usage.PromptTokens != 4 {
				t.Errorf("prompt %s stream=%v: usage = %+v, want prompt 4, completion 6", p, stream, usage)
			}
		}
	}
}
