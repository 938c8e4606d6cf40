package scenario

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/record"
	"github.com/perfgate/perfgate/perftest/check"
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
	// Client is the client recording, warm-up requests included (marked Warmup).
	Client []record.Client
	// Server is the mock server's recording (nil for a real endpoint, whose
	// usage.prompt_tokens is in the client records instead).
	Server []record.Server
	// TemplateOverhead[k] is how many input tokens the chat template adds, beyond the
	// message contents, to a request at turn k (nil when the endpoint is not chat or the
	// tokenizer could not be loaded). The client counts contents; the server (mock or
	// usage.prompt_tokens) counts the rendered template, so the tokenizer-match check
	// expects this difference.
	TemplateOverhead []int
	// Metrics summarises Client (warm-up excluded).
	Metrics record.Metrics
	// Dir is the artifact directory ("" if none was written) and Files the artifacts in it.
	Dir   string
	Files []string
}

// Requests returns the measured requests (warm-up excluded) in check's form, with the
// server's input-token counts joined by request id.
func (o *Outcome) Requests() []check.Request {
	rs := check.FromClient(o.Client)
	for i := range rs {
		if t := rs[i].Turn; t >= 0 && t < len(o.TemplateOverhead) {
			rs[i].Overhead = o.TemplateOverhead[t]
		}
	}
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

// LengthFit tests whether the run's input (m = check.ISL) or output (check.OSL)
// lengths, as [Outcome.Lengths] gives them, fit target at level alpha (0 =
// check.DefaultAlpha), with check.LengthFit's discrete-aware test.
func (o *Outcome) LengthFit(m check.Metric, target distribution.Length, alpha float64) check.Verdict {
	src, xs := o.Lengths(m)
	return check.LengthFit(m.Label()+" ("+src+")", xs, target, alpha)
}

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
// count"); on a single-turn chat endpoint the chat template's overhead
// (TemplateOverhead[0]) is taken off the server's input counts, so they compare with
// the configured ISL (multi-turn inputs include the history and are left whole). With
// a real endpoint they are the client's counts ("client count").
//
// Server records are matched to the client's warm-up requests by request id when the
// server kept the client's ids, else by arrival order (the first WarmupRequests).
func (o *Outcome) Lengths(m check.Metric) (source string, lengths []int) {
	if o.Server == nil {
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
	overhead := 0
	source = "server count"
	if m == check.ISL && len(o.TemplateOverhead) == 1 && o.TemplateOverhead[0] != 0 {
		overhead = o.TemplateOverhead[0]
		source = fmt.Sprintf("server count less the chat template's %d tokens", overhead)
	}
	for i := range recs {
		s := &recs[i]
		if s.Rejected != "" || s.Fault != "" || s.Status != 200 || (byID && warm[s.RequestID]) {
			continue
		}
		if m == check.OSL {
			lengths = append(lengths, s.OSL)
			continue
		}
		n := s.ISL
		if s.TokenizationMode == record.ModeChatTemplate || s.TokenizationMode == record.ModeChatTemplateFallback {
			n -= overhead
		}
		lengths = append(lengths, n)
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
