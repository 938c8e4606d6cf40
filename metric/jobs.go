package metric

import (
	"math"
	"slices"
	"time"

	"github.com/perfgate/perfgate/record"
)

// JobTotals are an agent run's jobs (docs/agents.md): every job whose requests carry
// its id (record.Client.Job), none of them warmup. A job runs from its first request's
// scheduled time (the job's due time; the root session's first turn) to its last
// request's end.
type JobTotals struct {
	// Latency (ms) and TTFT (ms: the first token of the job's first request − the
	// job's start; jobs whose first request has none are left out) per job.
	Latency, TTFT []float64
	// FanOut is each job's sub-agent sessions (its sessions − 1); ToolWait each job's
	// summed tool waits (ms).
	FanOut, ToolWait []float64
	// Good counts the jobs whose every request succeeded and met the SLO (when the run
	// has one).
	Good int
}

// Jobs is the number of jobs.
func (j *JobTotals) Jobs() int { return len(j.Latency) }

// jobTally is one job's running sums.
type jobTally struct {
	start, end  time.Duration
	firstToken  time.Duration // of the earliest-scheduled request; 0 = none
	sessions    []string
	toolWait    time.Duration
	bad, warmup bool
}

// jobAcc tallies the jobs of the records added: those in flight in jobs, those
// ended ([Accumulator.EndJob]) as their samples in done.
type jobAcc struct {
	jobs map[string]*jobTally
	done JobTotals
}

// end moves job's tally from those in flight to the ended jobs' samples (dropped
// when it had a warmup request).
func (a *jobAcc) end(job string) {
	j := a.jobs[job]
	if j == nil {
		return
	}
	delete(a.jobs, job)
	if !j.warmup {
		j.addTo(&a.done)
	}
}

// addTo appends the job's samples to t.
func (j *jobTally) addTo(t *JobTotals) {
	t.Latency = append(t.Latency, MS(j.end-j.start))
	if j.firstToken > 0 {
		t.TTFT = append(t.TTFT, MS(j.firstToken-j.start))
	}
	t.FanOut = append(t.FanOut, float64(len(j.sessions)-1))
	t.ToolWait = append(t.ToolWait, MS(j.toolWait))
	if !j.bad {
		t.Good++
	}
}

// add accounts for r, one of job r.Job's requests; good reports it succeeded and met
// the SLO.
func (a *jobAcc) add(r *record.Client, good bool) {
	if a.jobs == nil {
		a.jobs = map[string]*jobTally{}
	}
	j := a.jobs[r.Job]
	if j == nil {
		j = &jobTally{start: r.Scheduled, end: r.Done}
		a.jobs[r.Job] = j
	}
	j.warmup = j.warmup || r.Warmup
	j.bad = j.bad || !good
	ft, hasFT := TTFT(r)
	if r.Scheduled <= j.start {
		j.start, j.firstToken = r.Scheduled, 0
		if hasFT {
			j.firstToken = r.Sent + ft
		}
	}
	j.end = max(j.end, r.Done)
	j.toolWait += r.ToolWait
	if !slices.Contains(j.sessions, r.Conversation) {
		j.sessions = append(j.sessions, r.Conversation)
	}
}

// totals are the jobs' [JobTotals]: the ended jobs in the order they ended, then
// those still in flight (counted as they stand) in order of start; nil when there
// are none.
func (a *jobAcc) totals() *JobTotals {
	js := make([]*jobTally, 0, len(a.jobs))
	for _, j := range a.jobs {
		if !j.warmup {
			js = append(js, j)
		}
	}
	if len(js) == 0 && len(a.done.Latency) == 0 {
		return nil
	}
	slices.SortFunc(js, func(x, y *jobTally) int { return int(x.start - y.start) })
	t := &JobTotals{Latency: slices.Clone(a.done.Latency), TTFT: slices.Clone(a.done.TTFT), FanOut: slices.Clone(a.done.FanOut),
		ToolWait: slices.Clone(a.done.ToolWait), Good: a.done.Good}
	for _, j := range js {
		j.addTo(t)
	}
	return t
}

// JobMetrics summarises recs' agent jobs (see [JobTotals]), with slo deciding
// goodness when not nil; nil when recs hold no job.
func JobMetrics(recs []record.Client, opt Options, slo *SLO) *JobTotals {
	var a jobAcc
	var q Request
	for i := range recs {
		r := &recs[i]
		if r.Job == "" {
			continue
		}
		good := r.OK()
		if good && slo != nil {
			q.Reset(r, opt)
			good = slo.Good(&q)
		}
		a.add(r, good)
	}
	return a.totals()
}

