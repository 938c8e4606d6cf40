package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/servermetrics"
)

// Outcome is what [Run] returns: the scenario as run, both recordings, the metrics and
// where the artifacts are.
type Outcome struct {
	// Scenario is the scenario as run: defaults filled in, Endpoint set to the mock
	// server's URL when one was started, APIKey cleared.
	Scenario scenario.Scenario
	// Mocked reports whether Run started the in-process mock server.
	Mocked bool
	// Interrupted reports that the run was stopped (its context cancelled) before it
	// reached its request count or duration; the records are those that finished.
	Interrupted bool
	// Warnings are problems the run met that lost no record (loadgen.Outcome.Warnings),
	// one line each.
	Warnings []string
	// Truncated reports that a recording read back by [Load] ended in a line cut short
	// (a killed writer); the complete lines before it are in Client and Server.
	Truncated bool
	// Client is the client recording, warm-up requests included (marked Warmup),
	// when it is held in memory: a run without an artifact directory, or an Outcome
	// built by hand. A run whose recordings are on disk leaves Client and Server nil
	// and keeps only a compact summary of them (the metrics, and 56 bytes a request
	// for the verdicts), so an outcome's memory does not grow with tokens; read the
	// records back with [Outcome.Records] and [Outcome.ServerRecords].
	Client []record.Client
	// Server is the mock server's recording held in memory (see Client; nil for a
	// real endpoint, whose usage.prompt_tokens is in the client records instead).
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
	// GPU summarises the scrapes of Scenario.GPUTelemetry over the measured window
	// (nil when it scraped nothing).
	GPU *servermetrics.GPUSummary
	// Self is the load generator's measurement of itself during the run (send lag,
	// CPU, GC pauses, read delay), which [Outcome.Verdicts] judges (check.KindValidity); nil for a run read
	// back from a directory without validity.json.
	Self *loadgen.Self
	// Pins are what the run measured with: perfgate's revision, the dataset
	// fingerprint, the servers' identity and the topology (nil: unknown, an old run).
	Pins *Pins
	// Dir is the artifact directory ("" if none was written) and Files the artifacts in it.
	Dir   string
	Files []string

	// kept holds the verdicts and run context computed before [Outcome.dropRecords]
	// let the records go; nil while the records are here.
	kept *keptVerdicts
	// sum is the streaming pass's summary of the recordings on disk (clientPath,
	// serverPath); nil for records in memory, summarised when needed.
	sum                    *summary
	clientPath, serverPath string
	// limitWarnings are CheckLimits' problems under Validity.Limits = warn.
	limitWarnings []string
	// shards are a merged run's shards' validity (merge.Shards, [LoadMerged]; validity.json's "shards").
	shards []shardValidity
	// prefixIdeal is the ideal prefix-cache counts loadgen made (metrics.json's
	// "prefix_cache"); nil when it counted none.
	prefixIdeal *record.PrefixCacheIdeal
	// idealRate is the ideal prefix-cache hit rate loadgen counted: prefixIdeal's
	// Rate, or the prefix_cache_ideal_hit_rate of a run saved before metrics.json
	// kept "prefix_cache"; nil when it counted none.
	idealRate *float64
}

// summary returns the summary the checks read: the pass's over the files, or one
// made now from Client and Server.
func (o *Outcome) summary() *summary {
	if o.sum != nil {
		return o.sum
	}
	lc := o.Scenario.Config
	return summarize(o.Client, o.Server, metricOptions(lc), lc.SLO)
}

// Recompute derives the metrics, the verdicts' inputs and TemplateOverhead again from
// the recordings, under o.Scenario's definitions as they are now (after a caller
// changed its goodput SLO or usage-based OSL, as `perfgate report` does to re-gate an
// old run): one streaming pass over the files, or the records in memory. What the
// records cannot give again (the ideal prefix-cache hit rate, the server's counters,
// the GPU telemetry) is kept: [Outcome.completeSaved] adds it back.
func (o *Outcome) Recompute() error {
	lc := o.Scenario.Config
	opt := metricOptions(lc)
	if o.clientPath == "" || o.Client != nil {
		o.sum = nil
		s := summarize(o.Client, o.Server, opt, lc.SLO)
		o.Metrics, o.TemplateOverhead = s.metrics, s.templateOverheads()
		o.completeSaved()
		return nil
	}
	s, err := summarizeFiles(o.clientPath, o.serverPath, opt, lc.SLO)
	if s == nil {
		return err
	}
	o.sum, o.Metrics, o.TemplateOverhead, o.kept = s, s.metrics, s.templateOverheads(), nil
	o.completeSaved()
	if errors.Is(err, record.ErrTruncated) {
		err = nil
	}
	return err
}

