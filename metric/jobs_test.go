package metric

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/record"
)

const ms1 = time.Millisecond

// req is an agent job's streamed request: scheduled at sched, sent then, first token
// ttft after, done at done (ms), ok unless failed.
func req(job, session string, turn int, sched, ttft, done, tool time.Duration, failed bool) record.Client {
	r := record.Client{Job: job, Conversation: session, Turn: turn, Stream: true, Scheduled: sched, Sent: sched, Done: done,
		ToolWait: tool, Status: 200, OSL: 2, ISLExact: true, UsagePromptTokens: -1,
		Chunks: []record.Chunk{{T: sched + ttft, Tokens: 1}, {T: done, Tokens: 1}}}
	if failed {
		r.Status, r.ErrorKind, r.Chunks = 500, record.ErrHTTPStatus, nil
	}
	return r
}

// TestJobMetrics: two jobs (one with two sub-agents, one with a failed request), their
// latencies, TTFTs, fan-out, tool share and goodput under an SLO; a job with a warmup
// request is left out.
func TestJobMetrics(t *testing.T) {
	recs := []record.Client{
		req("job-0", "a", 0, 0, 10*ms1, 50*ms1, 0, false),
		req("job-0", "a.1", 0, 60*ms1, 5*ms1, 90*ms1, 0, false),
		req("job-0", "a.2", 0, 60*ms1, 30*ms1, 100*ms1, 0, false), // TTFT 30 ms: misses the SLO
		req("job-0", "a", 1, 140*ms1, 10*ms1, 200*ms1, 40*ms1, false),
		req("job-5", "b", 0, 20*ms1, 15*ms1, 70*ms1, 0, false),
		req("job-5", "b", 1, 80*ms1, 0, 120*ms1, 20*ms1, true),
		req("job-9", "c", 0, 30*ms1, 5*ms1, 40*ms1, 0, false),
	}
	recs[6].Warmup = true
	slo := SLO{TTFT: 20 * ms1}
	m := Compute(recs, Options{}, &slo)
	want := map[string]float64{
		"job_latency_p50": 150, "job_latency_p99": 200 - 0.01*100, // latencies 200 and 100 ms
		"job_ttft_p50": 12.5, "subagent_fanout": 1, "tool_wait_share": 60.0 / 300,
		"job_goodput": 0, "jobs_per_hour_per_user": 3600e3 * 2 / 300,
	}
	for name, w := range want {
		got, ok := m.Scalars[name]
		if !ok || math.Abs(got.Value-w) > 1e-9 {
			t.Errorf("%s = %v (reported %v); want %v", name, got.Value, ok, w)
		}
	}
	// Without the sub-agent that missed the SLO, job-0 is good: half the jobs.
	recs[2].Chunks[0].T = recs[2].Sent + 5*ms1
	if g := Compute(recs, Options{}, &slo).Scalars["job_goodput"].Value; g != 0.5 {
		t.Errorf("job_goodput = %v with job-0 good and job-5 failed; want 0.5", g)
	}
	if _, ok := Compute(recs, Options{}, nil).Scalars["job_goodput"]; ok {
		t.Errorf("job_goodput reported without an SLO")
	}
	if jt := JobMetrics(recs, Options{}, nil); jt.Jobs() != 2 {
		t.Errorf("JobMetrics: %d jobs; want 2", jt.Jobs())
	}
	// TTFT by turn: turn 0's 10, 5, 30 and 15 ms (the warmup request left out), turn
	// 1's 10 ms (the failed request left out); numpy's linear quantiles, within the
	// sketch's error.
	wantTurns := []record.TurnTTFT{{Turn: 0, Count: 4, P50: 12.5, P99: 15 + 0.97*15}, {Turn: 1, Count: 1, P50: 10, P99: 10}}
	if got := m.TTFTByTurn; !turnsNear(got, wantTurns) {
		t.Errorf("TTFTByTurn = %+v; want %+v", got, wantTurns)
	}
	if m := Compute(recs[6:], Options{}, nil); len(m.Scalars) > 0 {
		for name := range m.Scalars {
			if name[:3] == "job" || name == "subagent_fanout" {
				t.Errorf("%s reported for a run whose only job is warmup", name)
			}
		}
	}
}

// turnsNear reports whether got has want's turns and counts, and quantiles within
// the sketch's relative error.
func turnsNear(got, want []record.TurnTTFT) bool {
	if len(got) != len(want) {
		return false
	}
	near := func(x, y float64) bool { return math.Abs(x-y) <= SketchRelativeError*math.Abs(y)+1e-9 }
	for i := range got {
		g, w := got[i], want[i]
		if g.Turn != w.Turn || g.AndLater != w.AndLater || g.Count != w.Count || !near(g.P50, w.P50) || !near(g.P99, w.P99) {
			return false
		}
	}
	return true
}

