package scenario

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/perfgate/perfgate/distribution"
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
		for _, c := range o.Scenario.Objectives.tailClaims() {
			nc := n
			parts := o.Metrics.Models
			if c.scope.Key == check.ScopeClass {
				parts = o.Metrics.Classes
			}
			if mm, ok := parts[c.scope.Name]; ok && !c.scope.IsZero() {
				nc = int(mm.Value(record.MetricRequestCount)) // the model's (the class's) own successful requests
			}
			if v := check.TailSamples(c.text, c.p, c.atMost, nc, 0); !v.Pass {
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

// tailClaim is one quantile claim of the objectives.
type tailClaim struct {
	text   string
	p      float64
	atMost bool
	scope  check.Scope // a rule scoped to one model of a mix or one class: its requests alone count
}

// tailClaims lists the objectives' quantile claims (bounds and rules).
func (o Objectives) tailClaims() []tailClaim {
	var cs []tailClaim
	for _, b := range o.Bounds {
		atMost, atLeast := b.Claims()
		name := fmt.Sprintf("%s %s", b.Metric.Label(), distribution.FormatP(b.P))
		if atMost {
			cs = append(cs, tailClaim{text: name + " <= limit", p: b.P, atMost: true})
		}
		if atLeast {
			cs = append(cs, tailClaim{text: name + " >= limit", p: b.P})
		}
	}
	rs, _ := o.ParseRules()
	for _, r := range rs {
		if _, p, atMost, ok := r.Quantile(); ok {
			cs = append(cs, tailClaim{r.String(), p, atMost, r.Scope()})
		}
	}
	return cs
}

// tailProblems returns, for a scenario whose measured request count is known before
// the run (Requests without Duration or an input file), the quantile claims it
// cannot support, as errors for Validate.
func (s Scenario) tailProblems() []string {
	if s.Validity.TailSamples.Or(validity.ModeFail) != validity.ModeFail {
		return nil
	}
	known := func(requests int, d time.Duration, input string) bool { return requests > 0 && d == 0 && input == "" }
	var out []string
	for _, c := range s.Objectives.tailClaims() {
		n, of := s.Requests, ""
		if len(s.Classes) > 0 {
			// A run of classes: a claim on a class counts that class's requests; one on
			// the run, every class's.
			n = 0
			for i, cl := range s.Classes {
				cc := s.classConfig(i, s.Config)
				if c.scope.Key == check.ScopeClass && c.scope.Name != cl.Name {
					continue
				}
				if !known(cc.Requests, cc.Duration, cc.InputFile) {
					n = -1 // not known before the run
					break
				}
				n += cc.Requests
			}
			if c.scope.Key == check.ScopeClass {
				of = " of class " + c.scope.Name
			}
			if n <= 0 {
				continue
			}
		} else if !known(s.Requests, s.Duration, s.InputFile) {
			return nil
		}
		if m := c.scope.Name; c.scope.Key == check.ScopeModel && len(s.ModelNames) > 0 {
			if !slices.Contains(s.ModelNames, m) {
				continue // Validate says the model is not sent to
			}
			n, of = s.ModelRequests(m, n), fmt.Sprintf(" sent to model %s (expected)", m)
		}
		if need := check.QuantileNeed(c.p, c.atMost, 0); n < need {
			out = append(out, fmt.Sprintf("objectives: %s needs at least %d measured requests for a %g%% bound; the run has %d%s (raise request_count, claim a lower quantile, or set validity.tail_samples: warn)",
				c.text, need, check.DefaultConfidence*100, n, of))
		}
	}
	return out
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
