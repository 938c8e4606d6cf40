package scenario

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/servermetrics"
)

// Outcome is what [Run] returns: the scenario as run, both recordings, the metrics and
// where the artifacts are.
type Outcome struct {
	// Scenario is the scenario as run: defaults filled in, Endpoint set to the mock
	// server's URL when one was started, APIKey cleared.
	Scenario Scenario
	// Mocked reports whether Run started the in-process mock server.
	Mocked bool
	// Interrupted reports that the run was stopped (its context cancelled) before it
	// reached its request count or duration; the records are those that finished.
	Interrupted bool
	// Truncated reports that a recording read back by [Load] ended in a line cut short
	// (a killed writer); the complete lines before it are in Client and Server.
	Truncated bool
	// Client is the client recording, warm-up requests included (marked Warmup).
	Client []record.Client
	// Server is the mock server's recording (nil for a real endpoint, whose
	// usage.prompt_tokens is in the client records instead).
	Server []record.Server
	// TemplateOverhead[k] is the median, over the requests at turn k, of the input
	// tokens the chat template adds around the message contents (the client records
	// each request's exact count, record.Client.ISLTemplate - ISL, which the checks
	// use); nil when no record has it (not a chat endpoint, or an old recording).
	// For display: the template's cost at a glance.
	TemplateOverhead []int
	// Metrics summarises Client (warm-up excluded).
	Metrics record.Metrics
	// ServerMetrics summarises the scrapes of Scenario.ServerMetrics (nil when it
	// scraped nothing).
	ServerMetrics *servermetrics.Summary
	// Dir is the artifact directory ("" if none was written) and Files the artifacts in it.
	Dir   string
	Files []string

	// kept holds the verdicts and run context computed before [Outcome.dropRecords]
	// let the records go; nil while the records are here.
	kept *keptVerdicts
}

type keptVerdicts struct {
	verdicts []check.Verdict
	ctx      check.Context
}

// dropRecords lets go of the records of an outcome whose recordings are on disk,
// keeping what its verdicts need (computed now), so a series of runs holds one run's
// records at a time. Load(o.Dir) reads them back.
func (o *Outcome) dropRecords() {
	if o.Dir == "" || o.kept != nil {
		return
	}
	o.kept = &keptVerdicts{verdicts: o.Verdicts(), ctx: o.Context("")}
	o.Client, o.Server = nil, nil
}

// Requests returns the measured requests (warm-up excluded) in check's form, with the
// server's input-token counts joined by request id.
func (o *Outcome) Requests() []check.Request {
	rs := check.FromClient(o.Client)
	if o.Server != nil {
		isl := make(map[string]int, len(o.Server))
		for i := range o.Server {
			if o.Server[i].Rejected == "" {
				isl[o.Server[i].RequestID] = o.Server[i].ISL
			}
		}
		// The mock reports its own count in usage.prompt_tokens; requests without
		// usage are joined with the server recording by request id, if the server kept
		// the client's ids.
		if !o.sharedIDs() {
			return rs
		}
		for i := range rs {
			if rs[i].ServerISL >= 0 {
				continue
			}
			if n, ok := isl[rs[i].ID]; ok {
				rs[i].ServerISL = n
			}
		}
	}
	return rs
}

// Context describes the run for failure messages. rerun says how to re-run it (may be empty).
func (o *Outcome) Context(rerun string) check.Context {
	if o.kept != nil {
		c := o.kept.ctx
		c.Rerun = rerun
		return c
	}
	c := check.Context{Scenario: o.Scenario.Name, Load: o.Scenario.LoadString(), Seed: o.Scenario.Seed, Rerun: rerun}
	for i := range o.Client {
		if o.Client[i].Warmup {
			continue
		}
		c.Requests++
		if !o.Client[i].OK() {
			c.Errors++
		}
	}
	if o.Dir != "" {
		c.Artifacts = o.Dir
		if p := o.File(ClientFile); p != "" {
			c.Artifacts = p
		}
	}
	return c
}

// File returns the path of the named artifact if it was written, else "".
func (o *Outcome) File(name string) string {
	for _, f := range o.Files {
		if filepath.Base(f) == name {
			return f
		}
	}
	return ""
}

