package loadgen

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/record"
)

// writeTrace writes the synthetic agent trace spec to a file of the test's.
func writeTrace(t *testing.T, spec dataset.AgentTraceSpec) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := dataset.WriteAgentTrace(f, spec); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// traceTurns reads a trace back: every turn by "session/turn", and every job.
func traceTurns(t *testing.T, path string) (map[string]dataset.AgentTurn, []*dataset.AgentJob) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	turns := map[string]dataset.AgentTurn{}
	var jobs []*dataset.AgentJob
	var walk func(s *dataset.AgentSession)
	walk = func(s *dataset.AgentSession) {
		for k, tu := range s.Turns {
			turns[turnKey(s.ID, k)] = tu
			for _, a := range tu.Agents {
				walk(a)
			}
		}
	}
	a := dataset.NewAgentTrace(f, 0)
	for j, ok := a.Next(); ok; j, ok = a.Next() {
		walk(j.Root)
		jobs = append(jobs, j)
	}
	if a.Err() != nil {
		t.Fatal(a.Err())
	}
	return turns, jobs
}

func turnKey(session string, turn int) string { return session + "/" + strconv.Itoa(turn) }

// checkAgentReplay checks a replay of the trace at path against the mock's records:
// every request on both sides, each turn's ISL the trace's input_tokens as the client
// sent it and as the server counted it, each job's records under one job id, and the
// order of a job: a turn after the previous one's answer and its waits, a sub-agent
// after the turn that started it, a joining turn after every sub-agent's last answer.
func checkAgentReplay(t *testing.T, path string, out *Outcome, srv *mockserver.Server) {
	t.Helper()
	turns, jobs := traceTurns(t, path)
	srv.Close() // every answered request recorded
	if len(out.Records) != len(turns) {
		t.Fatalf("%d client records; the trace has %d turns", len(out.Records), len(turns))
	}
	served := map[string]record.Server{}
	for _, s := range srv.Records() {
		served[s.RequestID] = s
	}
	if len(served) != len(turns) {
		t.Errorf("the mock served %d requests; the trace has %d turns", len(served), len(turns))
	}
	byKey := map[string]*record.Client{}
	for i := range out.Records {
		r := &out.Records[i]
		if !r.OK() {
			t.Fatalf("%s failed: %s %s", r.RequestID, r.ErrorKind, r.Error)
		}
		k := turnKey(r.Conversation, r.Turn)
		tu, ok := turns[k]
		if !ok || byKey[k] != nil {
			t.Fatalf("record %s: turn %s not in the trace, or sent twice", r.RequestID, k)
		}
		byKey[k] = r
		if r.ISL != tu.InputTokens || !r.ISLExact || served[r.RequestID].ISL != tu.InputTokens {
			t.Errorf("%s: ISL %d sent (exact %v), %d served; the trace says %d", k, r.ISL, r.ISLExact, served[r.RequestID].ISL, tu.InputTokens)
		}
		if r.ThinkTime+r.ToolWait > tu.Delay+tu.ToolWait+time.Microsecond || r.Job == "" {
			t.Errorf("%s: waits %v + %v, job %q; want at most the trace's %v + %v, and a job", k, r.ThinkTime, r.ToolWait, r.Job, tu.Delay, tu.ToolWait)
		}
	}
	for _, j := range jobs {
		root := byKey[turnKey(j.ID, 0)]
		if root.Job != jobID(root.Index) {
			t.Errorf("job %s: id %q; want %q, its first request's", j.ID, root.Job, jobID(root.Index))
		}
		checkOrder(t, j.Root, byKey, root.Job)
	}
	checkJobMetrics(t, out)
}

// checkJobMetrics computes the job metrics from the records, apart from package
// metric, and compares them with the run's.
func checkJobMetrics(t *testing.T, out *Outcome) {
	t.Helper()
	type job struct {
		start, end, firstToken time.Duration
		sessions               map[string]bool
		tool                   time.Duration
	}
	jobs := map[string]*job{}
	var first, last time.Duration = -1, 0
	turns := map[int]int{}
	for _, r := range out.Records {
		j := jobs[r.Job]
		if j == nil {
			j = &job{start: r.Scheduled, sessions: map[string]bool{}}
			jobs[r.Job] = j
		}
		if r.Scheduled <= j.start {
			ft, _ := r.FirstToken()
			j.start, j.firstToken = r.Scheduled, ft
		}
		j.end = max(j.end, r.Done)
		j.sessions[r.Conversation] = true
		j.tool += r.ToolWait
		if first < 0 || r.Sent < first {
			first = r.Sent
		}
		last = max(last, r.Done)
		turns[r.Turn]++
	}
	var lat, ttft []float64
	var fan, tool, sumLat float64
	for _, j := range jobs {
		l := float64(j.end-j.start) / 1e6
		lat, sumLat = append(lat, l), sumLat+l
		ttft = append(ttft, float64(j.firstToken-j.start)/1e6)
		fan += float64(len(j.sessions) - 1)
		tool += float64(j.tool) / 1e6
	}
	// numpy's linear quantile
	q := func(xs []float64, p float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		h := p * float64(len(s)-1)
		lo := int(h)
		if lo+1 >= len(s) {
			return s[len(s)-1]
		}
		return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
	}
	n := float64(len(jobs))
	for name, want := range map[string]float64{
		"job_latency_p50": q(lat, 0.5), "job_latency_p90": q(lat, 0.9), "job_latency_p99": q(lat, 0.99),
		"job_ttft_p50": q(ttft, 0.5), "job_ttft_p99": q(ttft, 0.99),
		"jobs_per_hour": n / (float64(last-first) / 1e9) * 3600, "jobs_per_hour_per_user": 3600e3 * n / sumLat,
		"subagent_fanout": fan / n, "tool_wait_share": tool / sumLat,
	} {
		got, ok := out.Metrics.Scalars[name]
		if !ok || math.Abs(got.Value-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v (reported %v); computed from the records: %v", name, got.Value, ok, want)
		}
	}
	if out.Jobs == nil || out.Jobs.Jobs() != len(jobs) {
		t.Fatalf("Outcome.Jobs %+v; want %d jobs", out.Jobs, len(jobs))
	}
	for _, e := range out.Metrics.TTFTByTurn {
		if e.Count != turns[e.Turn] {
			t.Errorf("turn %d: %d TTFTs; %d requests at that turn", e.Turn, e.Count, turns[e.Turn])
		}
	}
}

