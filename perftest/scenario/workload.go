package scenario

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/gate"
)

// Difference is one workload setting on which two scenarios differ ([gate.Difference]).
type Difference = gate.Difference

// notTarget are the mock settings that do not say what answered.
var notTarget = []string{"host", "port", "record_file", "discard_records", "record_queue", "api_key", "tokenizer"}

// Workload returns the settings that decide what a run of sc sent, defaults filled in,
// named as in scenario files: the tokenizer; the API, model and streaming; the prompts
// (isl, osl, ignore_eos, corpus, prefix_tokens, system_prompt, turns, input_file) and
// the seed that draws them; and the load (concurrency, rate, arrival, burstiness,
// ramp, schedule). It is the workload's identity: two runs with the same Workload sent
// the same requests. Where they were sent (the URLs, a mock's host and port) and what
// answered (the mock's configuration) are not in it — comparing one server build with
// another, on whatever port CI gave it, is what a regression gate is for — but in
// [Scenario.Target]. The request count and the duration are not in it either: they
// change the sample's size, not the workload, nor is a per-run cache-bust salt (Validity).
func (sc Scenario) Workload() [][2]string {
	d := sc.WithDefaults()
	c := d.Config
	opt := func(v any) string {
		s := fmt.Sprint(v)
		if s == "0" || s == "false" || s == "0s" {
			return ""
		}
		return s
	}
	w := [][2]string{
		{"tokenizer", d.Tokenizer},
		{"endpoint_type", string(cmp.Or(c.API, loadgen.EndpointChat))},
		{"model", c.Model},
		{"stream", fmt.Sprint(c.Streams())},
		{"isl", c.InputLength().String()},
		{"osl", c.OSL.String()},
		{"ignore_eos", opt(c.IgnoreEOS)},
		{"corpus", cmp.Or(c.Corpus, loadgen.CorpusShakespeare)},
		{"prefix_tokens", opt(c.PrefixTokens)},
		{"system_prompt", c.SystemPrompt},
		{"turns", c.Turns.String()},
		{"input_file", c.InputFile},
		{"seed", fmt.Sprint(c.Seed)},
		{"concurrency", fmt.Sprint(map[bool]int{true: max(c.Concurrency, 1), false: c.Concurrency}[c.Rate == 0 && len(c.RateSeries) == 0])},
		{"rate", opt(c.Rate)},
	}
	if len(c.ModelNames) > 0 { // a model mix (only then, so older baselines' identities stay equal)
		w = append(w, [2]string{"model_names", strings.Join(c.ModelNames, ",")},
			[2]string{"model_selection_strategy", cmp.Or(c.ModelSelection, loadgen.ModelRoundRobin)}, [2]string{"model_weights", strings.Trim(fmt.Sprint(c.ModelWeights), "[]")})
	}
	if len(c.RateSeries) > 0 {
		w = append(w, [2]string{"request_rate_series", c.RateSeries.String()})
	}
	if c.Rate > 0 || len(c.RateSeries) > 0 {
		w = append(w, [2]string{"arrival", cmp.Or(c.Arrival, loadgen.ArrivalPoisson)}, [2]string{"burstiness", opt(c.Burstiness)})
	}
	w = append(w, [2]string{"ramp", opt(c.Ramp)}, [2]string{"schedule", opt(c.Schedule)})
	return append(w, sc.classesWorkload()...) // a run of classes: each class's too
}

// Target returns where a run of sc sends its requests and what answers them, named as
// in scenario files: "urls" (or "mock" for the in-process mock server) and, for the
// mock, every setting of its configuration but where it listens and records
// ("mock.ttft_ms", …). It is shown beside a regression verdict, and is not part of the
// workload's identity ([Scenario.Workload]).
func (sc Scenario) Target() [][2]string {
	d := sc.WithDefaults()
	if d.Server != nil {
		return [][2]string{{"urls", strings.Join(d.URLs, ", ")}, {"server", d.Server.String()}}
	}
	if !d.Mocked() {
		return [][2]string{{"urls", strings.Join(d.URLs, ", ")}}
	}
	t := [][2]string{{"urls", "mock"}}
	var m map[string]json.RawMessage
	if b, err := json.Marshal(d.Mock); err == nil && json.Unmarshal(b, &m) == nil {
		keys := make([]string, 0, len(m))
		for k := range m {
			if !slices.Contains(notTarget, k) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			v := string(m[k])
			var str string
			if json.Unmarshal(m[k], &str) == nil {
				v = str // "fixed:9", not "\"fixed:9\""
			}
			t = append(t, [2]string{"mock." + k, v})
		}
	}
	return t
}

// DiffTarget returns the target settings ([Scenario.Target]) on which baseline and
// current differ: where the requests went and what answered, for display beside a
// verdict.
func DiffTarget(baseline, current Scenario) []Difference {
	return gate.Diff(baseline.Target(), current.Target(), nil)
}

// DiffWorkload returns the workload settings ([Scenario.Workload]) on which baseline
// and current differ, in Workload's order, leaving out those named in ignore: a field
// ("concurrency") or a group ("mock" = every mock.* field).
func DiffWorkload(baseline, current Scenario, ignore ...string) []Difference {
	return gate.Diff(baseline.Workload(), current.Workload(), ignore)
}
