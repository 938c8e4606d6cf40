package scenario

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/record"
)

// Mode is what a validity check does when it finds a run invalid: ModeFail (the run is
// an invalid measurement: [check.ErrInvalidRun], `perfgate profile` exits 1),
// ModeWarn (the verdict is reported, the run passes), or ModeOff (not checked). ""
// is the check's documented default.
type Mode string

// Modes.
const (
	ModeFail Mode = "fail"
	ModeWarn Mode = "warn"
	ModeOff  Mode = "off"
)

// Modes lists the values a [Mode] takes.
var Modes = []Mode{ModeFail, ModeWarn, ModeOff}

// Validity configures the checks that say whether a run's numbers can be trusted at
// all, apart from whether they meet the objectives (docs/validity.md). Each check has
// a documented default and a switch; the zero Validity runs every check at its
// default with its documented threshold.
type Validity struct {
	// Limits: the preflight of the client's own limits (open files, ephemeral ports
	// per source address, memory, the rate this client can send), before any
	// request. Default fail: the run is refused (exit 2) naming the limit, the need
	// and the fix.
	Limits Mode `json:"limits,omitempty"`
	// ClientBound: the client was the bottleneck, marginally (send lag p50 over
	// MaxSendLag, or its CPU over MaxClientCPU of what it may use). Default warn: on a
	// small machine shared with the server (or a CI runner), a closed-loop run against
	// a fast server legitimately uses the client's CPUs; set fail to make such a run
	// invalid.
	ClientBound Mode `json:"client_bound,omitempty"`
	// ClientBoundGross: the client was grossly the bottleneck of an open-loop run (send
	// lag p50 over GrossSendLag, or an achieved request rate under MinAchievedRate of
	// the offered one): its numbers measure the client, not the server. Default fail;
	// warn reports it and passes; off judges it in ClientBound's band. A run the load
	// generator stopped because its client fell behind its schedule
	// (loadgen.Stop.MaxScheduleLag) is invalid whatever the modes: it did not finish.
	ClientBoundGross Mode `json:"client_bound_gross,omitempty"`
	// Steady: the measured window's per-window medians of TTFT and ITL trend by
	// MaxDrift or more (Mann–Kendall with Hamed–Rao's correction). Default warn.
	Steady Mode `json:"steady,omitempty"`
	// WarmCache: the server's prefix-cache hit rate (server_metrics) is
	// MaxCacheHitRate or more on a workload with no designed reuse. Default fail.
	WarmCache Mode `json:"warm_cache,omitempty"`
	// TailSamples: a quantile rule claims more than the run's request count can bound
	// (p99 at 95% needs 299). Default fail, refused before the run when the request
	// count is known.
	TailSamples Mode `json:"tail_samples,omitempty"`
	// ClientDistorted: the server reported its own TTFT and the median client_overhead
	// (TTFT − server TTFT − the request's write) is above MaxClientOverhead: the
	// latencies measure the client as much as the server. Default warn: the overhead
	// also holds the network and the server's front end before its clock starts.
	ClientDistorted Mode `json:"client_distorted,omitempty"`

	// MaxSendLag is the median send lag above which an open-loop run is
	// client-bound (a client that is behind its schedule on most requests, not one a
	// scheduler stall delayed now and then: docs/validity.md has the measurement);
	// 0 = DefaultMaxSendLag (1 ms).
	MaxSendLag time.Duration `json:"max_send_lag,omitempty"`
	// MaxClientCPU is the fraction of the CPUs the client may use above which a run
	// is client-bound; 0 = DefaultMaxClientCPU (0.9).
	MaxClientCPU float64 `json:"max_client_cpu,omitempty"`
	// GrossSendLag is the median send lag above which an open-loop run is grossly
	// client-bound (docs/validity.md has the measurement); 0 = DefaultGrossSendLag.
	GrossSendLag time.Duration `json:"gross_send_lag,omitempty"`
	// MinAchievedRate is the fraction of the offered request rate below which the
	// rate an open-loop client achieved over the measured window makes the run grossly
	// client-bound (loadgen.Self.AchievedRate against OfferedRate), when the client also
	// took GrossSendLag longer than scheduled to send them (so one stall at the end of
	// a short run does not count); 0 = DefaultMinAchievedRate (0.9).
	MinAchievedRate float64 `json:"min_achieved_rate,omitempty"`
	// MaxDrift is the relative drift over the measured window at which a significant
	// trend makes a run not steady; 0 = DefaultMaxDrift (0.05).
	MaxDrift float64 `json:"max_drift,omitempty"`
	// MaxCacheHitRate is the prefix-cache hit rate at which the cache counts as warm;
	// 0 = DefaultMaxCacheHitRate (0.01).
	MaxCacheHitRate float64 `json:"max_cache_hit_rate,omitempty"`
	// MaxClientOverhead is the client_overhead p50 above which a run's latencies are
	// client-distorted; 0 = DefaultMaxClientOverhead.
	MaxClientOverhead time.Duration `json:"max_client_overhead,omitempty"`

	// CacheBust puts a per-run random salt at the start of every prompt (counted in
	// ISL), so no run reuses another's prefix-cache entries.
	CacheBust bool `json:"cache_bust,omitempty"`
	// ResetURL is POSTed to before each run (e.g. vLLM's
	// http://host:8000/reset_prefix_cache); a failure stops the run before any
	// request. "" = none.
	ResetURL string `json:"reset_url,omitempty"`
	// ResetKVCache, without a ResetURL, POSTs to each target's /reset_prefix_cache
	// (vLLM's and the mock's, on the target URL's host) before each run, and so
	// before its priming phase (loadgen.Prefixes.PrimePrefixes).
	ResetKVCache bool `json:"reset_kv_cache,omitempty"`
}

