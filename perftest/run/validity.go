package run

import (
	"cmp"
	"math"
	"slices"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/validity"
	"github.com/perfgate/perfgate/record"
)

// Validity returns the run's validity verdicts: client-bound, steady state, warm cache
// and tail samples, each at its mode (those switched off are left out). A verdict that
// found the run invalid has [check.Status] Invalid: failing (its error wraps
// [check.ErrInvalidRun]) under validity.ModeFail, passing as a warning under validity.ModeWarn. They are
// not objectives: an invalid measurement is neither a performance pass nor a
// regression, so callers report them before (and instead of) the objectives' verdicts.
//
// Deprecated: use [Outcome.Verdicts](check.KindValidity), the one list of a run's
// verdicts; removed in v0.3.0.
func (o *Outcome) Validity() []check.Verdict { return o.Verdicts(check.KindValidity) }

// validity is the run's validity verdicts ([Outcome.Verdicts], check.KindValidity).
func (o *Outcome) validity() []check.Verdict {
	if o.kept != nil {
		return slices.Clone(o.kept.validity)
	}
	cfg := o.Scenario.Validity
	var vs []check.Verdict
	if len(o.limitWarnings) > 0 {
		v := check.Verdict{Check: validity.CheckClientLimits, Pass: true, Status: check.Invalid, Summary: "the client's limits may not hold the run"}
		for _, w := range o.limitWarnings {
			v.Evidence = append(v.Evidence, check.Line{Label: "limit", Text: w})
		}
		vs = append(vs, v)
	}
	if v, ok := o.abortVerdict(); ok && v.Status == check.Invalid {
		vs = append(vs, v)
	}
	if o.Self != nil {
		if v, m := validity.ClientBound(*o.Self, cfg, o.openLoop(), o.Mocked); m != validity.ModeOff {
			vs = append(vs, validity.Apply(v, m))
		}
	}
	if len(o.shards) > 0 {
		vs = append(vs, o.shardValidityVerdicts()...)
	}
	if m := cfg.Steady.Or(validity.ModeWarn); m != validity.ModeOff {
		if v, ok := o.steady(cfg); ok {
			vs = append(vs, validity.Apply(v, m))
		}
	}
	if m := cfg.WarmCache.Or(validity.ModeFail); m != validity.ModeOff && o.ServerMetrics != nil {
		if v, ok := o.warmCache(cfg); ok {
			vs = append(vs, validity.Apply(v, m))
		}
	}
	if m := cfg.ClientDistorted.Or(validity.ModeWarn); m != validity.ModeOff {
		if v, ok := validity.ClientDistorted(o.Metrics.Stats, cfg); ok {
			vs = append(vs, validity.Apply(v, m))
		}
	}
	if m := cfg.TailSamples.Or(validity.ModeFail); m != validity.ModeOff {
		n := o.summary().requests - o.summary().failed
		for _, c := range o.Scenario.Objectives.TailClaims() {
			nc := n
			parts := o.Metrics.Models
			if c.Scope.Key == check.ScopeClass {
				parts = o.Metrics.Classes
			}
			if mm, ok := parts[c.Scope.Name]; ok && !c.Scope.IsZero() {
				nc = int(mm.Value(record.MetricRequestCount)) // the model's (the class's) own successful requests
			}
			if v := check.TailSamples(c.Text, c.P, c.AtMost, nc, 0); !v.Pass {
				vs = append(vs, validity.Apply(v, m))
			}
		}
	}
	return vs
}

// Aborted says why the load generator stopped the run before it completed (its
// client fell behind its schedule: loadgen.Stop.MaxScheduleLag; or an abort rule
// held: Scenario.Abort), "" if it did not. Such a run keeps its records; [Outcome.AbortedBy]
// says which stopped it, and the client-bound verdict (the schedule) or the aborted
// verdict (a rule) fails it. A merged run (merge.Shards) has no client of its own: it says
// which of its shards were stopped and why, "shard 1 (DIR): …; shard 3 (DIR): …".
func (o *Outcome) Aborted() string {
	if o.Self == nil {
		why, _ := o.shardAborts()
		return why
	}
	return o.Self.Aborted
}

