package loadgen

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
)

// TestConstantRateAchieved runs 2,000 requests at a constant 1,000 req/s in virtual time
// (synctest) and checks the sends keep the schedule: the rate between the first and last
// send is 1,000 ± 1% and no send is later than its scheduled time. The failure path: a
// run at 900 req/s lies outside the band.
func TestConstantRateAchieved(t *testing.T) {
	rate := func(r float64) float64 {
		out, fs := runFake(t, Config{Target: Target{NoStream: true}, Load: Load{Rate: r, Arrival: ArrivalConstant}, Stop: Stop{Requests: 2000}}, 5*time.Millisecond)
		if len(out.Records) != 2000 {
			t.Fatalf("%d records; want 2000", len(out.Records))
		}
		for _, rec := range out.Records {
			if rec.Sent < rec.Scheduled {
				t.Fatalf("request %s sent at %v, before its schedule %v", rec.RequestID, rec.Sent, rec.Scheduled)
			}
		}
		sent := slices.Clone(fs.sent)
		slices.Sort(sent)
		return float64(len(sent)-1) / (sent[len(sent)-1] - sent[0]).Seconds()
	}
	within := func(got float64) bool { return got >= 990 && got <= 1010 }
	if got := rate(1000); !within(got) {
		t.Errorf("achieved rate %.2f req/s; want 1000 ± 1%%", got)
	}
	if got := rate(900); within(got) {
		t.Errorf("a 900 req/s run achieved %.2f req/s, inside 1000 ± 1%%: the check cannot fail", got)
	}
}

// BenchmarkServerArrivals sends 2,000 Poisson arrivals at 1,000 req/s over real loopback
// connections and reports how well the arrivals the server stamped (kernel receive time)
// fit Exponential{Rate: 1000}, beside the client's own schedule measured in the same run:
// ks_D_server / ks_D_schedule near 1 means the wire kept the schedule; send-lag
// percentiles show what the machine did to it. The same logic is tested without timing
// in TestPoissonArrivalsFitExponential and TestConstantRateAchieved.
//
//	go test ./loadgen -run '^$' -bench ServerArrivals -benchtime 3x
func BenchmarkServerArrivals(b *testing.B) {
	const n = 2000
	var seed uint64
	for b.Loop() {
		seed++
		g := newGroundTruth(b)
		out, err := Run(context.Background(), Config{Target: Target{NoStream: true, URLs: []string{g.URL}, Model: "ok"}, Workload: Workload{Seed: seed, ISL: fixed(8)}, Load: Load{Rate: 1000}, Stop: Stop{Requests: n}}, gpt2(b), nil)
		if err != nil {
			b.Fatal(err)
		}
		sched := make([]time.Duration, 0, n)
		lags := make([]float64, 0, n)
		for _, r := range out.Records {
			sched = append(sched, r.Scheduled)
			lags = append(lags, float64(r.Sent-r.Scheduled)/1e6)
		}
		slices.Sort(sched)
		sg := make([]float64, 0, n-1)
		for i := 1; i < len(sched); i++ {
			sg = append(sg, (sched[i] - sched[i-1]).Seconds())
		}
		arr, _, _ := g.snapshot()
		slices.SortFunc(arr, func(a, b time.Time) int { return a.Compare(b) })
		ag := make([]float64, 0, len(arr))
		for i := 1; i < len(arr); i++ {
			ag = append(ag, arr[i].Sub(arr[i-1]).Seconds())
		}
		model := distribution.Exponential{Rate: 1000}
		ks, sks := distribution.KS1(ag, model), distribution.KS1(sg, model)
		slices.Sort(lags)
		b.ReportMetric(ks.Statistic, "ks_D_server")
		b.ReportMetric(ks.Statistic/sks.Statistic, "ks_D_server/schedule")
		b.ReportMetric(float64(len(arr)-1)/arr[len(arr)-1].Sub(arr[0]).Seconds()/1000, "rate_server/target")
		b.ReportMetric(distribution.PercentileSorted(lags, 0.99), "send_lag_p99_ms")
	}
}
