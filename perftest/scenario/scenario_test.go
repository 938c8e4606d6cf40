package scenario

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/record"
)

func TestScenarioJSON(t *testing.T) {
	in := `{"name":"x","isl":"normal:128,20","concurrency":8,"duration":"30s","ramp":"5s","api_key":"k",
		"objectives":{"slo":{"ttft":"200ms"},"goodput":0.9,"bounds":[{"metric":"ttft","p":0.99,"max_time":"500ms"}]}}`
	var s Scenario
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	if s.Duration.String() != "30s" || s.Ramp.String() != "5s" || s.ISL.String() != "normal:128,20" ||
		s.Objectives.SLO.TTFT.String() != "200ms" || len(s.Objectives.Bounds) != 1 || s.APIKey != "k" {
		t.Errorf("decoded %+v", s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"k"`) || !strings.Contains(string(b), `"duration":"30s"`) {
		t.Errorf("encoded %s", b)
	}
}

func TestLoadString(t *testing.T) {
	for _, c := range []struct {
		s    Scenario
		want string
	}{
		{Scenario{}, "concurrency=1"},
		{Scenario{Config: loadgen.Config{Load: loadgen.Load{Concurrency: 10}}}, "concurrency=10"},
		{Scenario{Config: loadgen.Config{Load: loadgen.Load{Rate: 20}}}, "Poisson{20 req/s}"},
		{Scenario{Config: loadgen.Config{Load: loadgen.Load{Rate: 5, Arrival: "constant", Concurrency: 4}}}, "Constant{5 req/s}, concurrency<=4"},
	} {
		if got := c.s.LoadString(); got != c.want {
			t.Errorf("%+v.LoadString() = %q, want %q", c.s, got, c.want)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	yml := `name: chat
isl: "normal:128,20"
osl: "fixed:64"
concurrency: 8
requests: 50
duration: 30s
mock:
  ttft_ms: "fixed:20"
  itl_concurrency_lin_ms: 0.5
objectives:
  slo: {ttft: 200ms, itl: 20ms}
  goodput: 0.95
  bounds:
    - {metric: ttft, p: 0.99, max_time: 500ms}
`
	p := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(p, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "chat" || s.ISL.String() != "normal:128,20" || s.Concurrency != 8 || s.Duration.String() != "30s" ||
		s.Mock.TTFT.String() != "fixed:20" || s.Mock.ITLConcurrencyLin != 500*time.Microsecond ||
		s.Objectives.SLO.ITL.String() != "20ms" || s.Objectives.Goodput != 0.95 || len(s.Objectives.Bounds) != 1 {
		t.Errorf("ReadFile(yaml) = %+v", s)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	if err := os.WriteFile(p, []byte("concurency: 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), "concurency") {
		t.Errorf("ReadFile(typo) = %v, want an unknown-field error", err)
	}
}

func TestValidate(t *testing.T) {
	err := Scenario{Objectives: Objectives{Goodput: 95, Bounds: []check.Bound{{Metric: "ttfb", P: 99}}}, Config: loadgen.Config{Load: loadgen.Load{Concurrency: -1}}}.Validate()
	if !errors.Is(err, ErrInvalidScenario) {
		t.Fatalf("Validate() = %v, want ErrInvalidScenario", err)
	}
	for _, want := range []string{"concurrency", "goodput 95", `metric "ttfb"`, "p 99", "set max or min"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() error lacks %q:\n%v", want, err)
		}
	}
	if err := (Scenario{}).Validate(); err != nil {
		t.Errorf("zero Scenario: Validate() = %v", err)
	}
}

func TestGuessInputFormat(t *testing.T) {
	dir := t.TempDir()
	for i, c := range []struct{ first, want string }{
		{`{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [1]}`, loadgen.FormatMooncake},
		{`{"request_id": "a", "tokenization_mode": "chat_template", "isl": 3}`, loadgen.FormatRecording},
		{`{"conversations": [{"from": "human", "value": "hi"}]}`, loadgen.FormatShareGPT},
		{`{"messages": [{"role": "user", "content": "hi"}]}`, loadgen.FormatPayloads},
		// A chat client record carries tokenization_mode too: not a server recording.
		{`{"request_id": "a", "run_start_unix_ns": 1, "tokenization_mode": "chat_template", "chunks": [[1, 2]]}`, loadgen.FormatPayloads},
	} {
		p := filepath.Join(dir, strconv.Itoa(i)+".jsonl")
		if err := os.WriteFile(p, []byte(c.first+"\n{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := GuessInputFormat(p); got != c.want {
			t.Errorf("GuessInputFormat(%s) = %q, want %q", c.first, got, c.want)
		}
	}
	if IsClientRecording(filepath.Join(dir, "1.jsonl")) || IsClientRecording(filepath.Join(dir, "missing")) {
		t.Error("IsClientRecording of a server recording or a missing file: true")
	}
	if !IsClientRecording(filepath.Join(dir, "4.jsonl")) {
		t.Error("IsClientRecording of a chat client record: false")
	}
	if got := GuessInputFormat(filepath.Join(dir, "missing")); got != loadgen.FormatPayloads {
		t.Errorf("GuessInputFormat(missing) = %q, want %q", got, loadgen.FormatPayloads)
	}
}

// TestStructuredObjectivesAreRules: the deprecated structured objectives check as the
// rules they mean, verdict for verdict, and each is named by a deprecation note.
func TestStructuredObjectivesAreRules(t *testing.T) {
	reqs := make([]check.Request, 50)
	for i := range reqs {
		reqs[i] = check.Request{ID: strconv.Itoa(i), TTFT: 0.01 * float64(i+1), Latency: 0.6, ISL: 10, ServerISL: 12, OSL: 20}
	}
	m := record.Metrics{Scalars: map[string]record.Scalar{record.MetricBenchmarkDuration: {Value: 10},
		record.MetricOutputTokenThroughput: {Value: 100}, record.MetricRequestThroughput: {Value: 5}}}
	slo := check.SLO{TTFT: 300 * time.Millisecond}
	old := Objectives{SLO: slo, Goodput: 0.5, Bounds: []check.Bound{{Metric: check.TTFT, P: 0.9, MaxTime: 400 * time.Millisecond, MinTime: time.Millisecond}},
		MaxErrorRate: 0.1, MinOutputTokenThroughput: 50, MinRequestThroughput: 10, TokenizerMatch: true, TokenizerTolerance: 2}
	rules := Objectives{SLO: slo, Rules: []string{"error_rate<=0.1", "goodput>=0.5", "ttft_p90<=400ms", "ttft_p90>=1ms",
		"output_token_throughput>=50", "request_throughput>=10", "tokenizer_match<=2"}}
	got, want := old.Check(reqs, m), rules.Check(reqs, m)
	if len(got) != 7 || len(got) != len(want) {
		t.Fatalf("structured objectives gave %d verdicts, rules %d; want 7 each", len(got), len(want))
	}
	for i := range got {
		if got[i].String() != want[i].String() {
			t.Errorf("verdict %d: structured\n%s\nrules\n%s", i, got[i], want[i])
		}
	}
	if got[5].Pass {
		t.Errorf("request_throughput>=10 passed at 5 req/s: %s", got[5])
	}
	notes := strings.Join(old.Deprecated(), "\n")
	for _, r := range rules.Rules {
		if !strings.Contains(notes, strconv.Quote(r)) {
			t.Errorf("the deprecation notes do not give the rule %q:\n%s", r, notes)
		}
	}
	if n := rules.Deprecated(); n != nil {
		t.Errorf("rules only: notes %v, want none", n)
	}
}

func TestValidateObjectiveFields(t *testing.T) {
	err := Scenario{Objectives: Objectives{Alpha: 2, TokenizerTolerance: -1}}.Validate()
	for _, want := range []string{"objectives.alpha 2", "objectives.tokenizer_tolerance -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
}

func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		s    Scenario
		want string
	}{
		{Scenario{}, "the in-process mock server (chat), concurrency=1, 100 requests, ISL fixed:128, OSL server default, tokenizer gpt2, seed 0"},
		{Scenario{
			Tokenizer: "cl100k_base",
			Config: loadgen.Config{
				Target: loadgen.Target{
					URLs: []string{"http://127.0.0.1:8000"},
					API:  loadgen.EndpointCompletions,
				},
				Workload: loadgen.Workload{
					ISL:  distribution.MustSpec("fixed:64"),
					OSL:  distribution.MustSpec("fixed:16"),
					Seed: 7,
				},
				Load: loadgen.Load{
					Rate: 5,
				},
				Stop: loadgen.Stop{
					Requests: 40,
					Duration: 30e9,
				},
			},
		},
			"http://127.0.0.1:8000 (completions), Poisson{5 req/s}, 40 requests or 30s, ISL fixed:64, OSL fixed:16, tokenizer cl100k_base, seed 7"},
	} {
		if got := c.s.Describe(); got != c.want {
			t.Errorf("Describe() = %q\nwant          %q", got, c.want)
		}
	}
}
