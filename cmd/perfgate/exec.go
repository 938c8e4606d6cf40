package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/record"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/reportgen/sweep"
	"github.com/perfgate/perfgate/tokenizer"
)

// withDefaults fills the zero fields of sc as scenario.Run documents them.
func withDefaults(sc scenario.Scenario) scenario.Scenario {
	if sc.Name == "" {
		sc.Name = "profile"
	}
	if sc.Tokenizer == "" {
		sc.Tokenizer = scenario.DefaultTokenizer
	}
	if sc.Requests == 0 && sc.Duration == 0 && sc.InputFile == "" && sc.Client.Requests == 0 && sc.Client.Duration == 0 && sc.Client.InputFile == "" {
		sc.Requests = scenario.DefaultRequests
	}
	if sc.Endpoint == "" {
		if sc.Mock.Tokenizer == "" {
			sc.Mock.Tokenizer = sc.Tokenizer
		}
		if sc.Mock.Seed == 0 {
			sc.Mock.Seed = sc.Seed
		}
	}
	return sc
}

// runResult is one executed run.
type runResult struct {
	out      *scenario.Outcome
	load     *loadgen.Outcome
	tok      *tokenizer.Tokenizer
	verdicts []check.Verdict
	files    []string
}

// execute runs sc as scenario.Run does (tokenizer, optional in-process mock on
// 127.0.0.1, load generator, mock closed so its recording is complete), calling sink
// with each finished request for the progress display. Nothing is written here.
func execute(ctx context.Context, sc scenario.Scenario, tok *tokenizer.Tokenizer, recordDir string, sink func(record.Client)) (*runResult, error) {
	sc = withDefaults(sc)
	var err error
	res := &runResult{tok: tok, out: &scenario.Outcome{}}
	url := sc.Endpoint
	var srv *mockserver.Server
	if url == "" {
		mc := sc.Mock
		mc.Host, mc.Port = "127.0.0.1", 0 // loopback only, a free port
		if recordDir != "" && mc.RecordFile == "" {
			mc.RecordFile = filepath.Join(recordDir, scenario.ServerFile)
		}
		opts := []mockserver.Option{mockserver.WithConfig(mc)}
		if mc.Tokenizer == sc.Tokenizer {
			opts = append(opts, mockserver.WithTokenizer(tok))
		}
		if srv, err = mockserver.New(opts...); err != nil {
			return nil, invalid(fmt.Errorf("mock server: %w", err))
		}
		if err := srv.Start(); err != nil {
			return nil, runtimef("mock server: %v", err)
		}
		defer srv.Close()
		url = srv.URL()
		res.out.Mocked = true
		if sc.Model == "" && sc.Client.Model == "" && len(mc.Models) > 0 {
			sc.Model = mc.Models[0]
		}
	}
	cfg := sc.LoadConfig(url)
	if err := cfg.Validate(); err != nil {
		return nil, invalid(err)
	}
	lo, runErr := loadgen.Run(ctx, cfg, tok, sink)
	if srv != nil {
		if err := srv.Close(); err != nil && runErr == nil {
			runErr = fmt.Errorf("mock server: %w", err)
		}
		res.out.Server = srv.Records()
		if res.out.Server == nil {
			res.out.Server = []record.Server{}
		}
	}
	if lo == nil {
		if errors.Is(runErr, loadgen.ErrInvalidConfig) {
			return nil, invalid(runErr)
		}
		return nil, runtimef("%v", runErr)
	}
	res.load = lo
	res.out.Client, res.out.Metrics = lo.Records, lo.Metrics
	res.out.TemplateOverhead = chatOverhead(tok, cfg, lo)
	if res.out.Mocked {
		sc.Endpoint = ""
	}
	sc.APIKey = ""
	res.out.Scenario = sc
	if runErr != nil && !errors.Is(runErr, context.Canceled) && !errors.Is(runErr, context.DeadlineExceeded) {
		return res, runtimef("%v", runErr)
	}
	return res, nil
}