// Verdicts evaluates every objective of the scenario ([Objectives]) on the run:
// [Objectives.Check] on its requests and metrics, then the length fits (ISLFit,
// OSLFit) on [Outcome.Lengths]. The verdicts carry no run context; [Outcome.Check]
// adds it.
func (o *Outcome) Verdicts() []check.Verdict {
	if o.kept != nil {
		return slices.Clone(o.kept.verdicts)
	}
	obj := o.Scenario.Objectives
	vs := obj.Check(o.Requests(), o.Metrics)
	for _, f := range []struct {
		m    check.Metric
		spec distribution.Spec
	}{{check.ISL, obj.ISLFit}, {check.OSL, obj.OSLFit}} {
		if f.spec.Distribution != nil {
			vs = append(vs, o.LengthFit(f.m, distribution.Length{Dist: f.spec.Distribution}, obj.Alpha))
		}
	}
	return vs
}

// Health is the gate every run must pass whatever its objectives: a request
// completed ([check.Completed]), and, unless Objectives.MaxErrorRate is negative, the
// error rate is within it ([check.ErrorRate]; zero: no request may fail). The same
// error-rate verdict is the first of [Outcome.Verdicts]. perftest.Run reports Health
// through t; `perfgate profile` exits 1 when nothing completed and 99 for errors.
func (o *Outcome) Health() []check.Verdict {
	reqs := o.Requests()
	vs := []check.Verdict{check.Completed(reqs)}
	if max := o.Scenario.Objectives.MaxErrorRate; max >= 0 {
		vs = append(vs, check.ErrorRate(reqs, max))
	}
	return vs
}

// LengthFit tests whether the run's input (m = check.ISL) or output (check.OSL)
// lengths, as [Outcome.Lengths] gives them, fit target at level alpha (0 =
// check.DefaultAlpha), with check.LengthFit's discrete-aware test.
func (o *Outcome) LengthFit(m check.Metric, target distribution.Length, alpha float64) check.Verdict {
	src, xs := o.Lengths(m)
	v := check.LengthFit(m.Label()+" ("+src+")", xs, target, alpha)
	if m == check.OSL && !v.Pass && len(xs) > 0 {
		v.Evidence = append(v.Evidence, check.OSLEvidence(o.Client, src == sourceUsage)...)
	}
	return v
}

// sourceUsage names lengths taken from the server's usage object.
const sourceUsage = "usage count"

// Check is [Outcome.Verdicts] with the run's context (scenario, load, n, errors,
// artifacts) attached to each verdict.
func (o *Outcome) Check() []check.Verdict {
	vs := o.Verdicts()
	c := o.Context("")
	for i := range vs {
		vs[i] = vs[i].With(c)
	}
	return vs
}