// Validity thresholds' defaults.
const (
	DefaultMaxSendLag   = time.Millisecond
	DefaultMaxClientCPU = 0.9
	// DefaultGrossSendLag and DefaultMinAchievedRate bound the gross client-bound
	// band (docs/validity.md, "The gross band": a starved client's median lag against a
	// free one's at the highest rates measured).
	DefaultGrossSendLag    = 50 * time.Millisecond
	DefaultMinAchievedRate = 0.9
	DefaultMaxDrift        = 0.05
	DefaultMaxCacheHitRate = 0.01
	// SteadyAlpha is the Mann–Kendall level of the steady-state check.
	SteadyAlpha = 0.05
	// SteadyWindows is the most windows the measured window is cut into; each holds
	// at least SteadyMinPerWindow requests, and fewer than SteadyMinWindows windows
	// leave the check undecided (it passes, saying so).
	SteadyWindows      = 20
	SteadyMinPerWindow = 5
	SteadyMinWindows   = 8
)

// Check names of the validity verdicts.
const (
	CheckClientLimits = "client-limits"
	CheckClientBound  = "client-bound"
	CheckSteady       = "steady-state"
	CheckWarmCache    = "warm-cache"
	CheckTailSamples  = "tail-samples"
)

// ParseMode reports whether s is a [Mode] (or "", the default).
func ParseMode(s string) error {
	if s != "" && !slices.Contains(Modes, Mode(s)) {
		return fmt.Errorf("scenario: validity mode %q: want fail, warn or off", s)
	}
	return nil
}

// or returns m, or def when m is "".
func (m Mode) or(def Mode) Mode { return cmp.Or(m, def) }

