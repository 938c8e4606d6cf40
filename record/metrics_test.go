package record

import (
	"encoding/json"
	"testing"
)

// TestMetricsReadsOldTotals: a metrics.json written before the totals took AIPerf's
// tags reads with the new keys, and one written now is left alone.
func TestMetricsReadsOldTotals(t *testing.T) {
	for _, c := range []struct {
		name, in             string
		isl, osl, out, reasn float64
	}{
		{"old, no reasoning", `{"scalars":{"total_input_tokens":{"unit":"tokens","value":10},"total_output_tokens":{"unit":"tokens","value":20}}}`, 10, 20, 20, 0},
		{"old, reasoning", `{"scalars":{"total_input_tokens":{"unit":"tokens","value":10},"total_output_tokens":{"unit":"tokens","value":20},"total_reasoning_tokens":{"unit":"tokens","value":5},"total_output_token_count":{"unit":"tokens","value":15}}}`, 10, 20, 15, 5},
		{"new", `{"scalars":{"total_isl":{"unit":"tokens","value":10},"total_osl":{"unit":"tokens","value":20},"total_output_tokens":{"unit":"tokens","value":15},"total_reasoning_tokens":{"unit":"tokens","value":5}}}`, 10, 20, 15, 5},
	} {
		var m Metrics
		if err := json.Unmarshal([]byte(c.in), &m); err != nil {
			t.Fatal(err)
		}
		got := [4]float64{m.Value(MetricTotalISL), m.Value(MetricTotalOSL), m.Value(MetricTotalOutputTokens), m.Value(MetricTotalReasoning)}
		if want := [4]float64{c.isl, c.osl, c.out, c.reasn}; got != want {
			t.Errorf("%s: total isl, osl, output, reasoning = %v, want %v", c.name, got, want)
		}
		if _, ok := m.Scalars["total_input_tokens"]; ok {
			t.Errorf("%s: the old key total_input_tokens is still there", c.name)
		}
	}
	var m Metrics
	if err := json.Unmarshal([]byte(`{"scalars":[]}`), &m); err == nil {
		t.Error("a malformed metrics.json read without error")
	}
}