// loadTokenizer loads the scenario's tokenizer (once per name: sweeps reuse it).
func loadTokenizer(sc scenario.Scenario) (*tokenizer.Tokenizer, error) {
	name := cmpOr(sc.Tokenizer, scenario.DefaultTokenizer)
	tokMu.Lock()
	defer tokMu.Unlock()
	if t, ok := tokCache[name]; ok {
		return t, nil
	}
	t, err := tokenizer.Load(name)
	if err != nil {
		return nil, invalidf("--tokenizer %s: %v", name, err)
	}
	tokCache[name] = t
	return t, nil
}

var (
	tokMu    sync.Mutex
	tokCache = map[string]*tokenizer.Tokenizer{}
)

// lengths returns the ISL or OSL sample the length checks use: with the mock what the
// server received and generated, else what the client counted (as perftest does).
func lengths(o *scenario.Outcome, m check.Metric) (string, []int) {
	warm := map[string]bool{}
	for i := range o.Client {
		if o.Client[i].Warmup {
			warm[o.Client[i].RequestID] = true
		}
	}
	var out []int
	if o.Mocked {
		for i := range o.Server {
			s := &o.Server[i]
			if s.Rejected != "" || s.Fault != "" || s.Status != 200 || warm[s.RequestID] {
				continue
			}
			if m == check.OSL {
				out = append(out, s.OSL)
			} else {
				out = append(out, s.ISL)
			}
		}
		return "server", out
	}
	for i := range o.Client {
		c := &o.Client[i]
		if c.Warmup || !c.OK() {
			continue
		}
		if m == check.OSL {
			out = append(out, c.OSL)
		} else {
			out = append(out, c.ISL)
		}
	}
	return "client", out
}

// judge evaluates the objectives and the length fits of a run.
func judge(r *runResult, o profileOpts) []check.Verdict {
	if !o.hasAsserts {
		return nil
	}
	vs := r.out.Check()
	if o.tokenizerMatch >= 0 {
		vs = append(vs, check.TokenizerMatch(r.out.Requests(), o.tokenizerMatch).With(r.out.Context("")))
	}
	for _, lf := range []struct {
		m    check.Metric
		text string
	}{{check.ISL, o.assertISL}, {check.OSL, o.assertOSL}} {
		if lf.text == "" {
			continue
		}
		d, _ := distribution.Parse(lf.text) // validated when the flags were read
		src, xs := lengths(r.out, lf.m)
		v := check.LengthFit(lf.m.Label()+" ("+src+" count)", xs, distribution.Length{Dist: d}, o.alpha)
		vs = append(vs, v.With(r.out.Context("")))
	}
	return vs
}

