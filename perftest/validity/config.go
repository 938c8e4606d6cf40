package validity

import (
	"math"
	"slices"
	"strings"
	"time"
)

// Config configures the checks that say whether a run's numbers can be trusted at
// all, apart from whether they meet the objectives (docs/validity.md). Each check has
// a documented default and a switch; the zero Config runs every check at its
// default with its documented threshold.
type Config struct {
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

// The thresholds' defaults.
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

// CheckClientDistorted names the validity verdict on the client's overhead in TTFT,
// judged when the server reported its own TTFT (record.ServerData).
const CheckClientDistorted = "client-distorted"

// DefaultMaxClientOverhead is the client_overhead p50 above which a run's latencies
// are client-distorted (docs/validity.md, "Client overhead": the mock's own
// measurement on a loaded 2-core machine, with a margin).
const DefaultMaxClientOverhead = 2 * time.Millisecond

// Validate calls bad for each setting of v that is wrong: a mode that is not one of
// Modes, a negative duration, a fraction out of its range, a reset URL that is not
// http(s). Each message names the scenario file's key (validity.client_bound, …).
func (v Config) Validate(bad func(string, ...any)) {
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
