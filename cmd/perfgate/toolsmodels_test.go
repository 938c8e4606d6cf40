package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelMixBadInput: a bad model mix is refused before any request (exit 2) with
// an error naming the flag or field.
func TestModelMixBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model-names", "a,b", "--model-selection-strategy", "fastest"}, `--model-selection-strategy "fastest": want round_robin, random or weighted`},
		{[]string{"--model-names", "a,b", "--model-weights", "3,x"}, `--model-weights "3,x": "x" is not a weight`},
		{[]string{"--model-names", "a,b", "--model-weights", "3,-1"}, `--model-weights "3,-1": "-1" is not a weight`},
		{[]string{"--model-names", "a,b", "--model-weights", "3"}, "model_weights: 1 weights for 2 model_names"},
		{[]string{"--model-names", "a,b", "--model-selection-strategy", "weighted"}, "model_weights: 0 weights for 2 model_names"},
		{[]string{"--model-names", "a,,b"}, `--model-names "a,,b": an empty name`},
		{[]string{"--model-names", "a,a"}, `model_names: "a" is listed twice`},
	} {
		code, out, errOut := cli(t, append([]string{"profile", "--mock", "--request-count", "2"}, c.args...)...)
		if code != ExitInvalidConfig || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q\n%s", c.args, code, errOut, ExitInvalidConfig, c.want, out)
		}
	}
}

// TestScopedRuleNoRequests: a rule scoped to a model the run never sent to fails
// (exit 99), saying so, rather than passing on no data.
func TestScopedRuleNoRequests(t *testing.T) {
	// No --model-names: the models are known only from the records.
	code, out, errOut := cli(t, "profile", "--mock", "--request-count", "8", "--osl", "4",
		"--artifact-dir", filepath.Join(t.TempDir(), "run"), "--assert", "latency_p50{model=c}<=10s")
	if code != ExitAssertFailed || !strings.Contains(out+errOut, `no request of the run was sent to model "c"`) {
		t.Errorf("exit %d; want %d and the reason\nstdout:\n%s\nstderr:\n%s", code, ExitAssertFailed, out, errOut)
	}
}

