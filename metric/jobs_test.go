package metric

import (
	"math"
	"testing"
	"time"

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
	jt := JobMetrics(recs, Options{}, nil)
	if jt.Jobs() != 2 || len(jt.TurnTTFT) != 2 || len(jt.TurnTTFT[0]) != 4 || len(jt.TurnTTFT[1]) != 1 {
		t.Errorf("JobMetrics: %d jobs, TTFT by turn %v; want 2 jobs, 4 TTFTs at turn 0 and 1 at turn 1", jt.Jobs(), jt.TurnTTFT)
	}
	if m := Compute(recs[6:], Options{}, nil); len(m.Scalars) > 0 {
		for name := range m.Scalars {
			if name[:3] == "job" || name == "subagent_fanout" {
				t.Errorf("%s reported for a run whose only job is warmup", name)
			}
		}
	}
}