// writeArtifacts writes the run's files into dir: the scenario's own artifacts
// (client.jsonl, metrics.json, scenario.json; the mock wrote server.jsonl) and
// reportgen's exports (AIPerf files, HTML report, manifest last). Every file is written
// under a temporary name and renamed when complete.
func writeArtifacts(e *env, dir string, r *runResult, interrupted bool) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, invalidf("--artifact-dir %s: %v", dir, unwrapPath(err))
	}
	var files []string
	write := func(name string, f func(io.Writer) error) error {
		p := filepath.Join(dir, name)
		if err := reportgen.WriteFileAtomic(p, f); err != nil {
			return runtimef("%v", err)
		}
		files = append(files, p)
		return nil
	}
	if err := write(scenario.MetricsFile, func(w io.Writer) error { return jsonTo(w, r.out.Metrics) }); err != nil {
		return files, err
	}
	if err := write(scenario.ScenarioFile, func(w io.Writer) error { return jsonTo(w, r.out.Scenario) }); err != nil {
		return files, err
	}
	if err := write(scenario.ClientFile, func(w io.Writer) error {
		enc := record.NewEncoder(w)
		for i := range r.out.Client {
			if err := enc.Encode(&r.out.Client[i]); err != nil {
				return err
			}
		}
		return enc.Flush()
	}); err != nil {
		return files, err
	}
	if len(r.verdicts) > 0 {
		if err := write(scenario.VerdictsFile, func(w io.Writer) error {
			for _, v := range r.verdicts {
				mark := "PASS"
				if !v.Pass {
					mark = "FAIL"
				}
				if _, err := fmt.Fprintf(w, "%s %s\n\n", mark, v.String()); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return files, err
		}
	}
	sc := r.out.Scenario
	man := reportgen.Manifest{
		Command:   e.args,
		Scenario:  sc.Name,
		Config:    sc,
		Seed:      sc.Seed,
		Tokenizer: &reportgen.TokenizerInfo{Name: r.tok.Name(), Source: r.tok.Source(), Fingerprint: r.tok.Fingerprint()},
	}
	if r.load != nil && !r.load.Start.IsZero() {
		man.Created = r.load.Start.UTC()
	}
	ro := reportgen.RunReportOptions{Title: "perfgate: " + sc.Name + " (" + sc.LoadString() + ")"}
	for _, v := range r.verdicts {
		ro.Verdicts = append(ro.Verdicts, reportgen.Verdict{Pass: v.Pass, Text: v.String()})
	}
	paths, err := reportgen.WriteExports(dir, reportgen.Run{Records: r.out.Client, Metrics: r.out.Metrics, Manifest: man, Cancelled: interrupted},
		reportgen.ExportOptions{Report: ro})
	files = append(files, paths...)
	if err != nil {
		return files, runtimef("%v", err)
	}
	return files, nil
}

// printVerdicts prints each verdict with PASS/FAIL and returns whether all passed.
func printVerdicts(w io.Writer, vs []check.Verdict) bool {
	ok := true
	for _, v := range vs {
		mark := "PASS"
		if !v.Pass {
			mark, ok = "FAIL", false
		}
		fmt.Fprintf(w, "%s %s\n", mark, v.String())
	}
	return ok
}

// profile runs the scenario once, repeatedly, as a sweep or as a search, prints the
// results and maps the verdicts onto the exit code.
func profile(ctx context.Context, e *env, sc scenario.Scenario, o profileOpts) error {
	if err := preflight(ctx, sc.Endpoint); err != nil {
		return err
	}
	switch {
	case o.sweepConc != "" || o.sweepRate != "":
		return profileSweep(ctx, e, sc, o)
	case o.searchConc != "" || o.searchRate != "":
		return profileSearch(ctx, e, sc, o)
	case o.numRuns > 1:
		return profileRepeat(ctx, e, sc, o)
	}
	if !o.quiet {
		fmt.Fprintln(e.stdout, describe(sc))
	}
	r, err := runOne(ctx, e, sc, o, o.artifactDir, "")
	if err != nil {
		return err
	}
	if !o.quiet {
		_ = reportgen.WriteTable(e.stdout, r.out.Metrics, reportgen.TableOptions{Width: e.width})
	}
	return finish(ctx, e, r, o, o.artifactDir)
}

// runOne executes one run with progress and writes its artifacts.
func runOne(ctx context.Context, e *env, sc scenario.Scenario, o profileOpts, dir, label string) (*runResult, error) {
	tok, err := loadTokenizer(sc)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, invalidf("--artifact-dir %s: %v", dir, unwrapPath(err))
	}
	total := sc.Requests
	if total == 0 && sc.Duration == 0 && sc.InputFile == "" {
		total = scenario.DefaultRequests
	}
	var sink func(record.Client)
	var pr *progress
	if !o.quiet {
		pr = newProgress(e.stderr, e.tty, total, cmpOr(label, cmpOr(sc.Name, "profile")))
		pr.width = e.width
		sink = pr.sink
		pr.begin()
	}
	r, err := execute(ctx, sc, tok, dir, sink)
	if pr != nil {
		pr.end()
	}
	if r == nil {
		return nil, err
	}
	interrupted := r.load != nil && r.load.Interrupted
	r.verdicts = judge(r, o)
	files, werr := writeArtifacts(e, dir, r, interrupted)
	r.files = files
	if err == nil {
		err = werr
	}
	if err == nil && interrupted {
		err = &exitError{ExitInterrupted, fmt.Errorf("interrupted after %d requests; partial results in %s (marked was_cancelled)", len(r.out.Client), artifactPath(dir))}
	}
	return r, err
}

