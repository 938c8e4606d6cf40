package loadgen

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
)

// TestServerSeesPoissonArrivals sends Poisson arrivals at 1,000 req/s over real
// loopback connections and tests the inter-arrival times taken at the server against
// Exponential{Rate: 1000} with a one-sample KS test, alpha = 0.01.
func TestServerSeesPoissonArrivals(t *testing.T) {
	if testutil.Short() {
		t.Skip("2 s of load at 1,000 req/s; skipped with -short")
	}
	g := newGroundTruth(t)
	const n = 2000
	out, err := Run(context.Background(), Config{URLs: []string{g.URL}, Model: "ok", Rate: 1000, Requests: n, Seed: 5, ISL: fixed(8)}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The client's own schedule must fit (this part cannot be disturbed by load).
	sched := make([]time.Duration, 0, n)
	lags := make([]float64, 0, n)
	for _, r := range out.Records {
		sched = append(sched, r.Scheduled)
		lags = append(lags, float64(r.Sent-r.Scheduled)/1e6)
	}
	slices.Sort(sched)
	sg := make([]float64, n-1)
	for i := range sg {
		sg[i] = (sched[i+1] - sched[i]).Seconds()
	}
	if ks := distribution.KS1(sg, distribution.Exponential{Rate: 1000}); ks.Reject(0.01) {
		t.Errorf("scheduled inter-arrivals do not fit Exponential{Rate: 1000}: %v (alpha 0.01)", ks)
	}
	// At the server, arrivals also carry the machine's scheduling noise. If the
	// process was starved of CPU (other processes on a shared 2-core machine), the
	// send lag says so and the server-side test is not meaningful.
	if lag := distribution.Percentile(lags, 0.9); lag > 1 {
		t.Skipf("send lag p90 = %.2f ms (> 1 ms): the process was starved of CPU; server-side KS skipped", lag)
	}
	arr, _, _ := g.snapshot()
	if len(arr) != n {
		t.Fatalf("server saw %d requests; want %d", len(arr), n)
	}
	slices.SortFunc(arr, func(a, b time.Time) int { return a.Compare(b) })
	gaps := make([]float64, n-1)
	for i := range gaps {
		gaps[i] = arr[i+1].Sub(arr[i]).Seconds()
	}
	ks := distribution.KS1(gaps, distribution.Exponential{Rate: 1000})
	t.Logf("server inter-arrivals vs Exponential{1000}: %v", ks)
	if ks.Reject(0.01) {
		t.Errorf("server inter-arrival times do not fit Exponential{Rate: 1000}: %v (alpha 0.01)", ks)
	}
}

// TestAchievedRate sends 2,000 requests at a constant 1,000 req/s and checks the
// rate the server saw is within 1% of it.
func TestAchievedRate(t *testing.T) {
	if testutil.Short() {
		t.Skip("2 s of load; skipped with -short")
	}
	g := newGroundTruth(t)
	const n = 2000
	_, err := Run(context.Background(), Config{URLs: []string{g.URL}, Model: "ok", Rate: 1000, Arrival: ArrivalConstant, Requests: n, ISL: fixed(8)}, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	arr, _, _ := g.snapshot()
	slices.SortFunc(arr, func(a, b time.Time) int { return a.Compare(b) })
	rate := float64(len(arr)-1) / arr[len(arr)-1].Sub(arr[0]).Seconds()
	t.Logf("achieved %.2f req/s at the server (want 1000)", rate)
	if rate < 990 || rate > 1010 {
		t.Errorf("achieved rate %.2f req/s; want 1000 ± 1%%", rate)
	}
}