// validate reports a mode that is not one of Modes.
func (v Validity) validate(bad func(string, ...any)) {
	for _, f := range []struct {
		name string
		m    Mode
	}{{"limits", v.Limits}, {"client_bound", v.ClientBound}, {"client_bound_gross", v.ClientBoundGross}, {"steady", v.Steady}, {"warm_cache", v.WarmCache}, {"tail_samples", v.TailSamples}, {"client_distorted", v.ClientDistorted}} {
		if f.m != "" && !slices.Contains(Modes, f.m) {
			bad("validity.%s %q: want fail, warn or off", f.name, f.m)
		}
	}
	if v.MaxSendLag < 0 {
		bad("validity.max_send_lag %v: want a duration >= 0", v.MaxSendLag)
	}
	if v.MaxClientOverhead < 0 {
		bad("validity.max_client_overhead %v: want a duration >= 0", v.MaxClientOverhead)
	}
	if v.GrossSendLag < 0 {
		bad("validity.gross_send_lag %v: want a duration >= 0", v.GrossSendLag)
	}
	if !(v.MinAchievedRate >= 0 && v.MinAchievedRate <= 1) {
		bad("validity.min_achieved_rate %v: want a fraction in [0, 1]", v.MinAchievedRate)
	}
	if !(v.MaxClientCPU >= 0 && v.MaxClientCPU <= 1) {
		bad("validity.max_client_cpu %v: want a fraction in [0, 1]", v.MaxClientCPU)
	}
	if !(v.MaxDrift >= 0) || math.IsInf(v.MaxDrift, 0) {
		bad("validity.max_drift %v: want a fraction >= 0", v.MaxDrift)
	}
	if !(v.MaxCacheHitRate >= 0 && v.MaxCacheHitRate <= 1) {
		bad("validity.max_cache_hit_rate %v: want a fraction in [0, 1]", v.MaxCacheHitRate)
	}
	if u := v.ResetURL; u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		bad("validity.reset_url %q: want an http(s) URL", u)
	}
}

// apply turns a verdict of a check that found the run invalid into its mode's form:
// fail keeps it failing, warn makes it pass (still Status Invalid, so it is shown as
// a warning). A valid verdict is returned as it is.
func apply(v check.Verdict, m Mode) check.Verdict {
	if v.Status == check.Invalid && m == ModeWarn {
		v.Pass = true
	}
	return v
}

// Validity returns the run's validity verdicts: client-bound, steady state, warm cache
// and tail samples, each at its mode (those switched off are left out). A verdict that
// found the run invalid has [check.Status] Invalid: failing (its error wraps
// [check.ErrInvalidRun]) under ModeFail, passing as a warning under ModeWarn. They are
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
		v := check.Verdict{Check: CheckClientLimits, Pass: true, Status: check.Invalid, Summary: "the client's limits may not hold the run"}
		for _, w := range o.limitWarnings {
			v.Evidence = append(v.Evidence, check.Line{Label: "limit", Text: w})
		}
		vs = append(vs, v)
	}
	if v, ok := o.abortVerdict(); ok && v.Status == check.Invalid {
		vs = append(vs, v)
	}
	if o.Self != nil {
		if v, m := clientBound(o.selfForClientBound(), cfg, o.openLoop(), o.Mocked); m != ModeOff {
			vs = append(vs, apply(v, m))
		}
	}
	if len(o.shards) > 0 {
		vs = append(vs, o.shardValidityVerdicts()...)
	}
	if m := cfg.Steady.or(ModeWarn); m != ModeOff {
		if v, ok := o.steady(cfg); ok {
			vs = append(vs, apply(v, m))
		}
	}
	if m := cfg.WarmCache.or(ModeFail); m != ModeOff && o.ServerMetrics != nil {
		if v, ok := o.warmCache(cfg); ok {
			vs = append(vs, apply(v, m))
		}
	}
	if m := cfg.ClientDistorted.or(ModeWarn); m != ModeOff {
		if v, ok := o.clientDistorted(cfg); ok {
			vs = append(vs, apply(v, m))
		}
	}
	if m := cfg.TailSamples.or(ModeFail); m != ModeOff {
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
				vs = append(vs, apply(v, m))
			}
		}
	}
	return vs
}

