package gate

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/record"
)

// RunStatsFile is the file a run's [RunStats] are written into, beside its records
// (by package run's Run).
const RunStatsFile = "runstats.json"

// A RunStat is one run-level statistic a regression gate compares across runs: a
// quantile of a per-request metric over the run's measured window (warm-up left out),
// or a run-wide rate or fraction.
type RunStat struct {
	// Name is the key in [RunStats.Stats] and in rules: "ttft_p50", "output_tps".
	Name string
	// Label names it in messages: "TTFT p50".
	Label string
	// Unit is the unit of its values (times in seconds).
	Unit check.Unit
	// HigherIsBetter is set for throughputs and the goodput fraction.
	HigherIsBetter bool
	// Primary statistics can fail a regression gate by default (their alphas share
	// the family alpha); the others are reported, and fail only when named.
	Primary bool
	// Metric is the catalogue metric (record.Metric…) it comes from ("" for the goodput
	// fraction, counted from the requests), and Quantile the quantile of that per-request metric (0 for
	// a run-wide scalar such as a throughput).
	Metric   string
	Quantile float64
}

// RunStatList returns every run-level statistic runs record, derived from package
// metric's catalogue: each [metric.PerRequest] metric gives its p50, p90 and p99
// ("ttft_p50": the metric's rule name and the quantile), each [metric.PerRun] metric is
// itself a statistic (by its name, "output_token_throughput", except the two named
// before the derivation: output_tps and request_tps), and the goodput fraction, which
// the catalogue does not hold (it counts the requests against the scenario's SLO), is
// the one statistic listed by hand ([goodputFraction]). A metric that sets
// [metric.Def.NoRunStat] gives none; a metric added to the catalogue ([metric.Extend])
// gives its statistics with no other edit.
//
// Order: the primary statistics ([primaryStats]) first, then each quantile's block
// (p50, p90, p99) with TTFT, ITL and request latency leading and the other per-request
// metrics in catalogue order, then the run-level metrics in catalogue order, then the
// goodput fraction. For the built-in catalogue that is TTFT, ITL and request latency at
// p50, output throughput, the same three at p90 and p99, request throughput, and the
// goodput fraction (when the scenario has an SLO).
func RunStatList() []RunStat {
	defs := metric.Catalogue()
	var all []RunStat
	for _, q := range runStatQuantiles {
		for _, d := range leadFirst(defs) {
			if d.Kind != metric.PerRequest || !d.IsRunStat() {
				continue
			}
			all = append(all, RunStat{Name: d.RuleName() + "_" + q.name, Label: d.VerdictLabel() + " " + q.name,
				Unit: check.UnitOf(d), HigherIsBetter: d.Better == metric.Higher, Metric: d.Name, Quantile: q.p})
		}
	}
	for _, d := range defs {
		if d.Kind != metric.PerRun || !d.IsRunStat() {
			continue
		}
		name := d.Name
		if n, ok := runStatNames[d.Name]; ok {
			name = n
		}
		all = append(all, RunStat{Name: name, Label: d.RunLabel(), Unit: check.UnitOf(d), HigherIsBetter: d.Better == metric.Higher, Metric: d.Name})
	}
	all = append(all, goodputFraction)
	l := make([]RunStat, 0, len(all))
	for _, n := range primaryStats {
		if i := slices.IndexFunc(all, func(s RunStat) bool { return s.Name == n }); i >= 0 {
			s := all[i]
			s.Primary = true
			l = append(l, s)
		}
	}
	for _, s := range all {
		if !slices.Contains(primaryStats, s.Name) {
			l = append(l, s)
		}
	}
	return l
}

// runStatQuantiles are the quantiles each per-request metric gives as run statistics.
var runStatQuantiles = []struct {
	name string
	p    float64
}{{"p50", 0.50}, {"p90", 0.90}, {"p99", 0.99}}

// primaryStats are the statistics a regression gate fails on by default (their alphas
// share the family alpha), in report order; the others are reported, and fail only
// when named.
var primaryStats = []string{"ttft_p50", "itl_p50", "latency_p50", "output_tps"}