// finish prints the verdicts and where the artifacts are, and returns the exit error.
func finish(ctx context.Context, e *env, r *runResult, o profileOpts, dir string) error {
	ok := printVerdicts(e.stdout, r.verdicts)
	m := r.out.Metrics
	if m.Value(record.MetricRequestCount) == 0 && len(r.out.Client) > 0 {
		fmt.Fprintf(e.stdout, "artifacts: %s\n", artifactPath(dir))
		return runtimef("no request succeeded (%d failed); first error: %s", len(r.out.Client), firstError(r.out.Client))
	}
	fmt.Fprintf(e.stdout, "artifacts: %s\nreport:    %s\n", artifactPath(dir), filepath.Join(artifactPath(dir), reportgen.RunReportFile))
	if len(r.verdicts) > 0 {
		if ok {
			fmt.Fprintf(e.stdout, "PASS: %d assertion(s)\n", len(r.verdicts))
		} else {
			fmt.Fprintf(e.stdout, "FAIL: %d of %d assertion(s)\n", countFailed(r.verdicts), len(r.verdicts))
			return errAssertFailed
		}
	}
	return nil
}

func countFailed(vs []check.Verdict) int {
	n := 0
	for _, v := range vs {
		if !v.Pass {
			n++
		}
	}
	return n
}

func firstError(cs []record.Client) string {
	for i := range cs {
		if !cs[i].OK() {
			return cs[i].ErrorKind + ": " + cs[i].Error
		}
	}
	return ""
}

func allPass(vs []check.Verdict) (bool, string) {
	for _, v := range vs {
		if !v.Pass {
			return false, v.Summary
		}
	}
	return true, ""
}

// profileRepeat runs the scenario N times (seeds seed, seed+1, …) into run-001, …
// and reports each metric as a mean with a confidence interval.
func profileRepeat(ctx context.Context, e *env, sc scenario.Scenario, o profileOpts) error {
	var ms []record.Metrics
	failed := 0
	for i := range o.numRuns {
		s := sc
		s.Seed = sc.Seed + uint64(i)
		dir := filepath.Join(o.artifactDir, fmt.Sprintf("run-%03d", i+1))
		r, err := runOne(ctx, e, s, o, dir, fmt.Sprintf("run %d/%d", i+1, o.numRuns))
		if err != nil {
			return err
		}
		ms = append(ms, r.out.Metrics)
		if ok, _ := allPass(r.verdicts); !ok {
			failed++
			printVerdicts(e.stdout, r.verdicts)
		}
	}
	est := sweep.Repeat(ms, o.confidence)
	if !o.quiet {
		_ = sweep.WriteRepeatTable(e.stdout, est)
	}
	if err := reportgen.WriteFileAtomic(filepath.Join(o.artifactDir, "repeat.json"), func(w io.Writer) error { return jsonTo(w, est) }); err != nil {
		return runtimef("%v", err)
	}
	fmt.Fprintf(e.stdout, "artifacts: %s (run-001 … run-%03d, repeat.json)\n", artifactPath(o.artifactDir), o.numRuns)
	if o.hasAsserts {
		if failed > 0 {
			fmt.Fprintf(e.stdout, "FAIL: %d of %d runs failed an assertion\n", failed, o.numRuns)
			return errAssertFailed
		}
		fmt.Fprintf(e.stdout, "PASS: all %d runs met every assertion\n", o.numRuns)
	}
	return nil
}

// levelScenario returns sc at one load level.
func levelScenario(sc scenario.Scenario, rate bool, load float64) scenario.Scenario {
	if rate {
		sc.Rate = load
	} else {
		sc.Concurrency = int(load)
	}
	return sc
}

func levelName(rate bool, load float64) string {
	if rate {
		return "rate-" + strconv.FormatFloat(load, 'g', 6, 64)
	}
	return fmt.Sprintf("concurrency-%d", int(load))
}

