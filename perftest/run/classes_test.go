package run

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/testutil"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/loadgen/dataset"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
)

// classesAlpha is the level of the classes' schedule tests.
const classesAlpha = 0.01

// agentTrace is the shipped synthetic agent trace (docs/agents.md): 6 jobs, 78 requests.
const agentTrace = "../../loadgen/dataset/testdata/agent_trace.jsonl"

// classSizes are the three classes' sizes: chat's rate and duration, batch's
// concurrency and requests, agent's speedup.
type classSizes struct {
	chatRate     float64
	chatN        int
	batchConc    int
	batchN       int
	batchStart   time.Duration
	agentStart   time.Duration
	agentSpeedup float64
	agentFile    string
	mockTTFTms   int // the mock's time to a first token (5 ms when 0)
}

// threeClasses is chat at a Poisson rate, batch at a fixed concurrency from a start
// offset with a priority header, and agent jobs replayed from a trace on its schedule,
// against the mock, with a rule on each class: chat's passes, batch's fails.
func threeClasses(z classSizes) scenario.Scenario {
	ttft := max(z.mockTTFTms, 5)
	return scenario.Scenario{
		Name: "three-classes",
		Config: loadgen.Config{
			Target:   loadgen.Target{API: loadgen.EndpointCompletions},
			Workload: loadgen.Workload{Seed: 7},
		},
		Classes: []scenario.Class{
			{Name: "chat", Requests: z.chatN,
				Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:32"), OSL: distribution.MustSpec("fixed:8"), Corpus: loadgen.CorpusRandom},
				Load:     loadgen.Load{Rate: z.chatRate, Arrival: loadgen.ArrivalPoisson}},
			{Name: "batch", Start: z.batchStart, Requests: z.batchN, Headers: loadgen.Headers{"X-Priority": "batch"},
				Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:64"), OSL: distribution.MustSpec("fixed:16"), Corpus: loadgen.CorpusRandom},
				Load:     loadgen.Load{Concurrency: z.batchConc}},
			{Name: "agent", Start: z.agentStart,
				Workload: loadgen.Workload{InputFile: z.agentFile, InputFormat: loadgen.FormatAgentTrace, BlockTokens: 64},
				Load:     loadgen.Load{Schedule: true, Speedup: z.agentSpeedup}},
		},
		Mock: mockserver.Config{TTFT: distribution.MustSpec(fmt.Sprintf("fixed:%d", ttft)), ITL: distribution.MustSpec("fixed:0.05")},
		Objectives: scenario.Objectives{Rules: []string{
			"error_rate{class=chat}<=0",  // passes
			"ttft_p50{class=batch}<=1us", // fails: the mock takes 5 ms or more to a first token
			"tokenizer_match",
		}},
	}
}

// chiSquareP is the p-value of Pearson's statistic of observed counts against
// expected ones, with df degrees of freedom.
func chiSquareP(observed []int, expected []float64, df int) (x2, p float64) {
	for i := range observed {
		d := float64(observed[i]) - expected[i]
		x2 += d * d / expected[i]
	}
	return x2, distuv.ChiSquared{K: float64(df)}.Survival(x2)
}