// jobQuantile is a run statistic: quantile p of a per-job sample.
func jobQuantile(f func(*JobTotals) []float64, p float64) func(*Totals) (float64, bool) {
	return func(t *Totals) (float64, bool) {
		if t.Jobs == nil || len(f(t.Jobs)) == 0 {
			return 0, false
		}
		return Quantile(f(t.Jobs), p), true
	}
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// JobMetricNames lists the job-level metrics ([jobDefs]), in catalogue order: a run
// without agent jobs has none of them.
var JobMetricNames = func() []string {
	names := make([]string, len(jobDefs))
	for i, d := range jobDefs {
		names[i] = d.Name
	}
	return names
}()

// jobDefs are the job-level metrics, run statistics each (PerRun).
var jobDefs = []Def{
	{Name: "job_latency_p50", Ident: "JobLatencyP50", Header: "Job Latency p50", Label: "job latency p50", Unit: UnitMS, Better: Lower, Kind: PerRun, Origin: "perfgate", RunRule: true,
		Help: "Median over agent jobs of last answer's end − the job's first request's scheduled time.", Total: jobQuantile(func(j *JobTotals) []float64 { return j.Latency }, 0.5)},
	{Name: "job_latency_p90", Ident: "JobLatencyP90", Header: "Job Latency p90", Label: "job latency p90", Unit: UnitMS, Better: Lower, Kind: PerRun, Origin: "perfgate", RunRule: true,
		Help: "90th percentile of the job latency (see job_latency_p50).", Total: jobQuantile(func(j *JobTotals) []float64 { return j.Latency }, 0.9)},
	{Name: "job_latency_p99", Ident: "JobLatencyP99", Header: "Job Latency p99", Label: "job latency p99", Unit: UnitMS, Better: Lower, Kind: PerRun, Origin: "perfgate", RunRule: true,
		Help: "99th percentile of the job latency (see job_latency_p50).", Total: jobQuantile(func(j *JobTotals) []float64 { return j.Latency }, 0.99)},
	{Name: "job_ttft_p50", Ident: "JobTTFTP50", Header: "Job TTFT p50", Label: "job TTFT p50", Unit: UnitMS, Better: Lower, Kind: PerRun, Origin: "perfgate", RunRule: true,
		Help: "Median over agent jobs of the job's first token (of its first request) − the job's scheduled start.", Total: jobQuantile(func(j *JobTotals) []float64 { return j.TTFT }, 0.5)},
	{Name: "job_ttft_p99", Ident: "JobTTFTP99", Header: "Job TTFT p99", Label: "job TTFT p99", Unit: UnitMS, Better: Lower, Kind: PerRun, Origin: "perfgate", RunRule: true,
		Help: "99th percentile of the job TTFT (see job_ttft_p50).", Total: jobQuantile(func(j *JobTotals) []float64 { return j.TTFT }, 0.99)},
	{Name: "jobs_per_hour", Ident: "JobsPerHour", Header: "Jobs per Hour", Label: "jobs per hour", Unit: UnitJobsPerHour, Better: Higher, Kind: PerRun, Origin: "perfgate",
		Help: "Agent jobs finished / benchmark duration, per hour.", Total: func(t *Totals) (float64, bool) {
			if t.Jobs == nil || t.Duration <= 0 {
				return 0, false
			}
			return float64(t.Jobs.Jobs()) / t.Duration * 3600, true
		}},
	{Name: "jobs_per_hour_per_user", Ident: "JobsPerHourPerUser", Header: "Jobs per Hour per User", Label: "jobs per hour per user", Unit: UnitJobsPerHour, Better: Higher, Kind: PerRun, Origin: "perfgate",
		Help: "One hour / the mean job latency: the jobs a user running them back to back finishes per hour (jobs_per_hour over the mean number of jobs in flight).", Total: func(t *Totals) (float64, bool) {
			if t.Jobs == nil || sum(t.Jobs.Latency) <= 0 {
				return 0, false
			}
			return 3600e3 * float64(t.Jobs.Jobs()) / sum(t.Jobs.Latency), true
		}},
	{Name: "job_goodput", Ident: "JobGoodput", Header: "Job Goodput", Label: "job goodput", Unit: UnitRatio, Better: Higher, Kind: PerRun, Origin: "perfgate",
		Help: "Fraction of agent jobs whose every request succeeded and met the goodput SLO. Only with an SLO.", Total: func(t *Totals) (float64, bool) {
			if t.Jobs == nil || !t.HasSLO {
				return 0, false
			}
			return float64(t.Jobs.Good) / float64(t.Jobs.Jobs()), true
		}},
	{Name: "subagent_fanout", Ident: "SubagentFanout", Header: "Sub-agent Fan-out", Label: "sub-agent fan-out", Unit: UnitSessions, Kind: PerRun, Origin: "perfgate", NoRunStat: true, // the workload's, not the server's
		Help: "Mean sub-agent sessions per agent job.", Total: func(t *Totals) (float64, bool) {
			if t.Jobs == nil {
				return 0, false
			}
			return sum(t.Jobs.FanOut) / float64(t.Jobs.Jobs()), true
		}},
	{Name: "tool_wait_share", Ident: "ToolWaitShare", Header: "Tool Wait Share", Label: "tool wait share", Unit: UnitRatio, Better: Lower, Kind: PerRun, Origin: "perfgate",
		Help: "Σ tool time the jobs' turns waited / Σ job latency.", Total: func(t *Totals) (float64, bool) {
			if t.Jobs == nil || sum(t.Jobs.Latency) <= 0 {
				return 0, false
			}
			return math.Min(sum(t.Jobs.ToolWait)/sum(t.Jobs.Latency), 1), true
		}},
}

// Jobs returns the agent jobs of the records added so far ([JobTotals]); nil when
// none carried a job.
func (a *Accumulator) Jobs() *JobTotals { return a.jobs.totals() }

// EndJob tells the accumulator that every request of job has been added: the job's
// running tally (its sessions, times and waits) becomes its few samples, so an
// accumulator told of each job's end holds the jobs in flight, not every job the
// run had (the load generator tells it). A record of job added after its end starts
// a new tally, counted as another job. A job never ended is counted as it stands.
func (a *Accumulator) EndJob(job string) { a.jobs.end(job) }