// TestTTFTByTurnBounded: a conversation of 200 turns gives TTFTTurns entries, the
// last pooling turns 63 to 199; single-turn requests (no session) give none, and the
// accumulator's size does not grow with the requests of a turn.
func TestTTFTByTurnBounded(t *testing.T) {
	a := NewAccumulator(Options{})
	for k := range 200 {
		r := req("", "conv", k, 0, time.Duration(k+1)*ms1, 300*ms1, 0, false)
		a.Add(&r)
	}
	single := req("", "", 0, 0, 7*ms1, 300*ms1, 0, false)
	a.Add(&single)
	got := a.Metrics().TTFTByTurn
	if len(got) != record.TTFTTurns {
		t.Fatalf("%d entries for 200 turns; want %d", len(got), record.TTFTTurns)
	}
	last := got[len(got)-1]
	// Turns 63..199 have TTFTs 64..200 ms: median 132, p99 64 + 0.99·136.
	want := record.TurnTTFT{Turn: record.TTFTTurns - 1, AndLater: true, Count: 200 - (record.TTFTTurns - 1), P50: 132, P99: 64 + 0.99*136}
	if !turnsNear([]record.TurnTTFT{last}, []record.TurnTTFT{want}) || got[0].Count != 1 || got[0].P50 > 1.001 {
		t.Errorf("entries %+v … %+v; want turn 0 alone (1 ms, not the single-turn 7 ms) and %+v", got[0], last, want)
	}
	// A turn's sketch does not grow with its requests: 10,000 more at one TTFT.
	before := a.Bytes()
	for range 10_000 {
		r := req("", "conv", 3, 0, 4*ms1, 300*ms1, 0, false)
		a.addTurn(&r)
	}
	if after := a.Bytes(); after != before {
		t.Errorf("Bytes() %d → %d after 10,000 requests at one turn; want no growth", before, after)
	}
	if m := Compute([]record.Client{single}, Options{}, nil); m.TTFTByTurn != nil {
		t.Errorf("TTFTByTurn = %+v for single-turn requests; want nil", m.TTFTByTurn)
	}
}

// TestEndJobBounded: 20,000 jobs (5,000 under -short) of a root and two sub-agent
// requests, each ended when its last record is added, leave no job in flight (the
// tallies are dropped), and give the metrics of the same records summarised without
// ends.
func TestEndJobBounded(t *testing.T) {
	jobs := 20_000
	if testutil.Short() {
		jobs = 5_000
	}
	a, b := NewAccumulator(Options{}), NewAccumulator(Options{}) // b: the same records, no ends
	a.TotalsOnly()                                               // the job metrics are run-level: no per-request store needed
	b.TotalsOnly()
	most := 0
	for k := range jobs {
		job := fmt.Sprintf("job-%d", 3*k)
		at := time.Duration(k) * ms1
		js := []record.Client{
			req(job, "r", 0, at, 2*ms1, at+10*ms1, 0, false),
			req(job, "r.a0", 0, at+11*ms1, time.Duration(1+k%7)*ms1, at+20*ms1, 0, false),
			req(job, "r.a1", 0, at+11*ms1, 3*ms1, at+25*ms1, time.Duration(k%3)*ms1, k%50 == 0),
		}
		for i := range js {
			a.Add(&js[i])
			b.Add(&js[i])
			most = max(most, len(a.jobs.jobs))
		}
		a.EndJob(job)
	}
	if most != 1 || len(a.jobs.jobs) != 0 {
		t.Errorf("jobs in flight: at most %d, at the end %d; want 1 and 0", most, len(a.jobs.jobs))
	}
	got, want := a.Metrics(), b.Metrics()
	for _, name := range JobMetricNames {
		g, gok := got.Scalars[name]
		w, wok := want.Scalars[name]
		if gok != wok || math.Abs(g.Value-w.Value) > 1e-9*math.Max(1, math.Abs(w.Value)) {
			t.Errorf("%s = %v (%v) with ends; %v (%v) without", name, g.Value, gok, w.Value, wok)
		}
	}
	// A warmup job ended is dropped; an unknown job's end is ignored.
	w := req("job-w", "w", 0, 0, ms1, 5*ms1, 0, false)
	w.Warmup = true
	a.Add(&w)
	a.EndJob("job-w")
	a.EndJob("nobody")
	if n := a.Jobs().Jobs(); n != jobs {
		t.Errorf("%d jobs after a warmup job and an unknown end; want %d", n, jobs)
	}
}