// traceJobs reads a trace's jobs: each root session's start (t, ms) and how many
// requests the job has.
func traceJobs(t *testing.T, path string) (starts []float64, sizes []int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			Parent string   `json:"parent_session_id"`
			Turn   int      `json:"turn"`
			T      *float64 `json:"t"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.T != nil {
			starts, sizes = append(starts, *l.T), append(sizes, 0)
		}
		sizes[len(sizes)-1]++
	}
	return starts, sizes
}

// checkClassSchedules holds each class of a threeClasses run to its schedule by a
// chi-square at classesAlpha: chat's scheduled sends per bin against its Poisson
// rate (the count and the rate at once), batch's sends per bin against the rate its
// concurrency gives by Little's law (N in flight over the mean latency), and agent's
// requests per job against the trace's, each job starting at its t over the speedup
// after the class's start.
func checkClassSchedules(t *testing.T, z classSizes, recs []record.Client) {
	t.Helper()
	by := map[string][]record.Client{}
	for _, r := range recs {
		by[r.Class] = append(by[r.Class], r)
	}
	if len(by) != 3 || len(by[""]) > 0 {
		t.Fatalf("records by class: %d classes, %d records without one", len(by), len(by[""]))
	}
	// chat: Poisson(rate) arrivals: its scheduled sends (the schedule's, whatever the
	// machine's speed) in bins over [0, T), T three quarters of the time its requests
	// span at the rate, so the count in it is Poisson too.
	if n := len(by["chat"]); n != z.chatN {
		t.Fatalf("chat: %d requests, want %d", n, z.chatN)
	}
	const bins = 6
	span := time.Duration(0.75 * float64(z.chatN) / z.chatRate * float64(time.Second))
	w := span / bins
	obs := make([]int, bins)
	for _, r := range by["chat"] {
		if r.Scheduled < 0 {
			t.Fatalf("chat request %s scheduled at %v, before the run", r.RequestID, r.Scheduled)
		}
		if k := int(r.Scheduled / w); k < bins {
			obs[k]++
		}
	}
	exp := make([]float64, bins)
	for k := range exp {
		exp[k] = z.chatRate * w.Seconds()
	}
	if x2, p := chiSquareP(obs, exp, bins); p < classesAlpha {
		t.Errorf("chat: sends per %v %v, want Poisson %g/s (%.1f each): chi-square %.2f, p = %.4f < %g", w, obs, z.chatRate, exp[0], x2, p, classesAlpha)
	}
	// batch: N in flight from its start, so each stretch of time sends N over its
	// requests' mean latency a second (Little's law): bins of the class's active time,
	// each expecting N·width / the mean latency of the requests sent in it.
	b := by["batch"]
	if len(b) != z.batchN {
		t.Fatalf("batch: %d requests, want %d", len(b), z.batchN)
	}
	first, last := b[0].Sent, b[0].Sent
	for _, r := range b {
		first, last = min(first, r.Sent), max(last, r.Sent)
		if r.Sent < z.batchStart {
			t.Fatalf("batch request %s sent at %v, before the class's start %v", r.RequestID, r.Sent, z.batchStart)
		}
	}
	if n := maxInFlight(b); n != z.batchConc {
		t.Errorf("batch: at most %d requests in flight, want %d", n, z.batchConc)
	}
	bw := (last - first) / bins
	cnt, lat := make([]int, bins), make([]time.Duration, bins)
	for _, r := range b {
		k := min(int((r.Sent-first)/bw), bins-1)
		cnt[k]++
		lat[k] += r.Done - r.Sent
	}
	obs, exp = obs[:0], exp[:0]
	for k := range cnt {
		if cnt[k] == 0 {
			continue // no latency to expect from: the stretch sent nothing (then others sent more)
		}
		obs = append(obs, cnt[k])
		exp = append(exp, float64(z.batchConc)*bw.Seconds()/(lat[k].Seconds()/float64(cnt[k])))
	}
	if len(obs) < bins/2 {
		t.Fatalf("batch: %d of %d stretches of its time sent anything: %v", len(obs), bins, cnt)
	}
	if x2, p := chiSquareP(obs, exp, len(obs)); p < classesAlpha {
		t.Errorf("batch: sends per %v %v, want %d in flight (%.1f): chi-square %.2f, p = %.4f < %g", bw, obs, z.batchConc, exp, x2, p, classesAlpha)
	}
	// agent: every job of the trace, on its schedule.
	starts, sizes := traceJobs(t, z.agentFile)
	jobs := map[string][]record.Client{}
	for _, r := range by["agent"] {
		jobs[r.Job] = append(jobs[r.Job], r)
	}
	ids := slices.SortedFunc(func(yield func(string) bool) {
		for id := range jobs {
			if !yield(id) {
				return
			}
		}
	}, func(a, b string) int { return firstIndex(jobs[a]) - firstIndex(jobs[b]) }) // in the trace's order
	if len(ids) != len(starts) {
		t.Fatalf("agent: %d jobs, want the trace's %d", len(ids), len(starts))
	}
	obs, exp = make([]int, len(ids)), make([]float64, len(ids))
	for i, id := range ids {
		if !strings.HasPrefix(id, "agent-job-") {
			t.Errorf("agent job id %q: want the class's prefix", id)
		}
		obs[i], exp[i] = len(jobs[id]), float64(sizes[i])
		// The schedule starts at the first job: the class's start (its first job goes
		// when the class's sender first runs, late on a busy machine); each later job
		// its t after the first's, over the speedup.
		want := z.agentStart + time.Duration((starts[i]-starts[0])/z.agentSpeedup*float64(time.Millisecond))
		if got := jobStart(jobs[id]); i > 0 && (got-want).Abs() > time.Millisecond || i == 0 && got < want {
			t.Errorf("agent job %d scheduled at %v, want the trace's %.1f ms after its first job / %g after the class's start %v = %v", i, got, starts[i]-starts[0], z.agentSpeedup, z.agentStart, want)
		}
	}
	if x2, p := chiSquareP(obs, exp, len(obs)); p < classesAlpha {
		t.Errorf("agent: requests per job %v, want the trace's %v: chi-square %.2f, p = %.4f", obs, exp, x2, p)
	}
}

// maxInFlight is the most requests of rs in flight at once.
func maxInFlight(rs []record.Client) int {
	type ev struct {
		t time.Duration
		d int
	}
	var evs []ev
	for _, r := range rs {
		evs = append(evs, ev{r.Sent, 1}, ev{r.Done, -1})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		return a.d - b.d // an end before a start at one instant
	})
	n, most := 0, 0
	for _, e := range evs {
		n += e.d
		most = max(most, n)
	}
	return most
}

func jobStart(rs []record.Client) time.Duration {
	s := rs[0].Scheduled
	for _, r := range rs {
		s = min(s, r.Scheduled)
	}
	return s
}

// firstIndex is the index of a job's first request: jobs are drawn in the trace's order.
func firstIndex(rs []record.Client) int {
	i := rs[0].Index
	for _, r := range rs {
		i = min(i, r.Index)
	}
	return i
}

// ruleVerdict returns the verdict of the rule written src among vs.
func ruleVerdict(vs []check.Verdict, src string) *check.Verdict {
	for i := range vs {
		for _, l := range vs[i].Evidence {
			if l.Label == "rule" && l.Text == src {
				return &vs[i]
			}
		}
	}
	return nil
}

// TestClasses: three classes in one run against the mock (-short size: about 0.2 s of
// load). Each class's counts and rates fit its schedule (chi-square, alpha 0.01,
// seed 7); every record on disk carries its class, and the mock saw every request
// under its class's own ids (tokenizer_match joins them) with the batch class's
// priority header; metrics.json, runstats.json and report.html have each class; a
// rule scoped {class=chat} passes and one scoped {class=batch} fails.
func TestClasses(t *testing.T) {
	z := classSizes{chatRate: 300, chatN: 60, batchConc: 4, batchN: 80, batchStart: 30 * time.Millisecond,
		agentStart: 20 * time.Millisecond, agentSpeedup: 100, agentFile: agentTrace}
	runClassesTest(t, z)
}

// TestClassesAtSize is TestClasses at size: 5,000 chat requests at 500/s, 5,000
// batch requests at concurrency 8 against a mock 20 ms to a first token (about 380/s),
// and a trace of 400 jobs at its own pace, 20 jobs a second (make test-long). The
// client's load stays near 1,100 req/s, a fifth of what it sustains: at 1,000/s beside
// a batch class of 16 against a 5 ms mock (3,800 req/s in all), and again with the
// trace at 4x (80 jobs a second, each job's prompts made as it starts), a 2-core
// machine running the rest of make test-long beside it could not keep the agent
// class's schedule, and the run was rightly stopped as client-bound.
func TestClassesAtSize(t *testing.T) {
	testutil.Long(t)
	trace := filepath.Join(t.TempDir(), "agents.jsonl")
	f, err := os.Create(trace)
	if err != nil {
		t.Fatal(err)
	}
	spec := dataset.AgentTraceSpec{Jobs: 400, Turns: 5, FanOut: 2, FanOutEvery: 2, SubTurns: 2, Rate: 20,
		InputTokens: 200, GrowTokens: 40, OutputTokens: 24, BlockTokens: 64, SharedBlocks: 2,
		ThinkMS: 300, ToolMS: 800, ToolShare: 0.5, Seed: 39}
	if err := dataset.WriteAgentTrace(f, spec); err != nil {
		t.Fatal(err)
	}
	f.Close()
	z := classSizes{chatRate: 500, chatN: 5000, batchConc: 8, batchN: 5000, batchStart: 500 * time.Millisecond,
		agentStart: 200 * time.Millisecond, agentSpeedup: 1, agentFile: trace, mockTTFTms: 20}
	runClassesTest(t, z)
}

func runClassesTest(t *testing.T, z classSizes) {
	dir := t.TempDir()
	sc := threeClasses(z)
	sc.Mock.SessionHeader = "X-Priority" // the mock records the header's value: the batch class's priority
	out, err := Run(context.Background(), sc, dir)
	if err != nil {
		t.Fatal(err)
	}
	if why := out.Aborted(); why != "" {
		t.Fatalf("the run was stopped: %s", why)
	}
	recs, err := loadClient(filepath.Join(dir, ClientFile))
	if err != nil {
		t.Fatal(err)
	}
	checkClassSchedules(t, z, recs)
	// On disk, each line carries its class, and its ids are the class's.
	raw, err := os.ReadFile(filepath.Join(dir, ClientFile))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var r struct {
			Class string `json:"class"`
			ID    string `json:"request_id"`
			Start int64  `json:"run_start_unix_ns"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Class == "" || !strings.HasPrefix(r.ID, r.Class+"-req-") || r.Start != recs[0].RunStartUnixNano {
			t.Fatalf("client.jsonl line %d: class %q, id %q, run start %d (first line's %d): want a class, its ids, one clock", i+1, r.Class, r.ID, r.Start, recs[0].RunStartUnixNano)
		}
	}
	srv, err := loadServer(filepath.Join(dir, ServerFile))
	if err != nil {
		t.Fatal(err)
	}
	priority := 0
	for _, s := range srv {
		if strings.HasPrefix(s.RequestID, "batch-") != (s.Session == "batch") {
			t.Fatalf("server record %s carried X-Priority %q", s.RequestID, s.Session)
		}
		if s.Session == "batch" {
			priority++
		}
	}
	if len(srv) != len(recs) || priority != z.batchN {
		t.Errorf("the mock served %d requests (%d with the batch priority), the client sent %d (%d batch)", len(srv), priority, len(recs), z.batchN)
	}
	vs := out.Check()
	if v := ruleVerdict(vs, "error_rate{class=chat}<=0"); v == nil || !v.Pass {
		t.Errorf("error_rate{class=chat}<=0: %v, want a pass", v)
	}
	if v := ruleVerdict(vs, "ttft_p50{class=batch}<=1us"); v == nil || v.Pass || v.Status != check.Decided {
		t.Errorf("ttft_p50{class=batch}<=1us: %v, want a decided failure", v)
	}
	if v := ruleVerdict(vs, "tokenizer_match"); v == nil || !v.Pass {
		t.Errorf("tokenizer_match: %v, want a pass (the client's and the mock's records joined by the classes' ids)", v)
	}
	var m record.Metrics
	readJSON(t, filepath.Join(dir, MetricsFile), &m)
	for _, c := range []string{"chat", "batch", "agent"} {
		n := 0
		for _, r := range recs {
			if r.Class == c {
				n++
			}
		}
		if got := m.Classes[c].Value(record.MetricRequestCount); int(got) != n {
			t.Errorf("metrics.json classes.%s request_count %v, want its %d records", c, got, n)
		}
	}
	if got, want := m.Value(record.MetricRequestCount), float64(len(recs)); got != want {
		t.Errorf("metrics.json request_count %v, want %v", got, want)
	}
	rs, err := gate.ReadRunStats(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ttft_p99", "ttft_p99{class=chat}", "ttft_p99{class=batch}", "ttft_p99{class=agent}", "output_tps{class=batch}"} {
		if _, ok := rs.Stats[name]; !ok {
			t.Errorf("runstats.json has no %s", name)
		}
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="classes-table"`, `id="class-chat"`, `id="class-batch"`, `id="class-agent"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html has no %s", want)
		}
	}
}

