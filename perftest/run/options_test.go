package run

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/tokenizer"
)

func fixed(v float64) distribution.Spec {
	return distribution.Spec{Distribution: distribution.Fixed{Value: v}}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestRunOnRecord: OnRecord sees every request, warm-up flagged, one call at a time;
// WithTokenizer's tokenizer is used; WithCommand reaches the manifest.
func TestRunOnRecord(t *testing.T) {
	tok, err := tokenizer.Load("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	var calls, warm, inside, overlap atomic.Int64
	onRec := func(r record.Client) {
		if inside.Add(1) > 1 {
			overlap.Add(1)
		}
		calls.Add(1)
		if r.Warmup {
			warm.Add(1)
		}
		inside.Add(-1)
	}
	dir := t.TempDir()
	sc := scenario.Scenario{
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Target: loadgen.Target{
				API: loadgen.EndpointCompletions,
			},
			Workload: loadgen.Workload{
				ISL:  fixed(16),
				OSL:  fixed(4),
				Seed: 2,
			},
			Load: loadgen.Load{
				Concurrency: 4,
			},
			Stop: loadgen.Stop{
				Requests:       12,
				WarmupRequests: 3,
			},
		},
	}
	out, err := Run(context.Background(), sc, dir, OnRecord(onRec), WithTokenizer(tok), WithCommand("perfgate", "profile"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := records(t, out)
	if got, want := calls.Load(), int64(len(cs)); got != want || got != 15 {
		t.Errorf("OnRecord calls = %d, want %d (= 12 measured + 3 warm-up)", got, want)
	}
	if got := warm.Load(); got != 3 {
		t.Errorf("OnRecord warm-up calls = %d, want 3", got)
	}
	if overlap.Load() != 0 {
		t.Errorf("OnRecord was called concurrently %d times, want never", overlap.Load())
	}
	if out.Interrupted {
		t.Error("Interrupted = true on a complete run")
	}
	var m reportgen.Manifest
	readJSON(t, filepath.Join(dir, reportgen.ManifestFile), &m)
	if strings.Join(m.Command, " ") != "perfgate profile" || m.Tokenizer == nil || m.Tokenizer.Fingerprint != tok.Fingerprint() {
		t.Errorf("manifest command %q, tokenizer %+v; want \"perfgate profile\" and gpt2's fingerprint", m.Command, m.Tokenizer)
	}
	for _, f := range []string{reportgen.AIPerfJSONLFile, reportgen.AIPerfCSVFile, ServerFile} {
		if out.File(f) == "" {
			t.Errorf("Outcome.Files lacks %s: %v", f, out.Files)
		}
	}
	if s := OnRecord(onRec).(interface{ String() string }).String(); !strings.Contains(s, "OnRecord") {
		t.Errorf("OnRecord option prints as %q", s)
	}
}

// TestRunInterrupted: a run whose context is cancelled returns what finished, with
// Interrupted set and no error, and its exports say was_cancelled.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n atomic.Int64
	dir := t.TempDir()
	sc := scenario.Scenario{
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Target: loadgen.Target{
				API: loadgen.EndpointCompletions,
			},
			Workload: loadgen.Workload{
				ISL: fixed(16),
				OSL: fixed(4),
			},
			Load: loadgen.Load{
				Concurrency: 2,
			},
			Stop: loadgen.Stop{
				Requests: 100000,
			},
		},
	}
	out, err := Run(ctx, sc, dir, OnRecord(func(record.Client) {
		if n.Add(1) == 5 {
			cancel()
		}
	}))
	if err != nil {
		t.Fatalf("Run after cancel: %v, want nil (Interrupted)", err)
	}
	cs, _ := records(t, out)
	if !out.Interrupted || len(cs) < 5 || len(cs) >= 100000 {
		t.Errorf("Interrupted = %v with %d records, want true with 5 to 99999", out.Interrupted, len(cs))
	}
	var agg map[string]json.RawMessage
	readJSON(t, filepath.Join(dir, reportgen.AIPerfJSONFile), &agg)
	if got := string(agg["was_cancelled"]); got != "true" {
		t.Errorf("was_cancelled = %s, want true", got)
	}
}

// TestObjectivesFitsAndTokenizer: the length fits and the tokenizer match are
// objectives like the others — checked by Verdicts, written into verdicts.txt — and
// each can fail.
func TestObjectivesFitsAndTokenizer(t *testing.T) {
	dir := t.TempDir()
	sc := scenario.Scenario{
		Mock: mockserver.Config{Fast: true},
		//lint:ignore SA1019 the deprecated structured objectives must still be checked, as the rules they mean
		Objectives: scenario.Objectives{TokenizerMatch: true, ISLFit: fixed(32), OSLFit: fixed(500), Alpha: 0.05},
		Config: loadgen.Config{
			Target: loadgen.Target{
				API: loadgen.EndpointCompletions,
			},
			Workload: loadgen.Workload{
				ISL:       fixed(32),
				OSL:       fixed(8),
				IgnoreEOS: true,
				Seed:      1,
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
	vs := out.Verdicts()
	var got []string
	for _, v := range vs {
		got = append(got, status(v)+" "+v.Summary)
	}
	want := []string{"PASS", "PASS tokenizer match", "PASS ISL", "FAIL OSL"} // error rate first
	if len(got) != len(want) {
		t.Fatalf("verdicts = %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("verdict %d = %q, want it to start with %q", i, got[i], want[i])
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, VerdictsFile))
	if err != nil || !strings.Contains(string(b), "FAIL OSL") || !strings.Contains(string(b), "does not fit") {
		t.Errorf("%s (%v) lacks the failed OSL fit:\n%s", VerdictsFile, err, b)
	}
	// A server that counts differently fails the tokenizer match.
	cs, ss := records(t, out)
	ss[0].ISL += 3
	for i := range cs {
		cs[i].UsagePromptTokens = -1
	}
	edited := &Outcome{Scenario: out.Scenario, Client: cs, Server: ss}
	v := out.Scenario.Objectives.Check(edited.Requests(), out.Metrics)
	if last := v[len(v)-1]; last.Pass {
		t.Errorf("tokenizer match passed with a server count off by 3:\n%s", last)
	}
	// No objectives at all (error-rate gate off): no verdicts, no verdicts.txt.
	dir2 := t.TempDir()
	sc.Objectives = scenario.Objectives{MaxErrorRate: -1}
	if out, err = Run(context.Background(), sc, dir2); err != nil {
		t.Fatal(err)
	}
	if vs := out.Check(); len(vs) != 0 {
		t.Errorf("Check() with no objectives = %d verdicts, want 0", len(vs))
	}
	if _, err := os.Stat(filepath.Join(dir2, VerdictsFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s written with no objectives (stat: %v)", VerdictsFile, err)
	}
}
