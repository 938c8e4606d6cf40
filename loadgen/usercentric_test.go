package loadgen

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/mockserver"
)

// userAlpha is the significance level of the user-centric schedule's rate tests.
const userAlpha = 0.01

// TestUserCentricStarts: AIPerf's virtual history for 15 users, 20 turns and 1 req/s
// (the table of its user_centric_rate.py): by first send, the turns each user's
// first session has left; the new user at 0 s sends a whole session (0).
func TestUserCentricStarts(t *testing.T) {
	p := UserCentricPacer{Rate: 1, Users: 15}
	got := map[time.Duration]int{}
	for _, s := range p.Starts(20) {
		got[s.Offset] = s.Turns
	}
	want := []int{0, 6, 11, 16, 2, 7, 12, 17, 3, 8, 13, 18, 4, 9, 14} // at 0 s, 1 s, …, 14 s
	for k, w := range want {
		if n, ok := got[time.Duration(k)*time.Second]; !ok || n != w {
			t.Errorf("user first at %d s: %d turns left (present %v); want %d", k, n, ok, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d distinct first sends; want %d, one a second", len(got), len(want))
	}
	// When the users and the session's lifetime share a factor (4 users, 3 turns:
	// lifetime 2), the alternate step still gives every user its own slot.
	four := UserCentricPacer{Rate: 1, Users: 4}.Starts(3)
	offs := map[time.Duration]bool{}
	for _, s := range four {
		offs[s.Offset] = true
	}
	if len(offs) != 4 {
		t.Errorf("4 users, 3 turns: starts %+v; want four distinct offsets", four)
	}
}

// userSend is one simulated send: the user and its due time.
type userSend struct {
	user int
	due  time.Duration
}

// simulateUsers runs p's users for horizon with answers taking latency(user, k)
// after their due time, and returns every send in order of due time.
func simulateUsers(p UserCentricPacer, turns int, horizon time.Duration, latency func(user, k int) time.Duration) []userSend {
	var out []userSend
	for i, s := range p.Starts(turns) {
		u := p.User(i, s)
		now := time.Duration(0)
		for k := 0; ; k++ {
			due := u.Next(now)
			if due >= horizon {
				break
			}
			out = append(out, userSend{i, due})
			now = due + latency(i, k)
		}
	}
	slices.SortFunc(out, func(a, b userSend) int { return int(a.due - b.due) })
	return out
}

// checkUserRates tests sends against p over horizon at userAlpha: each user's share
// of the sends equal (chi-square over the users), and the sends' rate p.Rate: for
// fixed gaps, the counts of one-second bins (chi-square against Rate each); under
// Poisson, each user's gaps against an exponential of rate Rate/Users and the merged
// gaps, once every user has started, against one of Rate (KS).
func checkUserRates(sends []userSend, p UserCentricPacer, horizon time.Duration) error {
	var errs []string
	perUser := make([]float64, p.Users)
	for _, s := range sends {
		perUser[s.user]++
	}
	even := make([]float64, p.Users)
	for i := range even {
		even[i] = 1
	}
	if r := distribution.ChiSquare(perUser, even, 0); r.PValue < userAlpha {
		errs = append(errs, "per-user counts: "+r.String())
	}
	if !p.Poisson {
		bins := make([]float64, int(horizon/time.Second))
		for _, s := range sends {
			if b := int(s.due / time.Second); b < len(bins) {
				bins[b]++
			}
		}
		if r := distribution.ChiSquare(bins, slices.Repeat([]float64{1}, len(bins)), 0); r.PValue < userAlpha {
			errs = append(errs, "one-second counts: "+r.String())
		}
		// ChiSquare tests the counts' spread over time (it rescales to their total);
		// the total against the rate: Poisson, two-sided, normal approximation.
		var n float64
		for _, b := range bins {
			n += b
		}
		lambda := p.Rate * float64(len(bins))
		if pv := math.Erfc(math.Abs(n-lambda) / math.Sqrt(2*lambda)); pv < userAlpha {
			errs = append(errs, fmt.Sprintf("%g sends in %d s; the rate %g gives %g: p=%.4g", n, len(bins), p.Rate, lambda, pv))
		}
		return joinErrs(errs)
	}
	var gaps []float64
	last := make([]time.Duration, p.Users)
	seen := make([]bool, p.Users)
	for _, s := range sends {
		if seen[s.user] {
			gaps = append(gaps, (s.due - last[s.user]).Seconds())
		}
		last[s.user], seen[s.user] = s.due, true
	}
	if r := distribution.KS1(gaps, distribution.Exponential{Rate: p.Rate / float64(p.Users)}); r.Reject(userAlpha) {
		errs = append(errs, "per-user gaps: "+r.String())
	}
	var started time.Duration
	firsts := map[int]bool{}
	for _, s := range sends {
		if !firsts[s.user] {
			firsts[s.user], started = true, s.due
		}
	}
	var merged []float64
	prev := time.Duration(-1)
	for _, s := range sends {
		if s.due >= started {
			if prev >= 0 {
				merged = append(merged, (s.due - prev).Seconds())
			}
			prev = s.due
		}
	}
	if r := distribution.KS1(merged, distribution.Exponential{Rate: p.Rate}); r.Reject(userAlpha) {
		errs = append(errs, "merged gaps: "+r.String())
	}
	return joinErrs(errs)
}

func joinErrs(errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(errs, "; "))
}

// TestUserCentricRates: 8 users at 20 req/s with answers within the gap (0.4 s):
// fixed gaps (answers of 20 to 69 ms) keep every user's gap and the total rate
// exactly; Poisson gaps (seed 7; answers of 1 ms, so that hardly a gap is shorter
// than its answer) fit their exponentials, per user and merged, at alpha 0.01.
func TestUserCentricRates(t *testing.T) {
	varied := func(user, k int) time.Duration { return time.Duration(20+(user*7+k*13)%50) * time.Millisecond }
	quick := func(int, int) time.Duration { return time.Millisecond }
	horizon := 300 * time.Second
	for _, poisson := range []bool{false, true} {
		p := UserCentricPacer{Rate: 20, Users: 8, Poisson: poisson, Seed: 7}
		lat := varied
		if poisson {
			lat = quick
		}
		sends := simulateUsers(p, 5, horizon, lat)
		if err := checkUserRates(sends, p, horizon); err != nil {
			t.Errorf("%v over %v (%d sends): %v", p, horizon, len(sends), err)
		}
		if poisson {
			continue
		}
		// Fixed gaps: each user's turns exactly Gap() apart.
		last := map[int]time.Duration{}
		for _, s := range sends {
			if l, ok := last[s.user]; ok && s.due-l != p.Gap() {
				t.Fatalf("%v: user %d sent at %v after %v; want the gap %v", p, s.user, s.due, l, p.Gap())
			}
			last[s.user] = s.due
		}
	}
}

// TestUserCentricRatesCatchesSkew: the rate tests reject schedules that are not the
// pacer's: one user at twice its rate, and Poisson users 30% too fast.
func TestUserCentricRatesCatchesSkew(t *testing.T) {
	horizon := 60 * time.Second
	fast := func(int, int) time.Duration { return 10 * time.Millisecond }
	p := UserCentricPacer{Rate: 20, Users: 8}
	sends := simulateUsers(p, 5, horizon, fast)
	var extra []userSend // user 3 sends once more half-way through each gap
	for _, s := range sends {
		if s.user == 3 {
			extra = append(extra, userSend{3, s.due + p.Gap()/2})
		}
	}
	skewed := append(slices.Clone(sends), extra...)
	if err := checkUserRates(skewed, p, horizon); err == nil {
		t.Errorf("user 3 at twice its rate passed the rate tests")
	}
	pp := UserCentricPacer{Rate: 20, Users: 8, Poisson: true, Seed: 7}
	tooFast := simulateUsers(UserCentricPacer{Rate: 26, Users: 8, Poisson: true, Seed: 7}, 5, horizon, fast)
	if err := checkUserRates(tooFast, pp, horizon); err == nil {
		t.Errorf("Poisson users at 26 req/s passed the tests of 20 req/s")
	}
}

// TestUserCentricSlowAnswer: an answer later than the gap moves that user's next turn
// to the answer's end (AIPerf's realignment), and the gap holds from there.
func TestUserCentricSlowAnswer(t *testing.T) {
	p := UserCentricPacer{Rate: 10, Users: 2} // gap 200 ms
	u := p.User(0, UserStart{})
	ms := time.Millisecond
	for _, c := range []struct{ now, want time.Duration }{
		{0, 0},               // the first turn, at its start
		{50 * ms, 200 * ms},  // answered early: one gap after the first
		{700 * ms, 700 * ms}, // answered 500 ms after its due time: at once
		{710 * ms, 900 * ms}, // the gap again, from the realigned turn
	} {
		if got := u.Next(c.now); got != c.want {
			t.Errorf("Next(%v) = %v; want %v", c.now, got, c.want)
		}
	}
}

// TestUserCentricRun: 4 users at 100 req/s (gap 40 ms) of 3-turn conversations against
// the mock: every turn is due one gap after its session's previous turn, or at that
// turn's answer when the answer came later, and sent no earlier than due; the first
// turns of the first sessions are due at the virtual history's offsets.
func TestUserCentricRun(t *testing.T) {
	srv := startMock(t, mockserver.Config{TTFT: spec(t, "fixed:1"), ITL: spec(t, "fixed:0.2")})
	p := UserCentricPacer{Rate: 100, Users: 4}
	cfg := Config{
		Target:   Target{URLs: []string{srv.BaseURL()}, API: EndpointChat},
		Workload: Workload{ISL: fixed(16), OSL: fixed(4), Turns: fixed(3), Seed: 2},
		Load:     Load{Concurrency: 4, UserCentricRate: 100},
		Stop:     Stop{Requests: 24},
	}
	out, err := Run(context.Background(), cfg, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Records) != 24 || out.Mode != p.String() {
		t.Fatalf("%d records, mode %q; want 24, %q", len(out.Records), out.Mode, p.String())
	}
	starts := map[time.Duration]bool{}
	for _, s := range p.Starts(3) {
		starts[s.Offset] = true
	}
	byConv := map[string][]int{}
	for i, r := range out.Records {
		if !r.OK() || r.Sent < r.Scheduled {
			t.Errorf("%s: %s %s, sent %v, due %v", r.RequestID, r.ErrorKind, r.Error, r.Sent, r.Scheduled)
		}
		if r.Conversation != "" {
			byConv[r.Conversation] = append(byConv[r.Conversation], i)
		}
	}
	for c, idx := range byConv {
		slices.SortFunc(idx, func(a, b int) int { return out.Records[a].Turn - out.Records[b].Turn })
		for k := 1; k < len(idx); k++ {
			prev, r := out.Records[idx[k-1]], out.Records[idx[k]]
			if r.Scheduled != prev.Scheduled+p.Gap() && (r.Scheduled < prev.Done || r.Scheduled < prev.Scheduled+p.Gap()) {
				t.Errorf("%s turn %d due at %v; previous due %v, answered %v, gap %v", c, r.Turn, r.Scheduled, prev.Scheduled, prev.Done, p.Gap())
			}
		}
	}
	// The four earliest due times are the users' first turns (the last starts 30 ms
	// in, and every later turn is due a gap of 40 ms after one of them).
	var dues []time.Duration
	for _, r := range out.Records {
		dues = append(dues, r.Scheduled)
	}
	slices.Sort(dues)
	for _, d := range dues[:4] {
		if !starts[d] {
			t.Errorf("earliest due times %v; want the users' starts %v", dues[:4], starts)
			break
		}
	}
}