// checkOrder checks a session's records: one job id, each turn sent after the
// previous answer plus its waits, sub-agents after their turn and before the join.
func checkOrder(t *testing.T, s *dataset.AgentSession, byKey map[string]*record.Client, job string) {
	t.Helper()
	for k := range s.Turns {
		r := byKey[turnKey(s.ID, k)]
		if r.Job != job {
			t.Errorf("%s turn %d: job %q; want %q", s.ID, k, r.Job, job)
		}
		if k > 0 {
			prev := byKey[turnKey(s.ID, k-1)]
			if r.Sent < prev.Done+r.ThinkTime+r.ToolWait {
				t.Errorf("%s turn %d sent at %v, before turn %d's answer at %v plus its waits %v", s.ID, k, r.Sent, k-1, prev.Done, r.ThinkTime+r.ToolWait)
			}
			for _, a := range s.Turns[k-1].Agents {
				last := byKey[turnKey(a.ID, len(a.Turns)-1)]
				if r.Sent < last.Done {
					t.Errorf("%s turn %d sent at %v, before its sub-agent %s ended at %v (the join)", s.ID, k, r.Sent, a.ID, last.Done)
				}
			}
		}
		for _, a := range s.Turns[k].Agents {
			if first := byKey[turnKey(a.ID, 0)]; first.Sent < r.Done {
				t.Errorf("sub-agent %s sent at %v, before %s turn %d's answer at %v", a.ID, first.Sent, s.ID, k, r.Done)
			}
			checkOrder(t, a, byKey, job)
		}
	}
}

// agentConfig replays the trace at path against srv with users concurrent jobs.
func agentConfig(srv *mockserver.Server, path string, users int) Config {
	return Config{
		Target:   Target{URLs: []string{srv.BaseURL()}, API: EndpointCompletions},
		Workload: Workload{InputFile: path, InputFormat: FormatAgentTrace, BlockTokens: 16, IgnoreEOS: true, Seed: 3},
		Load:     Load{Concurrency: users, Speedup: 100},
	}
}

