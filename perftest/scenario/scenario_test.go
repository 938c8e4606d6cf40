package scenario

import (
	"context"
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
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/record"
)

func TestRunMock(t *testing.T) {
	dir := t.TempDir()
	sc := Scenario{
		Name: "smoke",
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Target: loadgen.Target{
				API:    loadgen.EndpointCompletions,
				APIKey: "sk-secret",
			},
			Workload: loadgen.Workload{
				ISL:  distribution.Spec{Distribution: distribution.Fixed{Value: 32}},
				OSL:  distribution.Spec{Distribution: distribution.Fixed{Value: 8}},
				Seed: 1,
			},
			Load: loadgen.Load{
				Concurrency: 4,
			},
			Stop: loadgen.Stop{
				Requests: 20,
			},
		},
	}
	out, err := Run(context.Background(), sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	cs, ss := records(t, out)
	if got := len(cs); got != 20 {
		t.Errorf("client records = %d, want 20", got)
	}
	if got := len(ss); got != 20 {
		t.Errorf("server records = %d, want 20", got)
	}
	for _, r := range out.Requests() {
		if r.Err != "" || r.ISL != 32 || r.ServerISL != 32 || r.OSL != 8 {
			t.Errorf("request %s: err=%q isl=%d server=%d osl=%d, want isl 32 = server, osl 8", r.ID, r.Err, r.ISL, r.ServerISL, r.OSL)
			break
		}
	}
	for _, f := range []string{ClientFile, ServerFile, MetricsFile, ScenarioFile, VerdictsFile, "report.html", "profile_export_aiperf.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("artifact %s: %v", f, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, ScenarioFile))
	if strings.Contains(string(b), "sk-secret") {
		t.Errorf("%s contains the API key:\n%s", ScenarioFile, b)
	}
	// The artifacts load back into the same requests.
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Requests()) != 20 || back.Scenario.Name != "smoke" || !back.Mocked {
		t.Errorf("Load: %d requests, name %q, mocked %v", len(back.Requests()), back.Scenario.Name, back.Mocked)
	}
	for _, v := range out.Check() {
		if !v.Pass {
			t.Errorf("default objectives failed on a clean run:\n%s", v)
		}
	}
}

func TestRunInvalid(t *testing.T) {
	_, err := Run(context.Background(), Scenario{Mock: mockserver.Config{Fast: true}, Config: loadgen.Config{Load: loadgen.Load{Concurrency: -1}}}, "")
	if !errors.Is(err, ErrInvalidScenario) {
		t.Errorf("Run(concurrency -1) = %v, want ErrInvalidScenario", err)
	}
	_, err = Run(context.Background(), Scenario{Tokenizer: "no-such-tokenizer-xyz", Mock: mockserver.Config{Fast: true}}, "")
	if err == nil || !strings.Contains(err.Error(), "tokenizer") {
		t.Errorf("Run(bad tokenizer) = %v, want a tokenizer error", err)
	}
}

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