// TestProfileModelMix: profile --mock with three model names sends round robin, and
// the client and the mock record each request's model.
func TestProfileModelMix(t *testing.T) {
	art := filepath.Join(t.TempDir(), "run")
	code, out, errOut := cli(t, "profile", "--mock", "--model-names", "base,lora-a,lora-b", "--request-count", "15",
		"--concurrency", "3", "--osl", "4", "--artifact-dir", art, "--assert", "latency_p50{model=lora-a}<=10s", "--assert", "error_rate{model=base}<=0")
	if code != ExitOK || !strings.Contains(out, "latency_p50{model=lora-a}<=10s") {
		t.Fatalf("exit %d; want 0 and the scoped rule's verdict\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	names := []string{"base", "lora-a", "lora-b"}
	count := func(file string, model func(map[string]any) string) map[string]int {
		f, err := os.Open(filepath.Join(art, file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		n := map[string]int{}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r map[string]any
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			n[model(r)]++
		}
		return n
	}
	client := count("client.jsonl", func(r map[string]any) string {
		idx := int(r["index"].(float64))
		if m := r["model"].(string); m != names[idx%3] {
			t.Errorf("client record %d: model %s; want %s", idx, m, names[idx%3])
		}
		return r["model"].(string)
	})
	server := count("server.jsonl", func(r map[string]any) string { m, _ := r["model"].(string); return m })
	for _, m := range names {
		if client[m] != 5 || server[m] != 5 {
			t.Errorf("model %s: %d client and %d server records; want 5 and 5 (client %v, server %v)", m, client[m], server[m], client, server)
		}
	}
	// metrics.json breaks the metrics down by model.
	var met struct {
		Scalars map[string]struct{ Value float64 }
		Models  map[string]struct {
			Scalars map[string]struct{ Value float64 }
			Stats   map[string]struct{ Count int }
		}
	}
	readJSON(t, filepath.Join(art, "metrics.json"), &met)
	if met.Scalars["request_count"].Value != 15 || len(met.Models) != 3 {
		t.Fatalf("metrics.json: request_count %v, %d model sections; want 15 and 3", met.Scalars["request_count"].Value, len(met.Models))
	}
	for _, m := range names {
		if s := met.Models[m]; s.Scalars["request_count"].Value != 5 || s.Stats["time_to_first_token"].Count != 5 {
			t.Errorf("metrics.json models[%s] = %+v; want 5 requests with TTFT", m, s)
		}
	}
}

// TestProfileToolCalls: profile --mock with tools, streamed and whole, single and
// multi-turn with the tool results sent back: every answer is a tool call the client
// parses (counted in OSL as the mock counts it: tokenizer_match), streams record the
// time to the first tool-call token, and a rule on it is checked.
func TestProfileToolCalls(t *testing.T) {
	for _, c := range []struct {
		name   string
		extra  []string
		turns  int
		stream bool
	}{
		{"stream", []string{"--assert", "ttftc_p50<=10s"}, 1, true},
		{"whole", []string{"--streaming=false"}, 1, false},
		{"multi-turn results", []string{"--conversation-turn-mean", "3", "--tool-results"}, 3, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			art := filepath.Join(t.TempDir(), "run")
			args := append([]string{"profile", "--mock", "--tools", "3", "--tool-choice", "required", "--request-count", "12",
				"--concurrency", "2", "--osl", "16", "--artifact-dir", art, "--assert", "tokenizer_match", "--assert", "error_rate<=0"}, c.extra...)
			code, out, errOut := cli(t, args...)
			if code != ExitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			recs := readRecords[map[string]any](t, filepath.Join(art, "client.jsonl"))
			server := readRecords[map[string]any](t, filepath.Join(art, "server.jsonl"))
			if len(recs) != 12 || len(server) != 12 {
				t.Fatalf("%d client and %d server records; want 12 each", len(recs), len(server))
			}
			for _, r := range recs {
				if r["tool_calls"] != 1.0 || r["finish_reason"] != "tool_calls" || r["tool_call_tokens"] != r["osl"] {
					t.Errorf("record %v: want 1 tool call, finish tool_calls, tool_call_tokens = osl", r)
				}
				if _, ok := r["first_tool_call"]; ok != c.stream {
					t.Errorf("record %v: first_tool_call recorded %v; want it for streams only", r["index"], ok)
				}
			}
			for _, s := range server {
				if s["tool_call"] == nil || !strings.HasPrefix(s["tool_call"].(string), "tool_") {
					t.Errorf("server record %v: want a tool_call of one of the synthetic tools", s)
				}
			}
			var m struct {
				Stats map[string]struct{ Count int }
			}
			readJSON(t, filepath.Join(art, "metrics.json"), &m)
			if n := m.Stats["tool_call_token_count"].Count; n != 12 {
				t.Errorf("metrics.json: tool_call_token_count over %d requests; want 12", n)
			}
			if c.turns > 1 && !strings.Contains(out, "PASS tokenizer match") {
				t.Errorf("the tool-result turns' input was not counted alike by client and mock:\n%s", out)
			}
		})
	}
}

// TestToolsBadInput: bad tool settings are refused before any request (exit 2), each
// error naming the flag or field.
func TestToolsBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(bad, []byte(`{"not": "a list"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tools", "2", "--tool-choice", "sometimes"}, `tool_choice "sometimes": want auto, required, none or function`},
		{[]string{"--tools", "2", "--tool-choice", "auto:-1"}, `tool_choice "auto:-1": the weight "-1" is not a number >= 0`},
		{[]string{"--tool-choice", "required"}, `tool_choice "required" needs tools or tools_file`},
		{[]string{"--tool-results"}, "tool_results needs tools or tools_file"},
		{[]string{"--tools", "-1"}, "tools -1: want 0 (none) to 1024"},
		{[]string{"--tools", "2", "--endpoint-type", "completions"}, "tools are sent with chat requests only"},
		{[]string{"--tools-file", bad}, "tools_file " + bad + ": want a JSON array of function tools"},
		{[]string{"--tools-file", bad + ".missing"}, "tools_file:"},
	} {
		code, out, errOut := cli(t, append([]string{"profile", "--mock", "--request-count", "2"}, c.args...)...)
		if code != ExitInvalidConfig || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q\n%s", c.args, code, errOut, ExitInvalidConfig, c.want, out)
		}
	}
}

// TestScopedRuleValidation: a scoped rule for a model the run does not name, or whose
// quantile the model's share of the requests cannot support, is refused before the
// run (exit 2) saying which.
func TestScopedRuleValidation(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model-names", "a,b", "--request-count", "400", "--assert", "ttft_p50{model=c}<=1s"}, `is scoped to model "c", which the run does not send to (models: a, b)`},
		{[]string{"--model-names", "a,b", "--request-count", "400", "--assert", "ttft_p99{model=b}<=1s"}, "needs at least 299 measured requests for a 95% bound; the run has 200 sent to model b (expected)"},
		{[]string{"--model-names", "a,b", "--model-weights", "9,1", "--request-count", "400", "--assert", "ttft_p95{model=b}<=1s"}, "the run has 40 sent to model b (expected)"},
	} {
		code, out, errOut := cli(t, append([]string{"profile", "--mock"}, c.args...)...)
		if code != ExitInvalidConfig || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q\n%s", c.args, code, errOut, ExitInvalidConfig, c.want, out)
		}
	}
}
