package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/perftest/validity"
)

// ms is d in milliseconds, for a flag's help.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// validityFlags are the switches of the validity checks (docs/validity.md); each maps
// onto one field of scenario.Validity and overrides a scenario file's.
type validityFlags struct {
	limits, clientBound, clientBoundGross, steady, warmCache, tailSamples string
	clientDistorted                                                       string
	maxSendLag, maxClientCPU, maxDrift, maxCacheHitRate                   float64
	grossSendLag, minAchievedRate, maxScheduleLag, maxClientOverhead      float64
	cacheBust                                                             bool
	resetURL                                                              string
}

func registerValidityFlags(fs *flag.FlagSet, v *validityFlags) {
	mode := func(p *string, name, what, def string) {
		fs.StringVar(p, name, "", "[objectives] "+what+": fail, warn or off (default "+def+")")
	}
	mode(&v.limits, "check-client-limits", "preflight of the client's own limits (open files, ports, memory, rate)", "fail")
	mode(&v.clientBound, "check-client-bound", "the client as the bottleneck (send lag, client CPU)", "warn")
	mode(&v.clientBoundGross, "check-client-bound-gross", "the client grossly the bottleneck of an open loop (send lag, achieved rate)", "fail")
	mode(&v.steady, "check-steady-state", "a latency trend over the measured window", "warn")
	mode(&v.warmCache, "check-warm-cache", "a warm prefix cache (with --server-metrics)", "fail")
	mode(&v.tailSamples, "check-tail-samples", "quantile rules the request count cannot bound (p99 needs 299)", "fail")
	mode(&v.clientDistorted, "check-client-distorted", "the client's overhead in TTFT, when the server reports its own TTFT", "warn")
	fs.Float64Var(&v.maxClientOverhead, "max-client-overhead-ms", 0, fmt.Sprintf("[objectives] client_overhead p50 (ms) above which a run's latencies are client-distorted (default %g)", ms(validity.DefaultMaxClientOverhead)))
	fs.Float64Var(&v.maxSendLag, "max-send-lag-ms", 0, fmt.Sprintf("[objectives] median send lag (ms) above which an open-loop run is client-bound (default %g)", ms(validity.DefaultMaxSendLag)))
	fs.Float64Var(&v.grossSendLag, "gross-send-lag-ms", 0, fmt.Sprintf("[objectives] median send lag (ms) above which an open-loop run is grossly client-bound (default %g)", ms(validity.DefaultGrossSendLag)))
	fs.Float64Var(&v.minAchievedRate, "min-achieved-rate", 0, fmt.Sprintf("[objectives] fraction of the offered request rate below which an open-loop run that achieved less is grossly client-bound (default %g)", validity.DefaultMinAchievedRate))
	fs.Float64Var(&v.maxScheduleLag, "max-schedule-lag", loadgen.DefaultMaxScheduleLag.Seconds(), "[stop] seconds an open loop may fall behind its schedule, for as long, before it is stopped as client-bound (exit 1, records kept); 0 = never")
	fs.Float64Var(&v.maxClientCPU, "max-client-cpu", 0, "[objectives] fraction of its CPUs above which the client is the bottleneck (default 0.9)")
	fs.Float64Var(&v.maxDrift, "max-drift", 0, "[objectives] relative latency drift over the measured window that makes a run not steady (default 0.05)")
	fs.Float64Var(&v.maxCacheHitRate, "max-cache-hit-rate", 0, "[objectives] prefix-cache hit rate at which the cache counts as warm (default 0.01)")
	fs.BoolVar(&v.cacheBust, "cache-bust", false, "[workload] start every prompt with a per-run random salt (counted in ISL), so no run hits another's prefix cache")
	fs.StringVar(&v.resetURL, "cache-reset-url", "", "[target] POST to this URL before each run, e.g. http://HOST:8000/reset_prefix_cache")
}