// completeSaved adds to o.Metrics the metrics its records cannot give again, from what
// the run kept beside them: the prefix-cache rates from the ideal hit rate loadgen
// counted and the server's prefix-cache counters (completePrefixCache), and the GPU
// metrics from the GPU telemetry (addGPUMetrics). It is the one path for every
// quantity saved only beside the records: [Run], [Load] and [Outcome.Recompute] call
// it after summarising the records, so a run re-read and re-judged has the numbers
// the live run had. A new saved-only quantity is added here, once.
func (o *Outcome) completeSaved() {
	o.completePrefixCache()
	o.addGPUMetrics()
}

// oslRecords returns the measured records with only what check.OSLEvidence reads
// (no chunks), streamed from the file for a run on disk: a failed OSL fit's evidence.
func (o *Outcome) oslRecords() []record.Client {
	if o.Client != nil || o.clientPath == "" {
		return o.Client
	}
	var cs []record.Client
	_ = o.each(func(c *record.Client) error {
		if !c.Warmup && c.OK() {
			cs = append(cs, record.Client{OSL: c.OSL, UsageCompletionTokens: c.UsageCompletionTokens, FinishReason: c.FinishReason})
		}
		return nil
	})
	return cs
}

// Records returns the client recording: Client when it is in memory, else read back
// from the run's client.jsonl (a whole recording in memory, chunks included: for
// tests and tools that want every field; the checks never need it).
func (o *Outcome) Records() ([]record.Client, error) {
	if o.Client != nil || o.clientPath == "" {
		return o.Client, nil
	}
	cs, err := loadClient(o.clientPath)
	if errors.Is(err, record.ErrTruncated) {
		err = nil // Truncated says so; the complete lines are here
	}
	return cs, err
}

// each streams the client recording from its file, one reused record at a time (for
// reportgen); records in memory go through reportgen.Run.Records instead.
func (o *Outcome) each(fn func(*record.Client) error) error {
	if o.clientPath == "" {
		return nil
	}
	f, err := os.Open(o.clientPath)
	if err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	defer f.Close()
	if err := record.EachClient(f, fn); err != nil && !errors.Is(err, record.ErrTruncated) {
		return fmt.Errorf("scenario: %s: %w", o.clientPath, err)
	}
	return nil
}

// ServerRecords returns the mock server's recording: Server when it is in memory,
// else read back from server.jsonl; nil when the run has none.
func (o *Outcome) ServerRecords() ([]record.Server, error) {
	if o.Server != nil || o.serverPath == "" {
		return o.Server, nil
	}
	ss, err := loadServer(o.serverPath)
	if errors.Is(err, record.ErrTruncated) {
		err = nil
	}
	return ss, err
}

// RequestsWithGaps is [Outcome.Requests] with each request's inter-chunk gaps
// (check.Request.Gaps), which a goodput SLO on a quantile of a request's gaps
// (ITLPercentile > 0) needs. The summary does not keep per-token values, so it reads
// the client recording again, one record at a time.
func (o *Outcome) RequestsWithGaps() ([]check.Request, error) {
	rs := o.Requests()
	opt := metricOptions(o.Scenario.Config)
	i := 0
	add := func(c *record.Client) error {
		if c.Warmup || i >= len(rs) {
			return nil
		}
		var q metric.Request
		q.Reset(c, opt)
		for _, g := range q.ICL {
			rs[i].Gaps = append(rs[i].Gaps, g.Seconds())
		}
		i++
		return nil
	}
	if o.Client != nil || o.clientPath == "" {
		for k := range o.Client {
			_ = add(&o.Client[k])
		}
		return rs, nil
	}
	f, err := os.Open(o.clientPath)
	if err != nil {
		return rs, fmt.Errorf("scenario: %w", err)
	}
	defer f.Close()
	if err := record.EachClient(f, add); err != nil && !errors.Is(err, record.ErrTruncated) {
		return rs, fmt.Errorf("scenario: %s: %w", o.clientPath, err)
	}
	return rs, nil
}

