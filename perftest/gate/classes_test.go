package gate

import (
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/perftest/check"
)

// classStats returns a class's primary statistics for runs of speed factors f, as
// ttft_p50{class=NAME}, …: what a run of several classes records beside the run's.
func classStats(name string, f []float64) map[string][]float64 {
	out := map[string][]float64{}
	for _, s := range []struct {
		stat string
		v    float64
		inv  bool
	}{{"ttft_p50", 0.08, false}, {"itl_p50", 0.02, false}, {"latency_p50", 0.5, false}, {"output_tps", 200, true}} {
		xs := make([]float64, len(f))
		for i, x := range f {
			if s.inv {
				xs[i] = s.v / x
			} else {
				xs[i] = s.v * x
			}
		}
		out[s.stat+"{class="+name+"}"] = xs
	}
	return out
}

// TestGatePerClass: a class's statistics are compared as the run's are, its primary
// ones gating: a batch class 25% slower fails the gate while the run as a whole and
// the chat class hold, the verdict naming the class; a scoped statistic is known to
// Validate (margins, fail) and to LookupRunStat, and a malformed scope is not.
func TestGatePerClass(t *testing.T) {
	w := Workload{Settings: [][2]string{{"isl", "fixed:64"}}}
	both := func(chat, batch []float64) map[string][]float64 {
		m := classStats("chat", chat)
		for k, v := range classStats("batch", batch) {
			m[k] = v
		}
		return m
	}
	base := series(w, noise5, both(noise5, noise5))
	r := Compare(base, series(w, noise5, both(noise5, scale(noise5, 1.25))), Gate{}, 0)
	if r.Pass() || r.Change() != check.ChangeRegressed {
		t.Fatalf("batch 25%% slower: pass %v, %v; want regressed\n%s", r.Pass(), r.Change(), r.Headline())
	}
	if !strings.Contains(r.Headline(), "TTFT p50 {class=batch} +25.0%") || strings.Contains(r.Headline(), "class=chat") {
		t.Errorf("headline %q: want the batch class's regression alone", r.Headline())
	}
	for i, s := range r.Stats {
		if strings.HasSuffix(s, "{class=chat}") && r.Gating[i] && !r.Verdicts[i].Pass {
			t.Errorf("%s failed: %s", s, r.Verdicts[i])
		}
	}
	for _, s := range []string{"ttft_p50{class=chat}", "output_tps{class=batch}", "ttft_p50"} {
		if !slices.Contains(r.Stats, s) {
			t.Errorf("no comparison of %s among %v", s, r.Stats)
		}
	}
	// A margin named for the statistic covers its classes' too, unless a class's is named.
	if r := Compare(base, series(w, noise5, both(noise5, scale(noise5, 1.25))), Gate{Margins: map[string]float64{"ttft_p50": 0.5, "itl_p50": 0.5, "latency_p50": 0.5, "output_tps": 0.5}}, 0); !r.Pass() {
		t.Errorf("batch 25%% slower within a 50%% margin: %s", r.Headline())
	}
	if r := Compare(base, series(w, noise5, both(noise5, scale(noise5, 1.25))), Gate{Margins: map[string]float64{"ttft_p50": 0.5, "itl_p50": 0.5, "latency_p50": 0.5, "output_tps": 0.5, "ttft_p50{class=batch}": 0.05}}, 0); r.Pass() {
		t.Errorf("batch 25%% slower, its own TTFT margin 5%%: %s", r.Headline())
	}
	if r := Compare(base, series(w, noise5, both(noise5, noise5)), Gate{}, 0); !r.Pass() {
		t.Errorf("no class changed: %s", r.Headline())
	}
	st, ok := LookupRunStat("ttft_p99{class=batch}")
	if !ok || st.Name != "ttft_p99{class=batch}" || st.Label != "TTFT p99 {class=batch}" || st.Unit != check.Seconds {
		t.Errorf("LookupRunStat: %+v, %v", st, ok)
	}
	if err := (Gate{Fail: []string{"ttft_p99{class=batch}"}, Margins: map[string]float64{"output_tps{class=chat}": 0.1}}).Validate(); err != nil {
		t.Errorf("scoped statistics named: %v", err)
	}
	if err := (Gate{Fail: []string{"ttft_p99{zone=a}"}}).Validate(); err == nil {
		t.Error("a malformed scope was accepted")
	}
}
