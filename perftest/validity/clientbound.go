package validity

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
)

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
// band. The mode is the one the verdict takes ([Config.ClientBound],
// [Config.ClientBoundGross]; apply it with [Apply]): ModeFail for a run the load
// generator stopped, the gross band's for a gross one, the marginal band's otherwise,
// ModeOff when the verdict is not to be listed. A run an abort rule stopped (not the
// schedule watch: s.AbortedBy) is not client-bound for having stopped.
func ClientBound(s loadgen.Self, cfg Config, openLoop, mocked bool) (check.Verdict, Mode) {
	if s.AbortedBy != "" && s.AbortedBy != loadgen.AbortSchedule {
		s.Aborted = "" // stopped by an abort rule, not behind its schedule: not client-bound for that
	}
	maxLag := cmp.Or(cfg.MaxSendLag, DefaultMaxSendLag)
	grossLag := cmp.Or(cfg.GrossSendLag, DefaultGrossSendLag)
	minRate := cmp.Or(cfg.MinAchievedRate, DefaultMinAchievedRate)
	maxCPU := cmp.Or(cfg.MaxClientCPU, DefaultMaxClientCPU)
	marginal, grossMode := cfg.ClientBound.Or(ModeWarn), cfg.ClientBoundGross.Or(ModeFail)
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
			metric.GroupDigits(s.AchievedRate), 100*s.AchievedRate/s.OfferedRate, metric.GroupDigits(s.OfferedRate), 100*minRate))
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

// SelfEvidence renders a run's self-measurement as verdict evidence lines.
func SelfEvidence(s loadgen.Self) []check.Line {
	lag := "not measured (closed loop or a concurrency ceiling)"
	if s.SendLag.N > 0 {
		lag = lagText(s.SendLag)
	}
	ls := []check.Line{{Label: "send lag", Text: lag}}
	if s.OfferedRate > 0 {
		ls = append(ls, check.Line{Label: "rate", Text: fmt.Sprintf("%s req/s achieved of %s offered (%.0f%%), over the measured sends",
			metric.GroupDigits(s.AchievedRate), metric.GroupDigits(s.OfferedRate), 100*s.AchievedRate/s.OfferedRate)})
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