// leadMetrics are the per-request metrics each quantile's block of statistics starts with.
var leadMetrics = []string{record.MetricTTFT, record.MetricITL, record.MetricRequestLatency}

// runStatNames are the statistics' names of the run-level metrics that had a name in
// runs.json before the statistics were derived from the catalogue.
var runStatNames = map[string]string{
	record.MetricOutputTokenThroughput: "output_tps",
	record.MetricRequestThroughput:     "request_tps",
}

// goodputFraction is the fraction of requests meeting the goodput SLO: the one run
// statistic the catalogue does not define (its goodput is a rate, requests/s, while
// the gate compares the fraction, counted from the requests as check.Goodput does).
var goodputFraction = RunStat{Name: "goodput_fraction", Label: "goodput fraction", Unit: check.Fraction, HigherIsBetter: true}

// leadFirst returns defs with the [leadMetrics] first, in that order, then the rest in
// catalogue order.
func leadFirst(defs []metric.Def) []metric.Def {
	out := make([]metric.Def, 0, len(defs))
	for _, n := range leadMetrics {
		if i := slices.IndexFunc(defs, func(d metric.Def) bool { return d.Name == n }); i >= 0 {
			out = append(out, defs[i])
		}
	}
	for _, d := range defs {
		if !slices.Contains(leadMetrics, d.Name) {
			out = append(out, d)
		}
	}
	return out
}

// LookupRunStat returns the run-level statistic named name ("ttft_p50"), scoped
// ones included ("ttft_p99{class=batch}": [RunStat.Scoped]), and whether there is one.
func LookupRunStat(name string) (RunStat, bool) {
	base, sp, ok := check.CutScope(name)
	if !ok {
		return RunStat{}, false
	}
	for _, s := range RunStatList() {
		if s.Name == base {
			return s.Scoped(sp), true
		}
	}
	return RunStat{}, false
}

// Scoped returns s over one part of the run: a traffic class's requests alone, named
// "ttft_p99{class=batch}" and labelled "TTFT p99 {class=batch}" (sp's [check.Scope],
// the one scope mechanism rules use too). A run of several classes records each
// class's statistics beside the run's (package run's Outcome.RunStats), and a
// gate compares every one both sides have, each class's primary statistics gating as
// the run's do. The zero Scope gives s.
func (s RunStat) Scoped(sp check.Scope) RunStat {
	if sp.IsZero() {
		return s
	}
	s.Name, s.Label = sp.Named(s.Name), s.Label+" "+sp.String()
	return s
}

// scopedStats returns [RunStatList], then the same list scoped to each part of the
// run (a class: "ttft_p50{class=chat}") that a run of the series has statistics of,
// scopes in name order.
func scopedStats(series ...*Series) []RunStat {
	list := RunStatList()
	seen := map[check.Scope]bool{}
	for _, sr := range series {
		for _, r := range sr.Runs {
			for name := range r.Stats {
				if _, sp, ok := check.CutScope(name); ok && !sp.IsZero() {
					seen[sp] = true
				}
			}
		}
	}
	scopes := slices.SortedFunc(maps.Keys(seen), func(a, b check.Scope) int {
		return strings.Compare(a.String(), b.String())
	})
	out := list
	for _, sp := range scopes {
		for _, s := range list {
			out = append(out, s.Scoped(sp))
		}
	}
	return out
}

// RunStatNames lists the names of [RunStatList], for messages.
func RunStatNames() string {
	var ns []string
	for _, s := range RunStatList() {
		ns = append(ns, s.Name)
	}
	return strings.Join(ns, ", ")
}