type keptVerdicts struct {
	verdicts []check.Verdict
	validity []check.Verdict
	ctx      check.Context
	stats    *gate.RunStats
}

// dropRecords lets go of the records and the summary of an outcome whose recordings
// are on disk, keeping what its verdicts need (computed now), so a series of runs
// holds one run's summary at a time. Load(o.Dir) reads them back.
func (o *Outcome) dropRecords() {
	if o.Dir == "" || o.kept != nil {
		return
	}
	rs := o.RunStats()
	o.kept = &keptVerdicts{verdicts: o.Verdicts(), validity: o.Verdicts(check.KindValidity), ctx: o.Context(""), stats: &rs}
	o.Client, o.Server = nil, nil
	o.sum, _ = newSummary(metric.Options{}, metric.SLO{})
}

// Requests returns the measured requests (warm-up excluded) in check's form, with the
// server's input-token counts joined by request id and OSL under the scenario's
// definition (usage-based when Client.UsageOSL). The inter-chunk gaps are left out:
// [Outcome.RequestsWithGaps] reads them back.
func (o *Outcome) Requests() []check.Request { return o.summary().checkRequests() }

// Context describes the run for failure messages. rerun says how to re-run it (may be empty).
func (o *Outcome) Context(rerun string) check.Context {
	if o.kept != nil {
		c := o.kept.ctx
		c.Rerun = rerun
		return c
	}
	s := o.summary()
	c := check.Context{Scenario: o.Scenario.Name, Load: o.Scenario.LoadString(), Seed: o.Scenario.Seed, Rerun: rerun,
		Requests: s.requests, Errors: s.failed}
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

// Verdicts is the run's one list of verdicts: those of the kinds asked for, in the
// order asked, each with its Kind set. With no kind it is the objectives alone, as it
// always was:
//   - [check.KindObjective]: every objective of the scenario ([scenario.Objectives]):
//     [scenario.Objectives.Check] on its requests and metrics, then the length fits (ISLFit,
//     OSLFit) on [Outcome.Lengths], then an abort rule that held;
//   - [check.KindHealth]: the gate every run must pass whatever its objectives: a
//     request completed ([check.Completed]), and the error rate is within the
//     objectives' limit ([scenario.Objectives.MaxErrors]: an error_rate rule, else
//     MaxErrorRate, unchecked when negative; [check.ErrorRate]; zero: no request may
//     fail). The same error-rate verdict is the first objective. perftest.Run reports
//     these through t; `perfgate profile` exits 1 when nothing completed and 99 for
//     errors;
//   - [check.KindValidity]: the run's validity: client-bound, steady state, warm
//     cache and tail samples, each at its mode (those switched off are left out). One
//     that found the run invalid has [check.Status] Invalid: failing (its error wraps
//     [check.ErrInvalidRun]) under validity.ModeFail, passing as a warning under validity.ModeWarn. They
//     are not objectives: an invalid measurement is neither a performance pass nor a
//     regression, so callers report them before (and instead of) the objectives.
//
// The verdicts carry no run context; [Outcome.Check] adds it to the objectives.
func (o *Outcome) Verdicts(kinds ...check.Kind) []check.Verdict {
	if len(kinds) == 0 {
		kinds = []check.Kind{check.KindObjective}
	}
	var vs []check.Verdict
	for _, k := range kinds {
		var of []check.Verdict
		switch k {
		case check.KindObjective:
			of = o.objectives()
		case check.KindHealth:
			of = o.health()
		case check.KindValidity:
			of = o.validity()
		}
		for _, v := range of {
			v.Kind = k
			vs = append(vs, v)
		}
	}
	return vs
}

// objectives are the verdicts of the scenario's objectives ([Outcome.Verdicts]).
func (o *Outcome) objectives() []check.Verdict {
	if o.kept != nil {
		return slices.Clone(o.kept.verdicts)
	}
	obj := o.Scenario.Objectives
	reqs := o.Requests()
	//lint:ignore SA1019 the deprecated goodput objective still needs the gaps until it is removed (v0.3.0)
	if obj.SLO.ITLPercentile > 0 && obj.Goodput > 0 || obj.RulesNeedGaps() {
		if rg, err := o.RequestsWithGaps(); err == nil {
			reqs = rg
		}
	}
	vs := obj.Check(reqs, o.Metrics)
	for _, f := range []struct {
		m    check.Metric
		spec distribution.Spec
	}{{check.ISL, obj.ISLFit}, {check.OSL, obj.OSLFit}} {
		if f.spec.Distribution != nil {
			vs = append(vs, o.LengthFit(f.m, distribution.Length{Dist: f.spec.Distribution}, obj.Alpha))
		}
	}
	if v, ok := o.abortVerdict(); ok && v.Status != check.Invalid {
		vs = append(vs, v) // an abort rule held: an objective failed
	}
	return vs
}

// Health is the gate every run must pass whatever its objectives:
// Verdicts(check.KindHealth).
//
// Deprecated: use [Outcome.Verdicts](check.KindHealth), the one list of a run's
// verdicts; removed in v0.3.0.
func (o *Outcome) Health() []check.Verdict { return o.Verdicts(check.KindHealth) }

// health is the gate every run must pass ([Outcome.Verdicts], check.KindHealth).
func (o *Outcome) health() []check.Verdict {
	reqs := o.Requests()
	vs := []check.Verdict{check.Completed(reqs)}
	if max, ok := o.Scenario.Objectives.MaxErrors(); ok {
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
		v.Evidence = append(v.Evidence, check.OSLEvidence(o.oslRecords(), src == sourceUsage)...)
	}
	return v
}

// ISLCounts are the run's mean input length per request as the client counted the
// message contents, the chat-template tokens around them and the server counted them;
// [reportgen.ISLCounts.Note] is the console's line when they differ.
func (o *Outcome) ISLCounts() reportgen.ISLCounts { return o.summary().islCounts() }

// ReportLengths is what the run report's lengths section draws besides the client's
// counts: the server's counts, the lengths the length checks measure ([Outcome.Lengths])
// and their targets (the length objective when there is one, else the workload's
// configured distribution), with the fit verdict when the fit is an objective (an
// unasserted target is drawn with its KS gap only: its Monte Carlo p-value costs
// seconds a run).
func (o *Outcome) ReportLengths() *reportgen.RunLengths {
	s := o.summary()
	l := &reportgen.RunLengths{ServerModes: s.modes}
	l.ServerISL, l.ServerOSL = s.serverLengths()
	c := o.ISLCounts()
	l.Counts = &c
	obj, wl := o.Scenario.Objectives, o.Scenario.Config.Workload
	for _, f := range []struct {
		m         check.Metric
		fit       *reportgen.LengthFit
		obj, work distribution.Spec
	}{{check.ISL, &l.ISL, obj.ISLFit, wl.ISL}, {check.OSL, &l.OSL, obj.OSLFit, wl.OSL}} {
		f.fit.Source, f.fit.Lengths = o.Lengths(f.m)
		spec := f.obj
		if spec.Distribution == nil {
			spec = f.work
		}
		if spec.Distribution == nil || len(f.fit.Lengths) == 0 {
			continue
		}
		f.fit.Target = distribution.Length{Dist: spec.Distribution}
		if f.obj.Distribution != nil { // the gate's own verdict (its Monte Carlo p is cached); unasserted targets show D only
			v := o.LengthFit(f.m, f.fit.Target, obj.Alpha)
			f.fit.Verdict, f.fit.Asserted = &reportgen.Verdict{Pass: v.Pass, Text: v.String()}, true
		}
	}
	return l
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
	return o.summary().lengths(m)
}
