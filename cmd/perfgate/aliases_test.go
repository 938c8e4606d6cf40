package main

import (
	"encoding/json"
	"flag"
	"io"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// scenarioOf maps profile arguments onto a Scenario, as cmdProfile does.
func scenarioOf(t *testing.T, args ...string) scenario.Scenario {
	t.Helper()
	var f profileFlags
	var o profileOpts
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	registerProfileFlags(fs, &f, &o)
	if err := fs.Parse(append([]string{"--mock"}, args...)); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	sc, err := buildScenario(fs, &f, &o)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return sc
}

func asJSON(t *testing.T, sc scenario.Scenario) string {
	b, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAIPerfAliases: every AIPerf alias gives the same Scenario as perfgate's own
// flag (or, for a mapping, sets the field it names), and the field really changed.
func TestAIPerfAliases(t *testing.T) {
	base := asJSON(t, scenarioOf(t))
	same := [][2][]string{
		{{"--arrival-pattern", "gamma", "--request-rate", "5"}, {"--arrival", "gamma", "--request-rate", "5"}},
		{{"--request-rate-mode", "constant", "--request-rate", "5"}, {"--arrival", "constant", "--request-rate", "5"}},
		{{"--arrival-smoothness", "2"}, {"--burstiness", "2"}},
		{{"--vllm-burstiness", "2"}, {"--burstiness", "2"}},
		{{"--num-sessions", "4"}, {"--conversation-num", "4"}},
		{{"-H", "X-A: b"}, {"--header", "X-A: b"}},
		{{"--prefix-prompt-length", "32"}, {"--prompt-prefix-length", "32"}},
		{{"--prompt-prefix-pool-size", "4", "--prompt-prefix-length", "8"}, {"--num-prefix-prompts", "4", "--prompt-prefix-length", "8"}},
		{{"--session-turn-delay-mean", "250", "--session-turn-delay-stddev", "10"}, {"--conversation-turn-delay-mean", "250", "--conversation-turn-delay-stddev", "10"}},
		{{"--request-rate-ramp-duration", "3"}, {"--concurrency-ramp-duration", "3"}},
		{{"--isl-block-size", "64"}, {"--prompt-input-tokens-block-size", "64"}},
	}
	for _, p := range same {
		a, b := asJSON(t, scenarioOf(t, p[0]...)), asJSON(t, scenarioOf(t, p[1]...))
		if a != b {
			t.Errorf("%v and %v differ:\n%s\n%s", p[0], p[1], a, b)
		}
		if a == base {
			t.Errorf("%v changed nothing", p[0])
		}
	}
	for _, tc := range []struct {
		args []string
		ok   func(sc scenario.Scenario) bool
	}{
		{[]string{"--url-strategy", "least_outstanding"}, func(sc scenario.Scenario) bool { return sc.Routing == loadgen.RouteLeastOutstanding }},
		{[]string{"--request-cancellation-rate", "25", "--request-cancellation-delay", "0.5"}, func(sc scenario.Scenario) bool {
			return sc.CancelFraction == 0.25 && sc.CancelAfter == 500*time.Millisecond
		}},
		{[]string{"--concurrency-ramp-duration", "2"}, func(sc scenario.Scenario) bool { return sc.Ramp == 2*time.Second }},
		{[]string{"--warmup-duration", "1.5"}, func(sc scenario.Scenario) bool { return sc.WarmupDuration == 1500*time.Millisecond }},
		{[]string{"--shared-system-prompt-length", "32"}, func(sc scenario.Scenario) bool { return sc.PrefixTokens == 32 }},
		{[]string{"--conversation-turn-delay-mean", "250"}, func(sc scenario.Scenario) bool { return sc.TurnDelay.String() == "fixed:0.25" }},
		{[]string{"--use-legacy-max-tokens"}, func(sc scenario.Scenario) bool { return sc.OSLField == loadgen.OSLMaxTokens }},
		{[]string{"--rankings-passages-mean", "5"}, func(sc scenario.Scenario) bool { return sc.Passages == 5 }},
		{[]string{"--prefill-concurrency", "3"}, func(sc scenario.Scenario) bool { return sc.PrefillConcurrency == 3 }},
		{[]string{"--output-artifact-dir", "x"}, func(sc scenario.Scenario) bool { return true }},
	} {
		if sc := scenarioOf(t, tc.args...); !tc.ok(sc) {
			t.Errorf("%v: scenario %s", tc.args, asJSON(t, sc))
		}
	}
	// Options outside the Scenario: the same value as the original flag.
	for _, p := range [][2]string{{"output-artifact-dir", "artifact-dir"}, {"num-profile-runs", "num-runs"}, {"confidence-level", "confidence"}} {
		var f profileFlags
		var o1, o2 profileOpts
		fs := flag.NewFlagSet("p", flag.ContinueOnError)
		registerProfileFlags(fs, &f, &o1)
		fs.Set(p[0], "3")
		fs2 := flag.NewFlagSet("p", flag.ContinueOnError)
		registerProfileFlags(fs2, &f, &o2)
		fs2.Set(p[1], "3")
		if o1 != o2 {
			t.Errorf("--%s and --%s set different options: %+v, %+v", p[0], p[1], o1, o2)
		}
	}
}