// TestAgentReplay replays a small agent trace against the mock: see checkAgentReplay.
// The turns of a session share their prompt's prefix, so the mock's prefix cache
// serves part of every later turn.
func TestAgentReplay(t *testing.T) {
	ts := dataset.AgentTraceSpec{Jobs: 5, Turns: 4, FanOut: 3, FanOutEvery: 2, SubTurns: 2, Rate: 5,
		InputTokens: 40, GrowTokens: 8, OutputTokens: 4, BlockTokens: 16, SharedBlocks: 1, ThinkMS: 100, ToolMS: 200, ToolShare: 0.5, Seed: 11}
	path := writeTrace(t, ts)
	srv := startMock(t, mockserver.Config{TTFT: spec(t, "fixed:1"), ITL: spec(t, "fixed:0.2")})
	out, err := Run(context.Background(), agentConfig(srv, path, 3), gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkAgentReplay(t, path, out, srv)
	cached := 0
	for _, s := range srv.Records() { // after checkAgentReplay closed it
		cached += s.CachedTokens
	}
	if cached == 0 {
		t.Errorf("the mock's prefix cache served no token of the replay")
	}
}

// TestAgentReplayAtSize replays 2,000 jobs of 20 turns with a fan-out of 4 (48,000
// requests) against the mock with 64 concurrent jobs: see checkAgentReplay.
func TestAgentReplayAtSize(t *testing.T) {
	testutil.Long(t)
	ts := dataset.AgentTraceSpec{Jobs: 2000, Turns: 20, FanOut: 4, FanOutEvery: 10, SubTurns: 1, Rate: 50,
		InputTokens: 48, GrowTokens: 6, OutputTokens: 3, BlockTokens: 16, SharedBlocks: 1, ThinkMS: 20, ToolMS: 50, ToolShare: 0.3, Seed: 2000}
	path := writeTrace(t, ts)
	srv := startMock(t, mockserver.Config{TTFT: spec(t, "fixed:0.5"), ITL: spec(t, "fixed:0.1")})
	out, err := Run(context.Background(), agentConfig(srv, path, 64), gpt2(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkAgentReplay(t, path, out, srv)
}

// TestAgentTraceRefusedBeforeSending: a bad line anywhere in the trace is invalid
// configuration naming FILE:LINE, found before any request.
func TestAgentTraceRefusedBeforeSending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	in := `{"session_id":"a","turn":0,"t":0,"input_tokens":10,"output_tokens":5}
{"session_id":"b","parent_session_id":"a","turn":0,"delay":1,"input_tokens":10,"output_tokens":5}
{"session_id":"a","parent_session_id":"b","turn":1,"delay":1,"input_tokens":20,"output_tokens":5}
`
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startMock(t, mockserver.Config{})
	_, err := Run(context.Background(), agentConfig(srv, path, 1), gpt2(t), nil)
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), path+":3: cycle in parent_session_id: a → b → a") {
		t.Errorf("error %v; want invalid config at %s:3 naming the cycle", err, path)
	}
	if n := len(srv.Records()); n != 0 {
		t.Errorf("%d requests reached the mock", n)
	}
	cfg := agentConfig(srv, path, 1)
	cfg.MaxContext = 12
	if err := os.WriteFile(path, []byte(in[:strings.Index(in, "\n")+1]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), cfg, gpt2(t), nil); err == nil || !strings.Contains(err.Error(), path+":1: input_tokens 10 + output_tokens 5 = 15 tokens, over the model's context of 12") {
		t.Errorf("error %v; want the context refused at %s:1", err, path)
	}
}

// TestSessionAffinity: with a session header every turn of a session carries one
// value, different from every other session's, as the mock recorded it; under
// sticky-user-sessions every turn of a session comes on one connection, under never
// every request on a connection of its own.
func TestSessionAffinity(t *testing.T) {
	ts := dataset.AgentTraceSpec{Jobs: 3, Turns: 4, FanOut: 2, FanOutEvery: 2, SubTurns: 2, Rate: 5,
		InputTokens: 30, GrowTokens: 4, OutputTokens: 3, BlockTokens: 16, ThinkMS: 50, Seed: 5}
	path := writeTrace(t, ts)
	for _, reuse := range []string{ReusePooled, ReuseSticky, ReuseNever} {
		t.Run(reuse, func(t *testing.T) {
			srv := startMock(t, mockserver.Config{TTFT: spec(t, "fixed:1"), ITL: spec(t, "fixed:0.2"), SessionHeader: "X-Session-Id"})
			cfg := agentConfig(srv, path, 2)
			cfg.SessionHeader, cfg.ConnectionReuse = "X-Session-Id", reuse
			out, err := Run(context.Background(), cfg, gpt2(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			srv.Close() // every answered request recorded
			served := map[string]record.Server{}
			for _, s := range srv.Records() {
				served[s.RequestID] = s
			}
			value := map[string]string{}   // client session → header value
			owner := map[string]string{}   // header value → client session
			conns := map[string][]string{} // client session → connections
			connUse := map[string]int{}
			for _, r := range out.Records {
				s, ok := served[r.RequestID]
				if !ok || s.Session == "" || s.Peer == "" {
					t.Fatalf("%s: served %v with session %q from %q; want a value and a connection", r.RequestID, ok, s.Session, s.Peer)
				}
				key := r.Job + "/" + r.Conversation
				if v, seen := value[key]; seen && v != s.Session {
					t.Errorf("session %s carried %q and %q", key, v, s.Session)
				}
				if o, seen := owner[s.Session]; seen && o != key {
					t.Errorf("value %q carried by sessions %s and %s", s.Session, o, key)
				}
				value[key], owner[s.Session] = s.Session, key
				if !slices.Contains(conns[key], s.Peer) {
					conns[key] = append(conns[key], s.Peer)
				}
				connUse[s.Peer]++
			}
			if len(value) != 3*(1+ts.FanOut*((ts.Turns-1)/ts.FanOutEvery)) {
				t.Errorf("%d sessions; want %d", len(value), 3*(1+ts.FanOut*((ts.Turns-1)/ts.FanOutEvery)))
			}
			for key, cs := range conns {
				if reuse == ReuseSticky && len(cs) != 1 {
					t.Errorf("sticky: session %s came on %d connections", key, len(cs))
				}
			}
			for c, n := range connUse {
				if reuse == ReuseNever && n != 1 {
					t.Errorf("never: connection %s carried %d requests", c, n)
				}
			}
			if reuse == ReusePooled && len(connUse) >= len(out.Records) {
				t.Errorf("pooled: %d connections for %d requests; want reuse", len(connUse), len(out.Records))
			}
		})
	}
}
