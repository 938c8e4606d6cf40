package validity

import (
	"cmp"
	"fmt"
	"time"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/record"
)

// ClientDistorted is the client-distorted verdict on a run's statistics (metrics.json's
// "stats"): the median of client_overhead (TTFT − the server's TTFT − the request's
// write, metric.ClientOverhead) against cfg.MaxClientOverhead. False when no request
// has the metric (the server reported no TTFT, or the run streamed nothing).
func ClientDistorted(stats map[string]record.Stat, cfg Config) (check.Verdict, bool) {
	st, ok := stats[record.MetricClientOverhead]
	if !ok || st.Count == 0 {
		return check.Verdict{}, false
	}
	limit := cmp.Or(cfg.MaxClientOverhead, DefaultMaxClientOverhead)
	p50 := time.Duration(st.P50 * float64(time.Millisecond))
	v := check.Verdict{Check: CheckClientDistorted, Pass: p50 <= limit, Value: p50.Seconds(), Unit: check.Seconds}
	ev := []check.Line{{Label: "overhead", Text: fmt.Sprintf("p50 %s, p90 %s, p99 %s over %d streams (TTFT − server TTFT − request write)",
		msText(st.P50), msText(st.P90), msText(st.P99), st.Count)}}
	if s, ok := stats[record.MetricServerTTFT]; ok {
		ev = append(ev, check.Line{Label: "server TTFT", Text: fmt.Sprintf("p50 %s (%d requests reported it)", msText(s.P50), s.Count)})
	}
	if t, ok := stats[record.MetricTTFT]; ok {
		ev = append(ev, check.Line{Label: "client TTFT", Text: "p50 " + msText(t.P50)})
	}
	if v.Pass {
		v.Summary = fmt.Sprintf("client overhead p50 %s <= %s", msText(st.P50), limit)
		v.Evidence = ev
		return v, true
	}
	v.Status = check.Invalid
	v.Summary = fmt.Sprintf("client-distorted: client overhead p50 %s > %s: the client's TTFT is %s above what the server measured, so latencies measure the client as much as the server",
		msText(st.P50), limit, msText(st.P50))
	v.Evidence = append(ev, check.Line{Label: "fix", Text: "give the client more CPUs or run it nearer the server; the overhead also holds the network both ways " +
		"and the server's front end before its clock starts (a long prompt's tokenization), so raise validity.max_client_overhead (--max-client-overhead-ms) for a remote server"})
	return v, true
}

// msText writes a number of milliseconds to the microsecond.
func msText(ms float64) string {
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Microsecond).String()
}