// RunStats are one run's run-level statistics over its measured window, keyed by
// [RunStat] name ("ttft_p50", "output_tps", …): the unit of replication of a
// regression gate, which compares K such runs with K others. A statistic the run
// cannot give (no request completed, no goodput SLO) is absent.
type RunStats struct {
	// Run is the run's number in its series (1, 2, …; 0 for a run on its own).
	Run int `json:"run"`
	// Session identifies the session the run was measured in: one RunSeries (its
	// Extends in the same process included), one `perfgate profile --num-profile-runs K`,
	// one history result. Runs of one session share its offset (the machine, the day,
	// the server's state); a regression gate measures how far sessions wander from a
	// baseline of several ([Series.AppendSession]). "" (a run recorded before sessions
	// were kept) counts as one session with the rest of its series' unlabelled runs.
	Session string `json:"session,omitempty"`
	// Seed is the workload's seed, and CacheBust whether each prompt started with the
	// run's own salt (Validity.CacheBust).
	Seed      uint64 `json:"seed"`
	CacheBust bool   `json:"cache_bust,omitempty"`
	// Requests and Errors count the measured requests that succeeded and failed.
	Requests int `json:"requests"`
	Errors   int `json:"errors"`
	// Stats maps a statistic's name to its value, in its [RunStat.Unit] (seconds,
	// tokens/s, requests/s, a fraction).
	Stats map[string]float64 `json:"stats"`
	// Target is where the requests went ("the in-process mock server" or the URLs)
	// and Model the model asked for: shown beside a verdict, never part of the
	// workload's identity.
	Target string `json:"target,omitempty"`
	Model  string `json:"model,omitempty"`
}

// MaxRunStat is the largest value a run statistic may have, in its unit: 10^12
// seconds is over 30,000 years, and 10^12 tokens or requests a second is far past any
// server. The bound is there for the arithmetic done on values read from files: a
// history's change-point test raises them to the fourth power (Welch's degrees of
// freedom), which overflows to +Inf from about 1e77 on, and a mean of two values of
// 1e308 is already +Inf; at 1e12 those stay far inside float64's range.
const MaxRunStat = 1e12

// CheckRunStat returns why v cannot be the value of the run statistic name, or nil.
// Every statistic perfgate computes is a finite number from 0 to [MaxRunStat] (a
// latency in seconds, a throughput) and a fraction is at most 1; a statistic perfgate
// does not define is held to the same bounds. What it reads from a file (runs.json,
// runstats.json) is checked so.
func CheckRunStat(name string, v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%v: want a finite number", v)
	case v < 0:
		return fmt.Errorf("%v: want a number >= 0", v)
	case v > MaxRunStat:
		return fmt.Errorf("%v: want at most %v", v, MaxRunStat)
	}
	if st, ok := LookupRunStat(name); ok && st.Unit == check.Fraction && v > 1 {
		return fmt.Errorf("%v: want a fraction from 0 to 1", v)
	}
	return nil
}

// checkStats checks every statistic of stats ([CheckRunStat]), in name order; the
// error names field.NAME, field being where stats is in its file ("runs[1].stats").
func checkStats(stats map[string]float64, field string) error {
	for _, name := range slices.Sorted(maps.Keys(stats)) {
		if err := CheckRunStat(name, stats[name]); err != nil {
			return fmt.Errorf("%s.%s: %w", field, name, err)
		}
	}
	return nil
}

func cloneStats(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ReadRunStats reads the [RunStatsFile] in a run's directory; a directory without one
// (a run recorded before run statistics were kept) gives an error wrapping
// fs.ErrNotExist (package run then computes them from the records).
func ReadRunStats(dir string) (RunStats, error) {
	var rs RunStats
	b, err := os.ReadFile(filepath.Join(dir, RunStatsFile))
	if err != nil {
		return rs, fmt.Errorf("scenario: run stats: %w", err)
	}
	if err := json.Unmarshal(b, &rs); err != nil {
		return rs, fmt.Errorf("scenario: run stats: %s: %w", filepath.Join(dir, RunStatsFile), err)
	}
	if rs.Stats == nil {
		return rs, fmt.Errorf("scenario: run stats: %s: no stats", filepath.Join(dir, RunStatsFile))
	}
	if err := checkStats(rs.Stats, "stats"); err != nil {
		return rs, fmt.Errorf("scenario: run stats: %s: %w", filepath.Join(dir, RunStatsFile), err)
	}
	return rs, nil
}
