package perftest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
)

// synth describes a synthetic run for tests that need a Result without a server.
type synth struct {
	n          int
	ttft, itl  time.Duration // base values; each request varies by ±20%
	slowEvery  int           // every slowEvery-th request has 5× TTFT (0 = none)
	errEvery   int           // every errEvery-th request fails (0 = none)
	osl        int
	serverDiff func(i int) int // server ISL − client ISL for request i (nil = 0)
	seed       uint64
	islBase    int // ISL is uniform on [islBase, islBase+55]; 0 = 100
}

func (s synth) records() ([]record.Client, []record.Server) {
	r := rand.New(rand.NewPCG(s.seed, 2))
	var cs []record.Client
	var server []record.Server
	at := time.Duration(0)
	for i := range s.n {
		jit := func(d time.Duration) time.Duration { return time.Duration(float64(d) * (0.8 + 0.4*r.Float64())) }
		c := record.Client{Index: i, RequestID: fmt.Sprintf("req-%d", i), Endpoint: "chat", Stream: true,
			Sent: at, ISL: cmp.Or(s.islBase, 100) + r.IntN(56), OSL: s.osl, UsagePromptTokens: -1, UsageCompletionTokens: -1, Status: 200}
		ttft := jit(s.ttft)
		if s.slowEvery > 0 && i%s.slowEvery == s.slowEvery-1 {
			ttft *= 5
		}
		t := at + ttft
		for k := range s.osl {
			if k > 0 {
				t += jit(s.itl)
			}
			c.Chunks = append(c.Chunks, record.Chunk{T: t, Tokens: 1, Choices: true})
		}
		c.Done = t
		if s.errEvery > 0 && i%s.errEvery == s.errEvery-1 {
			c.Chunks, c.OSL, c.Status = nil, 0, 503
			c.ErrorKind, c.Error = record.ErrHTTPStatus, "503 Service Unavailable"
			c.Done = at + time.Millisecond
		}
		d := 0
		if s.serverDiff != nil {
			d = s.serverDiff(i)
		}
		server = append(server, record.Server{RequestID: c.RequestID, ISL: c.ISL + d, OSL: c.OSL, Stream: true, Status: 200})
		cs = append(cs, c)
		at += 10 * time.Millisecond
	}
	return cs, server
}

// result builds a Result from the synthetic run.
func (s synth) result(name string) *Result {
	cs, server := s.records()
	o := &run.Outcome{
		Scenario: scenario.Scenario{Name: name, Config: loadgen.Config{Workload: loadgen.Workload{Seed: s.seed}}},
		Mocked:   true,
		Client:   cs,
		Server:   server,
		Metrics:  loadgen.ComputeMetrics(cs, loadgen.MetricsOptions{}),
	}
	return &Result{Outcome: o, rerun: "go test -run '^TestX$' ./perftest"}
}

// runs builds k synthetic runs of one seeded workload (scenario seed s.seed), each
// drawn with its own sample seed and its TTFT and ITL scaled by speed times a
// run-to-run factor that cycles through ±1%.
func (s synth) runs(k int, speed float64) *Runs {
	var outs []*run.Outcome
	for i := range k {
		r := s
		r.seed = s.seed*100 + uint64(i)
		f := speed * (1 + 0.01*float64(i%3-1))
		r.ttft, r.itl = time.Duration(float64(s.ttft)*f), time.Duration(float64(s.itl)*f)
		res := r.result("runs")
		res.Scenario.Seed = s.seed
		outs = append(outs, res.Outcome)
	}
	return &Runs{Series: run.SeriesOf(outs...), Outcomes: outs, rerun: "go test -run '^TestX$' ./perftest"}
}
