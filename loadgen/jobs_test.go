package loadgen

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/record"
)

// jobsConfig is a run of synthetic chat jobs of 4 turns, each fanning out to 3
// sub-agents of 2 turns after its turn 1, against srv.
func jobsConfig(srv *mockserver.Server, requests int) Config {
	return Config{
		Target: Target{URLs: []string{srv.BaseURL()}, API: EndpointChat},
		Workload: Workload{ISL: fixed(24), OSL: fixed(6), IgnoreEOS: true, Turns: fixed(4), Seed: 4,
			SubAgents: 3, SubAgentAfterTurn: 1, SubAgentTurns: 2},
		Load: Load{Concurrency: 1}, // jobs one after another: the request count ends on a job's end
		Stop: Stop{Requests: requests},
	}
}

// TestSyntheticJobs: synthetic jobs against the mock. Every request is on both
// sides; each turn's context is its session's real history: its ISL (the messages'
// contents) is the inputs of its session's turns so far plus the answers before it
// (their OSL as the client counted their text), and the joining turn's also the
// sub-agents' last answers; the chat-template count the client made of the messages
// it sent equals the mock's count of the messages it received. A sub-agent starts
// after the turn that spawned it and the joining turn after every sub-agent's end.
func TestSyntheticJobs(t *testing.T) {
	srv := startMock(t, mockserver.Config{TTFT: spec(t, "fixed:1"), ITL: spec(t, "fixed:0.2")})
	out, err := Run(context.Background(), jobsConfig(srv, 30), gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	served := map[string]record.Server{}
	for _, s := range srv.Records() {
		served[s.RequestID] = s
	}
	if len(out.Records) != 30 || len(served) != 30 {
		t.Fatalf("%d client records, %d served; want 30 each (3 jobs of 4 + 3·2 requests)", len(out.Records), len(served))
	}
	jobs := checkJobRecords(t, out.Records, served, jobsConfig(srv, 0).Workload)
	if len(jobs) != 3 || out.Jobs == nil || out.Jobs.Jobs() != 3 {
		t.Errorf("%d jobs in the records, Outcome.Jobs %+v; want 3", len(jobs), out.Jobs)
	}
	if f := out.Metrics.Scalars["subagent_fanout"].Value; f != 3 {
		t.Errorf("subagent_fanout = %v; want 3", f)
	}
	turns := map[int]int{}
	for _, e := range out.Metrics.TTFTByTurn {
		turns[e.Turn] = e.Count
	}
	// Turn 0: 3 roots and 9 sub-agents; turn 1 the same; turns 2 and 3: the roots.
	if want := map[int]int{0: 12, 1: 12, 2: 3, 3: 3}; !mapsEqual(turns, want) {
		t.Errorf("TTFT by turn counts %v; want %v", turns, want)
	}
}

// checkJobRecords checks the records of synthetic jobs of workload w against the
// mock's (served, by request id): each request succeeded and is exact, in a job; its
// template count is the mock's; its ISL is its real context's (see TestSyntheticJobs);
// sub-agents start after their turn and the join waits for them. It returns the jobs.
func checkJobRecords(t *testing.T, recs []record.Client, served map[string]record.Server, w Workload) (jobs map[string]bool) {
	t.Helper()
	type key struct {
		conv string
		turn int
	}
	byKey := map[key]*record.Client{}
	for i := range recs {
		r := &recs[i]
		if !r.OK() || !r.ISLExact || r.Job == "" {
			t.Fatalf("%s: %s %s, exact %v, job %q", r.RequestID, r.ErrorKind, r.Error, r.ISLExact, r.Job)
		}
		byKey[key{r.Conversation, r.Turn}] = r
		if s := served[r.RequestID]; s.ISL != r.ISLTemplate || r.ISLTemplate <= r.ISL {
			t.Errorf("%s (%s turn %d): the mock counted %d tokens; the client's template count %d, contents %d",
				r.RequestID, r.Conversation, r.Turn, s.ISL, r.ISLTemplate, r.ISL)
		}
	}
	jobs = map[string]bool{}
	for k, r := range byKey {
		jobs[r.Job] = true
		want := 0
		for i := 0; i <= k.turn; i++ {
			prev := byKey[key{k.conv, i}]
			want += prev.RequestedISL
			if i < k.turn {
				want += prev.OSL
			}
		}
		root := !strings.Contains(k.conv, ".a")
		if root && k.turn > w.SubAgentAfterTurn { // after the join: the sub-agents' last answers
			for a := range w.SubAgents {
				sub := byKey[key{k.conv + ".a" + strconv.Itoa(a), w.SubAgentTurns - 1}]
				if sub == nil || sub.Job != r.Job {
					t.Fatalf("%s turn %d: sub-agent %d's last turn not recorded in job %s", k.conv, k.turn, a, r.Job)
				}
				want += sub.OSL
				if k.turn == w.SubAgentAfterTurn+1 && r.Sent < sub.Done {
					t.Errorf("%s turn %d sent at %v, before sub-agent %d ended at %v (the join)", k.conv, k.turn, r.Sent, a, sub.Done)
				}
			}
		}
		if !root && k.turn == 0 {
			parent := byKey[key{strings.Split(k.conv, ".a")[0], w.SubAgentAfterTurn}]
			if r.Sent < parent.Done {
				t.Errorf("sub-agent %s sent at %v, before the turn that spawned it ended at %v", k.conv, r.Sent, parent.Done)
			}
		}
		if r.ISL != want {
			t.Errorf("%s turn %d: ISL %d; its context's inputs and answers make %d", k.conv, k.turn, r.ISL, want)
		}
	}
	return jobs
}

func mapsEqual(a, b map[int]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestSyntheticJobsRefused: bad sub-agent settings are invalid configuration, each
// named.
func TestSyntheticJobsRefused(t *testing.T) {
	base := Config{Target: Target{URLs: []string{"http://127.0.0.1:1"}}, Workload: Workload{Turns: fixed(3)}, Stop: Stop{Requests: 1}}
	for _, c := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.SubAgents = -1 }, "want >= 0"},
		{func(c *Config) { c.SubAgentTurns = 2 }, "need subagents >= 1"},
		{func(c *Config) { c.SubAgents, c.SubAgentAfterTurn = 2, 3 }, "subagent_after_turn 3: the jobs have 3 turns"},
		{func(c *Config) { c.SubAgents, c.InputFile, c.InputFormat = 2, "x.jsonl", FormatPayloads }, "subagents need synthetic prompts"},
	} {
		cfg := base
		c.set(&cfg)
		err := cfg.Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate() = %v; want an invalid config saying %q", err, c.want)
		}
	}
	cfg := base
	cfg.SubAgents, cfg.SubAgentAfterTurn = 2, 2
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate() = %v for a fan-out after the last turn of 3", err)
	}
}