// profileSweep runs every level (times --num-runs) and prints a table.
func profileSweep(ctx context.Context, e *env, sc scenario.Scenario, o profileOpts) error {
	rate := o.sweepRate != ""
	spec, flagName, loadName := o.sweepConc, "--sweep-concurrency", "concurrency"
	if rate {
		spec, flagName, loadName = o.sweepRate, "--sweep-rate", "rate"
	}
	levels, err := sweep.Levels(spec)
	if err != nil {
		return invalidf("%s: %v", flagName, strings.TrimPrefix(err.Error(), "sweep: "))
	}
	if !rate {
		for _, l := range levels {
			if l != float64(int(l)) {
				return invalidf("%s: concurrency %g is not a whole number", flagName, l)
			}
		}
	}
	var pts []sweep.Point
	anyFail := false
	for _, l := range levels {
		for rep := range o.numRuns {
			s := levelScenario(sc, rate, l)
			s.Seed = sc.Seed + uint64(rep)
			dir := filepath.Join(o.artifactDir, levelName(rate, l))
			if o.numRuns > 1 {
				dir = filepath.Join(dir, fmt.Sprintf("run-%03d", rep+1))
			}
			r, err := runOne(ctx, e, s, o, dir, fmt.Sprintf("%s %g", loadName, l))
			if err != nil {
				return err
			}
			ok, note := allPass(r.verdicts)
			anyFail = anyFail || !ok
			pts = append(pts, sweep.Point{Load: l, Repeat: rep, Metrics: r.out.Metrics, Pass: ok, Note: note, Dir: dir})
		}
	}
	if !o.quiet {
		_ = sweep.WriteSweepTable(e.stdout, loadName, pts)
	}
	if err := writeSweepFiles(o.artifactDir, "sweep", fmt.Sprintf("perfgate: %s sweep of %s", loadName, cmpOr(sc.Name, "profile")), loadName, pts); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "artifacts: %s (one directory per level, sweep.csv)\nreport:    %s\n", artifactPath(o.artifactDir),
		filepath.Join(artifactPath(o.artifactDir), reportgen.SweepReportFile))
	if o.hasAsserts && anyFail {
		return errAssertFailed
	}
	return nil
}

// profileSearch bisects for the highest load meeting every assertion.
func profileSearch(ctx context.Context, e *env, sc scenario.Scenario, o profileOpts) error {
	rate := o.searchRate != ""
	spec, flagName, loadName := o.searchConc, "--search-concurrency", "concurrency"
	if rate {
		spec, flagName, loadName = o.searchRate, "--search-rate", "rate"
	}
	los, his, ok := strings.Cut(spec, ":")
	lo, err1 := strconv.ParseFloat(los, 64)
	hi, err2 := strconv.ParseFloat(his, 64)
	if !ok || err1 != nil || err2 != nil || !(lo > 0) || !(hi > lo) {
		return invalidf("%s %q: want LO:HI with 0 < LO < HI, e.g. 1:64", flagName, spec)
	}
	if !(o.searchTol > 0 && o.searchTol < 1) {
		return invalidf("--search-tolerance: want a fraction in (0, 1), got %g", o.searchTol)
	}
	res, err := sweep.Search(ctx, sweep.SearchOptions{Lo: lo, Hi: hi, Tolerance: o.searchTol, Integer: !rate},
		func(ctx context.Context, load float64) (sweep.Point, error) {
			dir := filepath.Join(o.artifactDir, levelName(rate, load))
			r, err := runOne(ctx, e, levelScenario(sc, rate, load), o, dir, fmt.Sprintf("%s %g", loadName, load))
			if err != nil {
				return sweep.Point{}, err
			}
			ok, note := allPass(r.verdicts)
			return sweep.Point{Metrics: r.out.Metrics, Pass: ok, Note: note, Dir: dir}, nil
		})
	if err != nil {
		return err
	}
	if !o.quiet {
		_ = sweep.WriteSweepTable(e.stdout, loadName, res.Probes)
	}
	if err := writeSweepFiles(o.artifactDir, "search", fmt.Sprintf("perfgate: %s search for %s", loadName, cmpOr(sc.Name, "profile")), loadName, res.Probes); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "artifacts: %s (one directory per probe, search.csv)\nreport:    %s\n", artifactPath(o.artifactDir),
		filepath.Join(artifactPath(o.artifactDir), reportgen.SweepReportFile))
	if !res.Found {
		fmt.Fprintf(e.stdout, "FAIL: no %s in [%g, %g] meets the assertions (%g fails)\n", loadName, lo, hi, res.FailedAt)
		return errAssertFailed
	}
	if res.FailedAt > 0 {
		fmt.Fprintf(e.stdout, "highest %s meeting the assertions: %g (%g fails)\n", loadName, res.Best, res.FailedAt)
	} else {
		fmt.Fprintf(e.stdout, "highest %s meeting the assertions: %g (the top of the range)\n", loadName, res.Best)
	}
	return nil
}