// openLoop reports whether the run is an open loop without a ceiling: the send lag
// and the achieved rate are measured against its schedule.
func (o *Outcome) openLoop() bool {
	sc := o.Scenario
	return (sc.Rate > 0 || len(sc.RateSeries) > 0 || sc.Schedule) && sc.Concurrency == 0
}

// steadySeries reads the measured successful requests' send times, TTFT and ITL.
func (o *Outcome) steadySeries() []validity.Point {
	opt := metricOptions(o.Scenario.Config)
	var pts []validity.Point
	var q metric.Request
	add := func(c *record.Client) error {
		if c.Warmup || !c.OK() {
			return nil
		}
		q.Reset(c, opt)
		p := validity.Point{Sent: c.Sent, TTFT: math.NaN(), ITL: math.NaN()}
		if q.HasTTFT {
			p.TTFT = q.TTFT.Seconds()
		}
		if itl, ok := q.ITL(); ok {
			p.ITL = itl / 1e3 // ms → s
		}
		pts = append(pts, p)
		return nil
	}
	if o.Client != nil || o.clientPath == "" {
		for i := range o.Client {
			_ = add(&o.Client[i])
		}
	} else {
		_ = o.each(add)
	}
	slices.SortFunc(pts, func(a, b validity.Point) int { return cmp.Compare(a.Sent, b.Sent) })
	return pts
}

// steady is the steady-state verdict; false when the run has no latency series.
func (o *Outcome) steady(cfg validity.Config) (check.Verdict, bool) {
	pts := o.steadySeries()
	if len(pts) == 0 {
		return check.Verdict{}, false
	}
	return validity.Steady(pts, cmp.Or(cfg.MaxDrift, validity.DefaultMaxDrift)), true
}

// warmCache is the warm-cache verdict ([validity.WarmCache] on the highest hit rate a
// server reported); false when the run scraped no hit rate or the workload reuses
// prefixes by design.
func (o *Outcome) warmCache(cfg validity.Config) (check.Verdict, bool) {
	sc := o.Scenario
	if sc.PrefixTokens > 0 || sc.InputFile != "" || sc.Turns.Distribution != nil && sc.Turns.String() != "fixed:1" {
		return check.Verdict{}, false // reuse by design: a hit rate is expected
	}
	var rate float64
	var url string
	found := false
	for _, e := range o.ServerMetrics.Endpoints {
		if r := e.Derived.PrefixCacheHitRate; r != nil && (!found || *r > rate) {
			rate, url, found = *r, e.URL, true
		}
	}
	if !found {
		return check.Verdict{}, false
	}
	return validity.WarmCache(rate, url, cfg), true
}

// validityDoc is validity.json, and the "validity" section of metrics.json.
type validityDoc struct {
	Pins     *Pins            `json:"pins,omitempty"`
	Self     *loadgen.Self    `json:"client,omitempty"`
	Verdicts []validityRecord `json:"verdicts,omitempty"`
	// Shards are a merged run's shards' own (perfgate merge).
	Shards []shardValidity `json:"shards,omitempty"`
}

// validityRecord is one validity verdict in validity.json.
type validityRecord struct {
	Check   string  `json:"check"`
	Pass    bool    `json:"pass"`
	Status  string  `json:"status"`
	Summary string  `json:"summary"`
	Value   float64 `json:"value"`
	Text    string  `json:"text"`
}

func docVerdict(v check.Verdict) validityRecord {
	return validityRecord{Check: v.Check, Pass: v.Pass, Status: v.Status.String(), Summary: v.Summary, Value: v.Value, Text: v.String()}
}
