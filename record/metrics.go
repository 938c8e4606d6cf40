package record

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Stat summarises one metric's distribution. Percentiles use numpy's default
// ("linear") interpolation. All fields are in Unit.
type Stat struct {
	Unit  string  `json:"unit"`
	Count int     `json:"count"`
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Std   float64 `json:"std"` // population standard deviation (numpy std, ddof=0)
	P1    float64 `json:"p1"`
	P5    float64 `json:"p5"`
	P10   float64 `json:"p10"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
}

// StatPercentiles lists the percentiles a [Stat] carries, as fractions in [0,1].
var StatPercentiles = []float64{0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99}

// Quantile returns the stat's percentile for p in StatPercentiles (0.5 → P50) and
// whether p is one of them; p = 0 and 1 give Min and Max.
func (s Stat) Quantile(p float64) (float64, bool) {
	switch p {
	case 0:
		return s.Min, true
	case 0.01:
		return s.P1, true
	case 0.05:
		return s.P5, true
	case 0.10:
		return s.P10, true
	case 0.25:
		return s.P25, true
	case 0.50:
		return s.P50, true
	case 0.75:
		return s.P75, true
	case 0.90:
		return s.P90, true
	case 0.95:
		return s.P95, true
	case 0.99:
		return s.P99, true
	case 1:
		return s.Max, true
	}
	return 0, false
}

// String formats the stat on one line, e.g. "avg=12.1 p50=11.9 p99=20.3 max=25 ms (n=100)".
func (s Stat) String() string {
	return fmt.Sprintf("avg=%.4g std=%.4g min=%.4g p50=%.4g p90=%.4g p99=%.4g max=%.4g %s (n=%d)",
		s.Avg, s.Std, s.Min, s.P50, s.P90, s.P99, s.Max, s.Unit, s.Count)
}

// Scalar is an aggregate metric with one value (throughputs, counts, duration).
type Scalar struct {
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
}

// Metrics is the summary of a run: distributions per metric name and aggregate scalars,
// both keyed by the Metric… names. The zero value is empty.
type Metrics struct {
	Stats   map[string]Stat   `json:"stats"`
	Scalars map[string]Scalar `json:"scalars"`
	// Errors counts failed non-warmup requests by error kind.
	Errors map[string]int `json:"errors,omitempty"`
	// Warmup is the number of warmup records left out.
	Warmup int `json:"warmup_count"`
	// ISLInexact counts requests whose synthetic prompt could not hit the sampled length.
	ISLInexact int `json:"isl_inexact_count,omitempty"`
	// OSLSource says where OSL came from: "client" (tokenizer count) or "usage".
	OSLSource string `json:"osl_source,omitempty"`
	// ISLSource says where ISL came from: "client" (tokenizer count, the default and
	// omitted) or "usage" (usage.prompt_tokens, with --use-server-token-count).
	ISLSource string `json:"isl_source,omitempty"`
	// SLO is the goodput SLO used (metric name → max value in the metric's unit).
	SLO map[string]float64 `json:"slo,omitempty"`
	// Models breaks the metrics down by model, for a run that spread its requests
	// over several (a model mix): each model's requests alone, summarised as the run's
	// are. Nil for a run of one model.
	Models map[string]Metrics `json:"models,omitempty"`
	// TTFTByTurn is the time to first token as a function of the turn index: the
	// successful streamed requests of multi-turn conversations and agent jobs, by their
	// turn in their session, one entry per turn index (in order, those with requests);
	// at most [TTFTTurns] entries, the last pooling every later turn. Nil for a run
	// of single-turn requests.
	TTFTByTurn []TurnTTFT `json:"ttft_by_turn,omitempty"`
	// Classes breaks the metrics down by traffic class, for a run of several (a
	// scenario's "classes:"; docs/classes.md): each class's requests alone, summarised
	// as the run's are. Nil for a run of one class.
	Classes map[string]Metrics `json:"classes,omitempty"`
}

// TTFTTurns bounds [Metrics.TTFTByTurn]: turns 0 to TTFTTurns−2 have an entry each,
// and the requests of every later turn share the last (AndLater), so its size does
// not grow with a session's length.
const TTFTTurns = 64

// TurnTTFT summarises the TTFT (ms) of the requests at one turn index of their
// session: their count and median and 99th percentile, each within
// metric.SketchRelativeError (0.1%) of numpy's linear quantile of the values.
type TurnTTFT struct {
	Turn int `json:"turn"`
	// AndLater marks the entry of turn TTFTTurns−1, which pools every turn from it on.
	AndLater bool    `json:"and_later,omitempty"`
	Count    int     `json:"count"`
	P50      float64 `json:"p50"`
	P99      float64 `json:"p99"`
}

// UnmarshalJSON reads a metrics.json. A file written before the run totals took
// AIPerf's tags (perfgate before v0.2) is read as if written now: its
// total_input_tokens is total_isl, its total_output_tokens (the sum of OSL,
// reasoning included) is total_osl, and its total_output_token_count is
// total_output_tokens (OSL without reasoning; without reasoning, total_osl). The shim
// goes in v0.3.
func (m *Metrics) UnmarshalJSON(b []byte) error {
	type plain Metrics
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*m = Metrics(p)
	if old, ok := m.Scalars[legacyTotalInput]; ok {
		delete(m.Scalars, legacyTotalInput)
		m.Scalars[MetricTotalISL] = old
		osl, hasOSL := m.Scalars[MetricTotalOutputTokens]
		if hasOSL {
			m.Scalars[MetricTotalOSL] = osl
		}
		if out, ok := m.Scalars[legacyTotalOutputCount]; ok {
			delete(m.Scalars, legacyTotalOutputCount)
			m.Scalars[MetricTotalOutputTokens] = out
		} else if hasOSL {
			m.Scalars[MetricTotalOutputTokens] = Scalar{Unit: osl.Unit, Value: osl.Value - m.Scalars[MetricTotalReasoning].Value}
		}
	}
	return nil
}

// The run totals' keys before they took AIPerf's tags.
const (
	legacyTotalInput       = "total_input_tokens"
	legacyTotalOutputCount = "total_output_token_count"
)

// Stat returns the named distribution and whether it is present.
func (m Metrics) Stat(name string) (Stat, bool) {
	s, ok := m.Stats[name]
	return s, ok
}

// Value returns the named scalar's value (0 if absent).
func (m Metrics) Value(name string) float64 { return m.Scalars[name].Value }

// String renders the metrics as an aligned multi-line table, stats then scalars,
// each sorted by name.
func (m Metrics) String() string {
	var b strings.Builder
	names := make([]string, 0, len(m.Stats))
	for n := range m.Stats {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%-34s %s\n", n, m.Stats[n])
	}
	names = names[:0]
	for n := range m.Scalars {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := m.Scalars[n]
		fmt.Fprintf(&b, "%-34s %.6g %s\n", n, s.Value, s.Unit)
	}
	return b.String()
}