// Aborted says why the load generator stopped the run before it completed (its
// client fell behind its schedule: loadgen.Stop.MaxScheduleLag; or an abort rule
// held: Scenario.Abort), "" if it did not. Such a run keeps its records; [Outcome.AbortedBy]
// says which stopped it, and the client-bound verdict (the schedule) or the aborted
// verdict (a rule) fails it. A merged run (Merge) has no client of its own: it says
// which of its shards were stopped and why, "shard 1 (DIR): …; shard 3 (DIR): …".
func (o *Outcome) Aborted() string {
	if o.Self == nil {
		why, _ := o.shardAborts()
		return why
	}
	return o.Self.Aborted
}

// selfForClientBound is the self-measurement the client-bound verdict judges: a run
// stopped by an abort rule, not by the schedule watch, is not client-bound for it.
func (o *Outcome) selfForClientBound() loadgen.Self { return clientBoundSelf(*o.Self) }

func clientBoundSelf(s loadgen.Self) loadgen.Self {
	if s.AbortedBy != "" && s.AbortedBy != loadgen.AbortSchedule {
		s.Aborted = ""
	}
	return s
}

// openLoop reports whether the run is an open loop without a ceiling: the send lag
// and the achieved rate are measured against its schedule.
func (o *Outcome) openLoop() bool {
	sc := o.Scenario
	return (sc.Rate > 0 || len(sc.RateSeries) > 0 || sc.Schedule) && sc.Concurrency == 0
}

// ClientBound judges a run's self-measurement: the client was the bottleneck when,
// in an open-loop run without a ceiling (openLoop), its median send lag exceeded
// cfg.MaxSendLag (the client was behind its schedule on most requests: the p99,
// shown in the evidence, measures the machine's scheduler stalls as much as the
// client), or when its CPU use exceeded cfg.MaxClientCPU of the CPUs it may use
// (not judged with the in-process mock, which runs in the same process). Grossly so
// (the gross band, first in the summary) when the load generator stopped the run
// behind its schedule (s.Aborted), the median send lag exceeded cfg.GrossSendLag, or
// the achieved rate fell below cfg.MinAchievedRate of the offered one. The verdict
// gives the figures either way; it fails when the client was the bottleneck in either
// band, before the modes ([Validity.ClientBound], [Validity.ClientBoundGross]) apply.
func ClientBound(s loadgen.Self, cfg Validity, openLoop, mocked bool) check.Verdict {
	v, _ := clientBound(s, cfg, openLoop, mocked)
	return v
}

