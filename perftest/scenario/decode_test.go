package scenario

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Every problem of a file is reported at once, each at its FILE:LINE:COL.
func TestReadFileErrors(t *testing.T) {
	_, err := ReadFile("testdata/typos.yaml")
	if !errors.Is(err, ErrInvalidScenario) {
		t.Fatalf("ReadFile(typos.yaml) = %v; want an ErrInvalidScenario", err)
	}
	testutil.Golden(t, "testdata/typos.golden", []byte(err.Error()+"\n"), *update)
	first := strings.Split(err.Error(), "\n")[0]
	if want := `testdata/typos.yaml:2:1: unknown field "concurency" (did you mean "concurrency"?)`; first != want {
		t.Errorf("first line = %s\nwant         %s", first, want)
	}
}

func TestReadFileJSONPositions(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.json")
	os.WriteFile(p, []byte("{\n\t\"name\": \"x\",\n\t\"mock\": {\"ttft_jitter_cv\": \"high\"},\n\t\"endpoint_type\": \"chatt\"\n}\n"), 0o644)
	_, err := ReadFile(p)
	want := p + `:3:29: mock.ttft_jitter_cv: "high": want a number` + "\n" +
		p + `:4:19: endpoint_type "chatt": want chat, completions, embeddings, rankings, rerank, responses, messages, audio_transcription or image_generation`
	if err == nil || err.Error() != want {
		t.Errorf("ReadFile = %v\nwant\n%s", err, want)
	}
	if _, err := Parse([]byte(`{"name": "x",` + "\n" + ` "concurrency": "4"}`)); err == nil || err.Error() != `input:2:17: concurrency: "4": want a number` {
		t.Errorf("Parse = %v", err)
	}
	if _, err := Parse([]byte(`{"name": "x" "y"}`)); err == nil || !strings.HasPrefix(err.Error(), "input: scenario: invalid scenario: 1:") {
		t.Errorf("Parse(bad JSON) = %v; want a positioned syntax error", err)
	}
}

// Durations are text everywhere in a file, loadgen's and the mock's included.
func TestReadFileDurations(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.yaml")
	os.WriteFile(p, []byte("duration: 30s\nramp: 1m\ntimeout: 30s\nidle_timeout: 250ms\nmock: {grace_period: 2s}\nobjectives: {slo: {ttft: 200ms}, bounds: [{metric: ttft, p: 0.99, max_time: 1s}]}\n"), 0o644)
	sc, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Duration != 30*time.Second || sc.Ramp != time.Minute || sc.Timeout != 30*time.Second || sc.IdleTimeout != 250*time.Millisecond ||
		sc.Mock.GracePeriod != 2*time.Second || sc.Objectives.SLO.TTFT != 200*time.Millisecond || sc.Objectives.Bounds[0].MaxTime != time.Second {
		t.Errorf("ReadFile = %+v; durations not as written", sc)
	}
}

func TestNearest(t *testing.T) {
	names := []string{"concurrency", "requests", "rate", "ramp"}
	for in, want := range map[string]string{"concurency": "concurrency", "reqests": "requests", "rte": "rate", "banana": ""} {
		if got := Nearest(in, names); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}

// The JSON a Scenario writes (scenario.json) is a scenario file: durations as text, the
// client's and the mock's included, and it reads back the same.
func TestMarshalIsAScenarioFile(t *testing.T) {
	sc := Scenario{Name: "rt", Config: loadgen.Config{Load: loadgen.Load{Concurrency: 3}, Stop: loadgen.Stop{Duration: 30 * time.Second}}}
	sc.Timeout, sc.IdleTimeout = 30*time.Second, -1
	sc.Mock.GracePeriod = 1500 * time.Millisecond
	sc.Objectives.SLO.TTFT = 200 * time.Millisecond
	b, err := sc.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"name":"rt",`, `"timeout":"30s"`, `"idle_timeout":"-1ns"`, `"grace_period":"1.5s"`, `"duration":"30s"`, `"ttft":"200ms"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("MarshalJSON = %s\nlacks %s", b, want)
		}
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Timeout != sc.Timeout || back.IdleTimeout != -1 || back.Mock.GracePeriod != sc.Mock.GracePeriod || back.Duration != sc.Duration || back.Concurrency != 3 {
		t.Errorf("Parse(MarshalJSON) = %+v; want %+v", back, sc)
	}
}

// json.Unmarshal reads what MarshalJSON writes (shard merges and other programs read
// scenario.json so), and still reads older artifacts whose loadgen durations are
// nanoseconds.
func TestUnmarshalJSONDurations(t *testing.T) {
	sc := Scenario{Name: "u"}
	sc.GracePeriod = 2 * time.Second
	b, _ := json.Marshal(sc)
	var back Scenario
	if err := json.Unmarshal(b, &back); err != nil || back.GracePeriod != 2*time.Second {
		t.Errorf("Unmarshal(%s) = %+v, %v", b, back.Config, err)
	}
	if err := json.Unmarshal([]byte(`{"client":{"grace_period":3000000000}}`), &back); err != nil || back.GracePeriod != 3*time.Second {
		t.Errorf("an old artifact's nanoseconds: %v, %v", back.GracePeriod, err)
	}
}

// TestReadFileMockDurations: the mock's latency terms are durations, and the older
// *_ms numbers of milliseconds still read as them; both spellings at once, or a *_ms
// that is not a number, are errors at their line.
func TestReadFileMockDurations(t *testing.T) {
	dir := t.TempDir()
	read := func(text string) (Scenario, error) {
		p := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return ReadFile(p)
	}
	for _, text := range []string{
		"mock:\n  ttft_per_isl_token: 20us\n  itl_concurrency_lin: 500us\n  ttft_concurrency_lin: 15ms\n  batch: {enabled: true, step: 5ms, decode_token: 100us, prefill_token: 10us}\n",
		"mock:\n  ttft_per_isl_token_ms: 0.02\n  itl_concurrency_lin_ms: 0.5\n  ttft_concurrency_lin_ms: 15\n  batch: {enabled: true, step_ms: 5, decode_token_ms: 0.1, prefill_token_ms: 0.01}\n",
	} {
		sc, err := read(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		m := sc.Mock
		if m.TTFTPerISLToken != 20*time.Microsecond || m.ITLConcurrencyLin != 500*time.Microsecond || m.TTFTConcurrencyLin != 15*time.Millisecond ||
			m.Batch.Step != 5*time.Millisecond || m.Batch.DecodeToken != 100*time.Microsecond || m.Batch.PrefillToken != 10*time.Microsecond {
			t.Errorf("%s: mock = %+v", text, m)
		}
	}
	for text, want := range map[string]string{
		"mock:\n  itl_concurrency_lin_ms: 0.5\n  itl_concurrency_lin: 1ms\n": `s.yaml:2:3: "itl_concurrency_lin_ms" and "itl_concurrency_lin" both set`,
		"mock:\n  batch: {step_ms: fast}\n":                                  `s.yaml:2:20: step_ms: want a number of milliseconds`,
		"mock:\n  itl_concurrency_lin: 5\n":                                  `s.yaml:2:24: mock.itl_concurrency_lin: 5: want Go duration text`,
	} {
		_, err := read(text)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %s", text, err, want)
		}
	}
}