// profileValidity applies the validity flags given.
func profileValidity(sc *scenario.Scenario, f *profileFlags, _ *profileOpts, has func(...string) bool) error {
	v, d := &f.validity, &sc.Validity
	for _, m := range []struct {
		flag string
		val  string
		dst  *validity.Mode
	}{{"check-client-limits", v.limits, &d.Limits}, {"check-client-bound", v.clientBound, &d.ClientBound}, {"check-client-bound-gross", v.clientBoundGross, &d.ClientBoundGross}, {"check-steady-state", v.steady, &d.Steady},
		{"check-warm-cache", v.warmCache, &d.WarmCache}, {"check-tail-samples", v.tailSamples, &d.TailSamples},
		{"check-client-distorted", v.clientDistorted, &d.ClientDistorted}} {
		if has(m.flag) {
			*m.dst = validity.Mode(m.val)
			if err := validity.ParseMode(m.val); err != nil {
				return invalidf("--%s %q: want fail, warn or off", m.flag, m.val)
			}
		}
	}
	if has("max-send-lag-ms") {
		if v.maxSendLag <= 0 {
			return invalidf("--max-send-lag-ms %v: want a positive number of milliseconds", v.maxSendLag)
		}
		d.MaxSendLag = time.Duration(v.maxSendLag * float64(time.Millisecond))
	}
	if has("max-client-overhead-ms") {
		if !(v.maxClientOverhead > 0) || math.IsInf(v.maxClientOverhead, 1) {
			return invalidf("--max-client-overhead-ms %v: want a positive number of milliseconds", v.maxClientOverhead)
		}
		d.MaxClientOverhead = time.Duration(v.maxClientOverhead * float64(time.Millisecond))
	}
	if has("gross-send-lag-ms") {
		if !(v.grossSendLag > 0) {
			return invalidf("--gross-send-lag-ms %v: want a positive number of milliseconds", v.grossSendLag)
		}
		d.GrossSendLag = time.Duration(v.grossSendLag * float64(time.Millisecond))
	}
	if has("min-achieved-rate") {
		if !(v.minAchievedRate > 0 && v.minAchievedRate <= 1) {
			return invalidf("--min-achieved-rate %v: want a fraction in (0, 1]", v.minAchievedRate)
		}
		d.MinAchievedRate = v.minAchievedRate
	}
	if has("max-schedule-lag") {
		switch l := v.maxScheduleLag; {
		case l == 0:
			sc.MaxScheduleLag = -1 // never stop
		case l > 0 && !math.IsInf(l, 1):
			sc.MaxScheduleLag = time.Duration(l * float64(time.Second))
		default:
			return invalidf("--max-schedule-lag %v: want a positive number of seconds, or 0 never to stop", l)
		}
	}
	if has("max-client-cpu") {
		d.MaxClientCPU = v.maxClientCPU
	}
	if has("max-drift") {
		d.MaxDrift = v.maxDrift
	}
	if has("max-cache-hit-rate") {
		d.MaxCacheHitRate = v.maxCacheHitRate
	}
	if has("cache-bust") {
		d.CacheBust = v.cacheBust
	}
	if has("cache-reset-url") {
		d.ResetURL = v.resetURL
	}
	return nil
}

// printPins prints what a run measured with (perfrun.Pins), one line each.
func printPins(w io.Writer, p *perfrun.Pins) {
	if p == nil {
		return
	}
	if v := p.VCS; v != nil {
		tree := "clean"
		if v.Modified {
			tree = "modified"
		}
		fmt.Fprintf(w, "perfgate:  revision %s (%s tree)\n", v.Revision, tree)
	}
	if d := p.Dataset; d != nil {
		fmt.Fprintf(w, "dataset:   sha256 %s (%d request bodies)\n", d.Fingerprint, d.Requests)
	}
	for _, s := range p.Servers {
		line := s.URL
		if s.Header != "" {
			line += "  Server: " + s.Header
		}
		if s.Version != "" {
			line += "  /version: " + s.Version
		}
		if len(s.Build) > 0 {
			keys := slices.Sorted(maps.Keys(s.Build))
			var kv []string
			for _, k := range keys {
				kv = append(kv, k+"="+s.Build[k])
			}
			line += "  build: " + strings.Join(kv, " ")
		}
		fmt.Fprintf(w, "server:    %s\n", line)
	}
	if t := p.Topology; t != nil {
		fmt.Fprintf(w, "topology:  %s → %s, RTT %v at preflight, %d shard(s)\n", t.ClientHost, strings.Join(t.Addrs, ", "), t.RTT.Round(time.Microsecond), t.Shards)
	}
}