// clientBound is [ClientBound], with the mode its verdict takes: ModeFail for a run
// the load generator stopped, the gross band's for a gross one, the marginal band's
// otherwise (ModeOff: no verdict).
func clientBound(s loadgen.Self, cfg Validity, openLoop, mocked bool) (check.Verdict, Mode) {
	maxLag := cmp.Or(cfg.MaxSendLag, DefaultMaxSendLag)
	grossLag := cmp.Or(cfg.GrossSendLag, DefaultGrossSendLag)
	minRate := cmp.Or(cfg.MinAchievedRate, DefaultMinAchievedRate)
	maxCPU := cmp.Or(cfg.MaxClientCPU, DefaultMaxClientCPU)
	marginal, grossMode := cfg.ClientBound.or(ModeWarn), cfg.ClientBoundGross.or(ModeFail)
	v := check.Verdict{Check: CheckClientBound, Pass: true, Value: s.CPUFraction, Unit: check.Fraction}
	var gross, why []string
	if s.Aborted != "" {
		gross = append(gross, "the run was stopped early: "+s.Aborted)
	}
	lagged := openLoop && s.SendLag.N > 0
	switch p50 := roundLag(s.SendLag.P50); {
	case lagged && s.SendLag.P50 > grossLag:
		gross = append(gross, fmt.Sprintf("send lag p50 %v > %v", p50, grossLag))
	case lagged && s.SendLag.P50 > maxLag:
		why = append(why, fmt.Sprintf("send lag p50 %v > %v", p50, maxLag))
	}
	if openLoop && s.OfferedRate > 0 && s.AchievedRate < minRate*s.OfferedRate && shortfall(s) > grossLag {
		gross = append(gross, fmt.Sprintf("achieved %s req/s, %.0f%% of the %s offered < %.0f%%",
			groupDigits(s.AchievedRate), 100*s.AchievedRate/s.OfferedRate, groupDigits(s.OfferedRate), 100*minRate))
	}
	if !mocked && s.CPUs > 0 && s.CPUFraction > maxCPU {
		why = append(why, fmt.Sprintf("client CPU %.0f%% of %g CPUs > %.0f%%", 100*s.CPUFraction, s.CPUs, 100*maxCPU))
	}
	v.Evidence = SelfEvidence(s)
	mode := marginal
	switch {
	case s.Aborted != "":
		mode = ModeFail
	case len(gross) > 0 && grossMode != ModeOff:
		mode = grossMode
	case len(gross) > 0:
		why, gross = append(gross, why...), nil // judged in the marginal band
	case marginal == ModeOff:
		mode = grossMode // only the gross band is judged, and it found nothing
	}
	if len(gross)+len(why) == 0 {
		v.Summary = "client not the bottleneck"
		return v, mode
	}
	if len(gross) == 0 && marginal == ModeOff {
		return v, ModeOff // the marginal band, switched off
	}
	v.Pass, v.Status = false, check.Invalid
	if len(gross) > 0 {
		v.Summary = "client-bound: " + strings.Join(append(gross, why...), "; ") + ": the client could not keep up, so the numbers measure the client, not the server"
	} else {
		v.Summary = "client-bound: " + strings.Join(why, "; ")
	}
	v.Evidence = append(v.Evidence, check.Line{Label: "fix", Text: "lower the rate, give the client more CPUs (GOMAXPROCS, affinity, cgroup quota), " +
		"or split the load over shards (--shards / perfgate k8s); the numbers above measure the client, not the server"})
	return v, mode
}

// shortfall is how much longer than scheduled the client took to send the measured
// requests: its sends' span less their due times' (see loadgen.Self.OfferedRate). The
// achieved-rate criterion asks for more than the gross lag of it too, so one late
// request at the end of a short run (a scheduler stall) is not a rate shortfall.
func shortfall(s loadgen.Self) time.Duration {
	if s.SendLag.N < 2 || s.OfferedRate <= 0 || s.AchievedRate <= 0 {
		return 0
	}
	n := float64(s.SendLag.N - 1)
	return time.Duration((n/s.AchievedRate - n/s.OfferedRate) * float64(time.Second))
}