// writeSweepFiles writes NAME.csv and the sweep HTML report of the points into dir.
func writeSweepFiles(dir, name, title, loadName string, pts []sweep.Point) error {
	if err := reportgen.WriteFileAtomic(filepath.Join(dir, name+".csv"), func(w io.Writer) error { return sweep.WriteSweepCSV(w, loadName, pts) }); err != nil {
		return runtimef("%v", err)
	}
	if len(pts) == 0 {
		return nil
	}
	if err := reportgen.WriteFileAtomic(filepath.Join(dir, reportgen.SweepReportFile), func(w io.Writer) error {
		return reportgen.WriteSweepReport(w, dir, title, loadName, pts)
	}); err != nil {
		return runtimef("%v", err)
	}
	return nil
}

// chatOverhead computes, per turn, how many input tokens the chat template adds around
// the message contents (the client counts contents, the server the rendering), as
// perftest/scenario.Run does for its Outcome: a probe conversation rendered with the
// tokenizer's template, or ChatML as the mock and vLLM do without one, minus the
// contents' counts. nil unless the endpoint is chat with synthetic prompts.
func chatOverhead(tok *tokenizer.Tokenizer, cfg loadgen.Config, lo *loadgen.Outcome) []int {
	if cfg.Endpoint != "" && cfg.Endpoint != loadgen.EndpointChat || cfg.InputFile != "" {
		return nil
	}
	turns := 1
	for i := range lo.Records {
		turns = max(turns, lo.Records[i].Turn+1)
	}
	const probe = "The quick brown fox jumps over the lazy dog."
	out := make([]int, turns)
	for k := range turns {
		var msgs []tokenizer.Message
		contents := 0
		if cfg.SystemPrompt != "" || cfg.PrefixTokens > 0 {
			msgs = append(msgs, tokenizer.Message{Role: "system", Content: probe})
			contents += tok.Count(probe, false)
		}
		for j := range 2*k + 1 {
			role := "user"
			if j%2 == 1 {
				role = "assistant"
			}
			msgs = append(msgs, tokenizer.Message{Role: role, Content: probe})
			contents += tok.Count(probe, false)
		}
		var n int
		if tok.HasChatTemplate() {
			s, err := tok.ApplyChatTemplate(msgs, tokenizer.ChatOptions{AddGenerationPrompt: true})
			if err != nil {
				return nil
			}
			n = tok.Count(s, false)
		} else {
			n = tok.Count(tokenizer.RenderChatMLFallback(msgs, true), false)
		}
		out[k] = n - contents
	}
	return out
}

// describe is the one-line summary of what a profile is about to do.
func describe(sc scenario.Scenario) string {
	d := withDefaults(sc)
	target := "the in-process mock server"
	if d.Endpoint != "" {
		target = d.Endpoint
	}
	var stop string
	switch {
	case d.InputFile != "":
		stop = "the requests of " + d.InputFile
	case d.Duration > 0 && d.Requests > 0:
		stop = fmt.Sprintf("%d requests or %s", d.Requests, d.Duration)
	case d.Duration > 0:
		stop = d.Duration.String()
	default:
		stop = fmt.Sprintf("%d requests", d.Requests)
	}
	isl, osl := "fixed:128", "server default"
	if d.ISL.Distribution != nil {
		isl = d.ISL.String()
	}
	if d.OSL.Distribution != nil {
		osl = d.OSL.String()
	}
	ep := string(d.EndpointType)
	if ep == "" {
		ep = "chat"
	}
	return fmt.Sprintf("perfgate profile: %s (%s), %s, %s, ISL %s, OSL %s, tokenizer %s, seed %d",
		target, ep, d.LoadString(), stop, isl, osl, d.Tokenizer, d.Seed)
}