// TestSyntheticJobsAtSize: 2,000 synthetic jobs (20,000 requests, 64 users) against
// the mock, records only in the record file: every request on both sides, each turn's
// ISL its real context and the template count the mock's, as in TestSyntheticJobs;
// the job metrics over the file equal the run's live ones (which ended each job's
// tally as it finished). make test-long.
func TestSyntheticJobsAtSize(t *testing.T) {
	testutil.Long(t)
	srv := startMock(t, mockserver.Config{TTFT: spec(t, "fixed:1"), ITL: spec(t, "fixed:0.1")})
	cfg := jobsConfig(srv, 20_000)
	cfg.Concurrency = 64
	cfg.RecordFile = filepath.Join(t.TempDir(), "client.jsonl")
	cfg.DiscardRecords = true
	out, err := Run(context.Background(), cfg, gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	served := map[string]record.Server{}
	for _, s := range srv.Records() {
		served[s.RequestID] = s
	}
	f, err := os.Open(cfg.RecordFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := record.ReadClient(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 20_000 || len(served) != 20_000 || len(out.Records) != 0 {
		t.Fatalf("%d records in the file, %d served, %d kept; want 20,000, 20,000 and 0", len(recs), len(served), len(out.Records))
	}
	jobs := checkJobRecords(t, recs, served, cfg.Workload)
	file := ComputeMetrics(recs, MetricsOptions{})
	for _, name := range metric.JobMetricNames {
		g, w := out.Metrics.Scalars[name], file.Scalars[name]
		if math.Abs(g.Value-w.Value) > 1e-6*math.Max(1, math.Abs(w.Value)) {
			t.Errorf("%s = %v live; %v from the file", name, g.Value, w.Value)
		}
	}
	t.Logf("%d jobs (the last ones cut by the request count), fan-out %.3f", len(jobs), out.Metrics.Scalars["subagent_fanout"].Value)
}