// roundLag rounds a lag for a summary line: to 10 ms from a second up, to 0.1 ms
// from 10 ms, to 1 µs below (the evidence gives it to the microsecond).
func roundLag(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// groupDigits formats a rate rounded to an integer with thousands separators
// (2,000), as loadgen's abort reason does.
func groupDigits(x float64) string {
	d := fmt.Sprintf("%.0f", math.Abs(x))
	var b strings.Builder
	if x <= -0.5 {
		b.WriteByte('-')
	}
	for i := range len(d) {
		if i > 0 && (len(d)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(d[i])
	}
	return b.String()
}

// SelfEvidence renders a run's self-measurement as verdict evidence lines.
func SelfEvidence(s loadgen.Self) []check.Line {
	lag := "not measured (closed loop or a concurrency ceiling)"
	if s.SendLag.N > 0 {
		lag = lagText(s.SendLag)
	}
	ls := []check.Line{{Label: "send lag", Text: lag}}
	if s.OfferedRate > 0 {
		ls = append(ls, check.Line{Label: "rate", Text: fmt.Sprintf("%s req/s achieved of %s offered (%.0f%%), over the measured sends",
			groupDigits(s.AchievedRate), groupDigits(s.OfferedRate), 100*s.AchievedRate/s.OfferedRate)})
	}
	ls = append(ls, []check.Line{
		{Label: "client CPU", Text: fmt.Sprintf("%.2f s over %v on %g CPUs (%.0f%%)", s.CPUSeconds, s.Elapsed.Round(time.Millisecond), s.CPUs, 100*s.CPUFraction)},
		{Label: "GC pauses", Text: fmt.Sprintf("%d, %v in all, longest %v", s.GCCount, s.GCPause.Round(time.Microsecond), s.GCPauseMax.Round(time.Microsecond))},
	}...)
	if s.ReadDelay.N > 0 {
		ls = append(ls, check.Line{Label: "read delay", Text: lagText(s.ReadDelay) + " (kernel receive stamp to read)"})
	}
	return ls
}

func lagText(l loadgen.LagStats) string {
	r := func(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
	return fmt.Sprintf("p50 %v  p99 %v  max %v  (n=%d)", r(l.P50), r(l.P99), r(l.Max), l.N)
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
	if s.Validity.TailSamples.or(ModeFail) != ModeFail {
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

// steadyPoint is one measured request on the time axis.
type steadyPoint struct {
	sent      time.Duration
	ttft, itl float64 // seconds; NaN when the request has none
}

// steadySeries reads the measured successful requests' send times, TTFT and ITL.
func (o *Outcome) steadySeries() []steadyPoint {
	opt := metricOptions(o.Scenario.Config)
	var pts []steadyPoint
	var q metric.Request
	add := func(c *record.Client) error {
		if c.Warmup || !c.OK() {
			return nil
		}
		q.Reset(c, opt)
		p := steadyPoint{sent: c.Sent, ttft: math.NaN(), itl: math.NaN()}
		if q.HasTTFT {
			p.ttft = q.TTFT.Seconds()
		}
		if itl, ok := q.ITL(); ok {
			p.itl = itl / 1e3 // ms → s
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
	slices.SortFunc(pts, func(a, b steadyPoint) int { return cmp.Compare(a.sent, b.sent) })
	return pts
}

// steady is the steady-state verdict; false when the run has no latency series.
func (o *Outcome) steady(cfg Validity) (check.Verdict, bool) {
	pts := o.steadySeries()
	if len(pts) == 0 {
		return check.Verdict{}, false
	}
	return Steady(pts, cmp.Or(cfg.MaxDrift, DefaultMaxDrift)), true
}

// SteadySeries are the per-window medians the steady-state check tests.
type SteadySeries struct {
	Window  time.Duration // each window's length
	Start   time.Duration // the first window's start (run time)
	Metric  string        // "TTFT" or "ITL"
	Medians []float64     // seconds, one per window with enough requests (NaN: too few)
}

// windows cuts pts (sorted by send time) into up to SteadyWindows equal windows of
// at least SteadyMinPerWindow requests each, and returns each metric's medians.
func windows(pts []steadyPoint) []SteadySeries {
	k := min(SteadyWindows, len(pts)/SteadyMinPerWindow)
	if k < SteadyMinWindows {
		return nil
	}
	start, end := pts[0].sent, pts[len(pts)-1].sent
	w := (end - start) / time.Duration(k)
	if w <= 0 {
		return nil
	}
	var out []SteadySeries
	for _, m := range []string{"TTFT", "ITL"} {
		s := SteadySeries{Window: w, Start: start, Metric: m}
		buckets := make([][]float64, k)
		for _, p := range pts {
			i := min(int((p.sent-start)/w), k-1)
			x := p.ttft
			if m == "ITL" {
				x = p.itl
			}
			if !math.IsNaN(x) {
				buckets[i] = append(buckets[i], x)
			}
		}
		for _, b := range buckets {
			if len(b) < SteadyMinPerWindow {
				s.Medians = append(s.Medians, math.NaN())
				continue
			}
			s.Medians = append(s.Medians, distribution.Percentile(b, 0.5))
		}
		out = append(out, s)
	}
	return out
}

// Steady tests whether the latency of a run (its measured requests, sorted by send
// time) is steady: per-window medians of TTFT and of ITL must show no trend that is
// both significant (Mann–Kendall, Hamed–Rao-corrected, at SteadyAlpha) and at least
// maxDrift of the median over the measured window (Sen's slope × the window span).
func Steady(pts []steadyPoint, maxDrift float64) check.Verdict {
	v := check.Verdict{Check: CheckSteady, Pass: true}
	series := windows(pts)
	if series == nil {
		v.Summary = fmt.Sprintf("steady state not checked: %d requests give fewer than %d windows of %d", len(pts), SteadyMinWindows, SteadyMinPerWindow)
		return v
	}
	var bad []string
	for _, s := range series {
		var xs []float64
		for _, m := range s.Medians {
			if !math.IsNaN(m) {
				xs = append(xs, m)
			}
		}
		if len(xs) < SteadyMinWindows {
			continue
		}
		tr := distribution.MannKendall(xs, distribution.TrendOptions{Alpha: SteadyAlpha, MaxLag: len(xs) / 4, Conservative: true})
		med := distribution.Percentile(xs, 0.5)
		drift := 0.0
		if med > 0 {
			drift = tr.Slope * float64(len(xs)-1) / med
		}
		line := fmt.Sprintf("%d windows of %v from %v: median %s, drift %+.1f%% (Sen slope %s per window = %s/s), Mann–Kendall p=%.3g (Hamed–Rao factor %.2f)",
			len(xs), s.Window.Round(time.Millisecond), s.Start.Round(time.Millisecond), check.Seconds.Format(med), 100*drift,
			check.Seconds.Format(tr.Slope), check.Seconds.Format(tr.Slope/s.Window.Seconds()), tr.P, tr.Factor)
		v.Evidence = append(v.Evidence, check.Line{Label: s.Metric, Text: line})
		if tr.P < SteadyAlpha && math.Abs(drift) >= maxDrift {
			bad = append(bad, fmt.Sprintf("%s median drifted %+.1f%%", s.Metric, 100*drift))
			v.Value = max(v.Value, math.Abs(drift))
		}
	}
	v.Unit = check.Fraction
	if len(bad) == 0 {
		v.Summary = fmt.Sprintf("steady: no significant drift of %.0f%% or more", 100*maxDrift)
		return v
	}
	v.Pass, v.Status = false, check.Invalid
	v.Summary = "not steady: " + strings.Join(bad, ", ") + " over the measured window"
	v.Evidence = append(v.Evidence, check.Line{Label: "fix", Text: "warm up longer (--warmup-request-count, --warmup-duration), run at a load the server can sustain, or check the server for throttling"})
	return v
}

// warmCache is the warm-cache verdict; false when the run scraped no hit rate or the
// workload reuses prefixes by design.
func (o *Outcome) warmCache(cfg Validity) (check.Verdict, bool) {
	sc := o.Scenario
	if sc.PrefixTokens > 0 || sc.InputFile != "" || sc.Turns.Distribution != nil && sc.Turns.String() != "fixed:1" {
		return check.Verdict{}, false // reuse by design: a hit rate is expected
	}
	limit := cmp.Or(cfg.MaxCacheHitRate, DefaultMaxCacheHitRate)
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
	v := check.Verdict{Check: CheckWarmCache, Pass: rate < limit, Value: rate, Unit: check.Fraction}
	ev := []check.Line{{Label: "hit rate", Text: fmt.Sprintf("%.2f%% of prompt tokens (%s)", 100*rate, url)}}
	if v.Pass {
		v.Summary = fmt.Sprintf("prefix cache cold: hit rate %.2f%% < %.0f%%", 100*rate, 100*limit)
		v.Evidence = ev
		return v, true
	}
	v.Status = check.Invalid
	v.Summary = fmt.Sprintf("warm cache: prefix-cache hit rate %.1f%% >= %.0f%% on a workload with no designed reuse", 100*rate, 100*limit)
	v.Evidence = append(ev, check.Line{Label: "fix", Text: "bust the cache (validity.cache_bust, --cache-bust: a per-run salt starts every prompt) or reset it before each run (validity.reset_url, --cache-reset-url, e.g. vLLM's /reset_prefix_cache)"})
	return v, true
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
