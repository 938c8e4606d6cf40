package main

import (
	"flag"
	"math"
	"slices"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// agentFlags are the flags of agent-trace replay and agent jobs (docs/agents.md).
type agentFlags struct {
	speedup, maxIdleGap, sampleRatio float64
	userRate                         float64
	users, maxContext                int
	subAgents, subAfter, subTurns    int
	sessionHeader, reuse             string
}

func registerAgentFlags(fs *flag.FlagSet, a *agentFlags) {
	fs.Float64Var(&a.speedup, "replay-speedup", 0, "[load] divide a replayed trace's times by this factor (job starts under --fixed-schedule; an agent trace's think and tool times always)")
	fs.Float64Var(&a.maxIdleGap, "max-idle-gap-cap-seconds", 0, "[load] agent trace: cap every replayed wait (think plus tool time, a gap between job starts) at this many seconds, after --replay-speedup")
	fs.Float64Var(&a.sampleRatio, "trace-session-sample-ratio", 0, "[workload] agent trace: replay this fraction (0-1) of its jobs, chosen by --random-seed")
	fs.IntVar(&a.users, "num-users", 0, "[load] closed loop: this many concurrent jobs (users), each starting its next job when the last ends (an agent trace's jobs; with other workloads, conversations)")
	fs.StringVar(&a.sessionHeader, "session-header", "", "[target] send this header with a stable per-session value on every request (JOB/SESSION for agent jobs, session-N for conversations)")
	fs.StringVar(&a.reuse, "connection-reuse-strategy", "", "[target] "+loadgen.OrList(loadgen.ConnectionReuses)+" (default pooled; sticky-user-sessions keeps each session on its own connection)")
	fs.Float64Var(&a.userRate, "user-centric-rate", 0, "[load] AIPerf's user-centric timing: the --num-users users share this many requests per second, each sending its turns num-users/rate seconds apart on its own schedule (--arrival constant, the default, or poisson)")
	fs.IntVar(&a.subAgents, "subagent-count", 0, "[workload] synthetic agent jobs: each conversation (--session-turns-mean turns) fans out to this many sub-agent sessions after turn --subagent-after-turn, and its next turn waits for them, their answers in its context")
	fs.IntVar(&a.subAfter, "subagent-after-turn", 0, "[workload] the turn (from 0) after which a synthetic job's sub-agents start (with --subagent-count)")
	fs.IntVar(&a.subTurns, "subagent-turns", 0, "[workload] turns of each sub-agent session (default 1; with --subagent-count)")
	fs.IntVar(&a.maxContext, "max-context", 0, "[workload] the model's context in tokens: an agent trace line whose input_tokens + output_tokens exceed it is refused (default 10,000,000)")
}

// profileAgents maps the agent flags.
func profileAgents(sc *scenario.Scenario, f *profileFlags, _ *profileOpts, has func(...string) bool) error {
	a := &f.agents
	for _, c := range []struct {
		name string
		v    float64
	}{{"--replay-speedup", a.speedup}, {"--max-idle-gap-cap-seconds", a.maxIdleGap}, {"--num-users", float64(a.users)}, {"--max-context", float64(a.maxContext)}} {
		if c.v < 0 || math.IsNaN(c.v) || math.IsInf(c.v, 0) {
			return invalidf("%s: want a value >= 0, got %v", c.name, c.v)
		}
	}
	if !(a.sampleRatio >= 0 && a.sampleRatio <= 1) {
		return invalidf("--trace-session-sample-ratio %v: want 0 to 1", a.sampleRatio)
	}
	if has("num-users") {
		if has("concurrency") {
			return invalidf("--num-users and --concurrency conflict: give the closed loop's size once")
		}
		if a.users == 0 {
			return invalidf("--num-users 0: a run needs at least one user")
		}
		sc.Concurrency = a.users
	}
	if has("user-centric-rate") {
		if err := userCentric(sc, a, has); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		name string
		v    int
		dst  *int
	}{{"subagent-count", a.subAgents, &sc.SubAgents}, {"subagent-after-turn", a.subAfter, &sc.SubAgentAfterTurn}, {"subagent-turns", a.subTurns, &sc.SubAgentTurns}} {
		if !has(c.name) {
			continue
		}
		if c.v < 0 {
			return invalidf("--%s %d: want a count >= 0", c.name, c.v)
		}
		if c.name != "subagent-count" && !has("subagent-count") && sc.SubAgents == 0 {
			return invalidf("--%s needs --subagent-count", c.name)
		}
		*c.dst = c.v
	}
	if a.speedup > 0 {
		sc.Speedup = a.speedup
	}
	if a.maxIdleGap > 0 {
		sc.MaxIdleGap = time.Duration(a.maxIdleGap * float64(time.Second))
	}
	if a.sampleRatio > 0 {
		sc.TraceSessionSampleRatio = a.sampleRatio
	}
	if a.maxContext > 0 {
		sc.MaxContext = a.maxContext
	}
	if a.sessionHeader != "" {
		sc.SessionHeader = a.sessionHeader
	}
	if a.reuse != "" {
		if !slices.Contains(loadgen.ConnectionReuses, a.reuse) {
			return invalidf("--connection-reuse-strategy %q: want %s", a.reuse, loadgen.OrList(loadgen.ConnectionReuses))
		}
		sc.ConnectionReuse = a.reuse
	}
	return nil
}

// userCentric maps --user-centric-rate: a rate > 0 shared by --num-users users, and
// no other load flag.
func userCentric(sc *scenario.Scenario, a *agentFlags, has func(...string) bool) error {
	if !(a.userRate > 0) || math.IsInf(a.userRate, 0) {
		return invalidf("--user-centric-rate %v: want a rate > 0 (requests per second over all users)", a.userRate)
	}
	if !has("num-users") {
		return invalidf("--user-centric-rate needs --num-users: the users who share the rate")
	}
	for _, f := range []string{"request-rate", "request-rate-series", "fixed-schedule", "request-rate-ramp-duration"} {
		if has(f) {
			return invalidf("--user-centric-rate and --%s conflict: give the load one way", f)
		}
	}
	sc.UserCentricRate = a.userRate
	return nil
}