// Lengths returns the input (m = check.ISL) or output (m = check.OSL) lengths the
// length checks measure, warm-up and failed requests excluded, and where they come
// from. With the mock they are what the server received and generated ("server
// count"); for chat requests each request's chat-template tokens (as the client
// counted them, record.Client.ISLTemplate - ISL) are taken off the server's input
// count, so single-turn inputs compare with the configured ISL (multi-turn inputs
// still include the history); requests whose overhead is unknown (recordings made
// before the client counted it) are left whole. With a real endpoint they are the
// client's counts ("client count").
//
// Server records are matched to the client's warm-up requests by request id when the
// server kept the client's ids, else by arrival order (the first WarmupRequests).
func (o *Outcome) Lengths(m check.Metric) (source string, lengths []int) {
	if o.Server == nil {
		lc := o.Scenario.LoadConfig("")
		if m == check.OSL && lc.UsageOSL {
			for i := range o.Client {
				if c := &o.Client[i]; !c.Warmup && c.OK() && c.UsageCompletionTokens >= 0 {
					lengths = append(lengths, c.UsageCompletionTokens)
				}
			}
			return sourceUsage, lengths
		}
		if m == check.ISL && lc.UsageISL {
			if slices.ContainsFunc(o.Client, func(c record.Client) bool { _, ok := c.TemplateOverhead(); return ok }) {
				return o.chatLengths(nil, false)
			}
			for i := range o.Client {
				if c := &o.Client[i]; !c.Warmup && c.OK() && c.UsagePromptTokens >= 0 {
					lengths = append(lengths, c.UsagePromptTokens)
				}
			}
			return sourceUsage, lengths
		}
		for _, q := range o.Requests() {
			if q.Err != "" {
				continue
			}
			if m == check.OSL {
				lengths = append(lengths, q.OSL)
			} else {
				lengths = append(lengths, q.ISL)
			}
		}
		return "client count", lengths
	}
	ids, warm := map[string]bool{}, map[string]bool{}
	nWarm := 0
	for i := range o.Client {
		ids[o.Client[i].RequestID] = true
		if o.Client[i].Warmup {
			warm[o.Client[i].RequestID] = true
			nWarm++
		}
	}
	byID := o.sharedIDs()
	recs := slices.Clone(o.Server)
	slices.SortStableFunc(recs, func(a, b record.Server) int { return cmp.Compare(a.Seq, b.Seq) })
	if !byID {
		recs = recs[min(nWarm, len(recs)):]
	}
	if m == check.ISL && slices.ContainsFunc(o.Client, func(c record.Client) bool { _, ok := c.TemplateOverhead(); return ok }) {
		return o.chatLengths(recs, byID)
	}
	source = "server count"
	for i := range recs {
		s := &recs[i]
		if s.Rejected != "" || s.Fault != "" || s.Status != 200 || (byID && warm[s.RequestID]) {
			continue
		}
		if m == check.OSL {
			lengths = append(lengths, s.OSL)
			continue
		}
		lengths = append(lengths, s.ISL)
	}
	return source, lengths
}

// chatLengths is Lengths(check.ISL) when the client recorded chat-template overheads:
// per measured request, the server's count (its usage.prompt_tokens, which the mock
// fills with its own count, else its recording joined by request id) less that
// request's overhead. The join goes through the client's record, because the mock
// numbers requests itself and its ids need not be the client's.
func (o *Outcome) chatLengths(recs []record.Server, byID bool) (source string, lengths []int) {
	isl := map[string]int{}
	if byID {
		for i := range recs {
			if recs[i].Rejected == "" && recs[i].Status == 200 {
				isl[recs[i].RequestID] = recs[i].ISL
			}
		}
	}
	unknown := 0
	for i := range o.Client {
		c := &o.Client[i]
		if c.Warmup || !c.OK() {
			continue
		}
		n := c.UsagePromptTokens
		if n < 0 {
			var ok bool
			if n, ok = isl[c.RequestID]; !ok {
				continue
			}
		}
		if d, ok := c.TemplateOverhead(); ok {
			n -= d
		} else {
			unknown++
		}
		lengths = append(lengths, n)
	}
	source = "server count less each request's chat template"
	if unknown > 0 {
		source += fmt.Sprintf(" (unknown for %d requests, left whole)", unknown)
	}
	return source, lengths
}

// sharedIDs reports whether the server recording uses the client's request ids: every
// successful client request has a server record with its id.
func (o *Outcome) sharedIDs() bool {
	if len(o.Server) == 0 {
		return false
	}
	ids := make(map[string]bool, len(o.Server))
	for i := range o.Server {
		ids[o.Server[i].RequestID] = true
	}
	for i := range o.Client {
		if o.Client[i].OK() && !ids[o.Client[i].RequestID] {
			return false
		}
	}
	return true
}

// templateOverheads returns, per turn, the median chat-template overhead of the
// measured requests that recorded one (see [Outcome.TemplateOverhead]); nil if none did.
func templateOverheads(cs []record.Client) []int {
	var byTurn [][]int
	for i := range cs {
		n, ok := cs[i].TemplateOverhead()
		if !ok || cs[i].Warmup || cs[i].Turn < 0 {
			continue
		}
		for len(byTurn) <= cs[i].Turn {
			byTurn = append(byTurn, nil)
		}
		byTurn[cs[i].Turn] = append(byTurn[cs[i].Turn], n)
	}
	if len(byTurn) == 0 {
		return nil
	}
	out := make([]int, len(byTurn))
	for k, ns := range byTurn {
		if len(ns) > 0 {
			slices.Sort(ns)
			out[k] = ns[len(ns)/2]
		}
	}
	return out
}