// TestClassesRefused: a class with no load, two classes with one name, a rule scoped
// to a class the scenario does not have, and a workload field at the top level are
// invalid before anything is sent: from Go (Validate, naming the class) and from a
// file (FILE:LINE:COL at the class or the rule).
func TestClassesRefused(t *testing.T) {
	load := loadgen.Load{Concurrency: 1}
	for _, tc := range []struct {
		name string
		sc   scenario.Scenario
		want string
	}{
		{"no load", scenario.Scenario{Classes: []scenario.Class{{Name: "chat", Load: load}, {Name: "batch"}}}, `classes[1] "batch": no load`},
		{"duplicate", scenario.Scenario{Classes: []scenario.Class{{Name: "chat", Load: load}, {Name: "chat", Load: load}}}, `classes[1] "chat": the name "chat" is also classes[0]'s`},
		{"no name", scenario.Scenario{Classes: []scenario.Class{{Load: load}}}, `classes[0]: no name`},
		{"unknown scope", scenario.Scenario{Classes: []scenario.Class{{Name: "chat", Load: load}}, Objectives: scenario.Objectives{Rules: []string{"ttft_p99{class=chta}<=1s"}}},
			`ttft_p99{class=chta}<=1s is scoped to class "chta", which the scenario does not have (classes: chat); did you mean "chat"?`},
		{"scope without classes", scenario.Scenario{Objectives: scenario.Objectives{Rules: []string{"ttft_p99{class=chat}<=1s"}}}, `scoped to class "chat", and the scenario has no classes`},
		{"top level", scenario.Scenario{Config: loadgen.Config{Load: loadgen.Load{Rate: 5}}, Classes: []scenario.Class{{Name: "chat", Load: load}}}, `rate set at the top level: with classes`},
		{"run-level key", scenario.Scenario{Classes: []scenario.Class{{Name: "chat", Load: loadgen.Load{Concurrency: 1, ShardIndex: 1}}}}, `classes[0] "chat": shard_index is the run's, not a class's`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.sc.Validate()
			if err == nil || !errors.Is(err, scenario.ErrInvalidScenario) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want ErrInvalidScenario with %q", err, tc.want)
			}
			if _, err := Run(context.Background(), tc.sc, ""); err == nil || !errors.Is(err, scenario.ErrInvalidScenario) {
				t.Fatalf("Run: %v, want ErrInvalidScenario before anything is sent", err)
			}
		})
	}
	file := `name: mixed
seed: 3
classes:
  - name: chat
    rate: 5
  - name: batch
    isl: fixed:64
  - name: chat
    concurrency: 2
  - name: extra
    rate: 1
    shard_index: 1
objectives:
  rules:
    - ttft_p99{class=chat}<=1s
    - ttft_p99{class=bulk}<=1s
`
	path := filepath.Join(t.TempDir(), "mixed.yaml")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := scenario.ReadFile(path)
	if err == nil || !errors.Is(err, scenario.ErrInvalidScenario) {
		t.Fatalf("ReadFile: %v, want ErrInvalidScenario", err)
	}
	for _, want := range []string{
		path + `:6:5: classes[1] "batch": no load`,
		path + `:8:11: classes[2] "chat": the name "chat" is also classes[0]'s`,
		path + `:12:18: classes[3] "extra": shard_index is the run's, not a class's`,
		path + `:16:7: objectives.rules[1]: ttft_p99{class=bulk}<=1s is scoped to class "bulk", which the scenario does not have (classes: chat, batch, chat, extra)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ReadFile:\n%v\nwant a line %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "ttft_p99{class=chat}") {
		t.Errorf("ReadFile refused the rule scoped to a class it has:\n%v", err)
	}
}

// TestClassShift: a class's record times move by its start onto the run's clock;
// the optional ones stay absent when absent.
func TestClassShift(t *testing.T) {
	start := time.Unix(100, 0)
	r := record.Client{RunStartUnixNano: start.Add(time.Second).UnixNano(), Scheduled: 1, Sent: 2, FirstByte: 0, FirstOutput: 4, Done: 5,
		Chunks: []record.Chunk{{T: 3}}}
	shiftRecord(&r, time.Second, start)
	if r.RunStartUnixNano != start.UnixNano() || r.Scheduled != time.Second+1 || r.Sent != time.Second+2 || r.FirstByte != 0 ||
		r.FirstOutput != time.Second+4 || r.Done != time.Second+5 || r.Chunks[0].T != time.Second+3 {
		t.Errorf("shifted: %+v", r)
	}
}

// TestClassesNeeds: the client limits preflight counts every class at once: the
// connections of two closed loops of 100 and 50 workers are 150, and the fixed
// overheads are counted once.
func TestClassesNeeds(t *testing.T) {
	sc := scenario.Scenario{Classes: []scenario.Class{
		{Name: "a", Load: loadgen.Load{Concurrency: 100}},
		{Name: "b", Load: loadgen.Load{Concurrency: 50}},
	}}
	one := scenario.Scenario{Config: loadgen.Config{Load: loadgen.Load{Concurrency: 150}}}
	if got, want := needs(sc), needs(one); got != want {
		t.Errorf("needs %+v, want those of one run of 150 workers %+v", got, want)
	}
}
