package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/record"
	"github.com/perfgate/perfgate/reportgen"
	"github.com/perfgate/perfgate/servermetrics"
	"github.com/perfgate/perfgate/tokenizer"
)

// Run runs sc: it loads the tokenizer, starts the in-process mock server on 127.0.0.1
// when sc.URLs is empty, drives the load generator until the request count or
// duration is reached or ctx is done, stops the mock (so its recording is complete),
// and writes the artifacts into artifactDir ("" = write none): the client recording,
// the mock's recording and summary, the metrics, the scenario (API key redacted), the
// objectives' verdicts, and reportgen's exports (AIPerf JSON, CSV and JSONL, the HTML
// report, and the manifest, written last). Each file is written under a temporary
// name and renamed when complete. opts add a progress callback ([OnRecord]), a
// preloaded tokenizer ([WithTokenizer]) or the command line for the manifest
// ([WithCommand]).
//
// Run returns an error without an Outcome if the run could not be set up: an invalid
// scenario, an unloadable tokenizer, a mock configuration the mock rejects, or an
// input the load generator rejects when it reads it (these wrap [scenario.ErrInvalidScenario]),
// a mock that cannot bind, or an unwritable artifact directory. Requests that fail are part of the outcome, not errors. If ctx
// is cancelled mid-run, Run returns what was recorded so far with Interrupted set and
// a nil error (the exports are marked was_cancelled). If the run was carried out but
// ended by another error (the mock failing to shut down, an artifact that cannot be
// written), Run returns the Outcome and the error.
func Run(ctx context.Context, sc scenario.Scenario, artifactDir string, opts ...RunOption) (*Outcome, error) {
	rc := newRunConfig(opts)
	sc = sc.WithDefaults()
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
	}
	limitWarnings, err := CheckLimits(sc)
	if err != nil {
		return nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
	}
	tok := rc.tok
	if tok == nil {
		var err error
		if tok, err = tokenizer.Load(sc.Tokenizer); err != nil {
			return nil, fmt.Errorf("scenario %q: %w: tokenizer: %w", sc.Name, scenario.ErrInvalidScenario, err)
		}
	}
	if artifactDir != "" {
		if err := os.MkdirAll(artifactDir, 0o755); err != nil {
			return nil, fmt.Errorf("scenario %q: artifacts: %w", sc.Name, err)
		}
	}
	out := &Outcome{Dir: artifactDir, limitWarnings: limitWarnings}
	cfg := sc.Config
	cfg.RecordFile = "" // Run writes the recording itself, below
	var srv *mockserver.Server
	serverFile := "" // the mock's recording, when Run chose where it goes
	if sc.Mocked() {
		mc := sc.Mock
		mc.Host, mc.Port = "127.0.0.1", 0 // loopback only, a free port
		if len(mc.Models) == 0 {
			mc.Models = sc.ModelNames // a model mix: the mock serves and lists each
		}
		if artifactDir != "" && mc.RecordFile == "" {
			// The mock appends its records to the file as it serves; they are read
			// back from there after the run, not kept in memory as well.
			mc.RecordFile = filepath.Join(artifactDir, ServerFile)
			mc.DiscardRecords = true
			serverFile = mc.RecordFile
		}
		mopts := []mockserver.Option{mockserver.WithConfig(mc)}
		if mc.Tokenizer == sc.Tokenizer {
			mopts = append(mopts, mockserver.WithTokenizer(tok)) // load it once
		}
		var err error
		if srv, err = mockserver.New(mopts...); err != nil {
			return nil, fmt.Errorf("scenario %q: %w: mock server: %w", sc.Name, scenario.ErrInvalidScenario, err)
		}
		if err := srv.Start(); err != nil {
			return nil, fmt.Errorf("scenario %q: mock server: %w", sc.Name, err)
		}
		defer srv.Close() // after the explicit Close below, a no-op; on early return, cleanup
		cfg.URLs = []string{srv.URL()}
		if mc.TLSCert != "" && cfg.TLSCA == "" && !cfg.InsecureSkipVerify {
			cfg.TLSCA = mc.TLSCert // the mock's own certificate verifies it (self-signed or its chain's CA)
		}
		out.Mocked = true
		if sc.Model == "" && len(sc.ModelNames) == 0 && len(mc.Models) > 0 {
			sc.Model = mc.Models[0]
			cfg.Model = sc.Model
		}
	}
	var served *serverRun
	if sc.Server != nil {
		var err error
		if ctx, served, err = startServer(ctx, &sc, &cfg, artifactDir); err != nil {
			return nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
		}
		defer served.finish() // after the explicit finish below, a no-op; on early return, cleanup
	}
	if artifactDir != "" {
		// The scenario goes first, so a killed run's directory says what ran and
		// Load (perfgate report) can rebuild its reports and verdicts.
		asRun := sc
		asRun.APIKey = ""
		if err := reportgen.WriteFileAtomic(filepath.Join(artifactDir, ScenarioFile), func(w io.Writer) error { return reportgen.WriteJSON(w, asRun) }); err != nil {
			return nil, fmt.Errorf("scenario %q: artifacts: %w", sc.Name, err)
		}
		// Records reach disk as requests finish (loadgen flushes at least every
		// second), so a killed run keeps what it measured; the file is the one copy,
		// read back after the run for the verdicts and exports.
		cfg.RecordFile = filepath.Join(artifactDir, ClientFile)
		cfg.DiscardRecords = true
		// The metrics come from that pass (summarizeFiles, below): the load
		// generator keeps only the run-level counts while the load runs.
		cfg.TotalsOnly = true
	}
	// What is measured, pinned before the load: who answers, over which path.
	metricsURL := ""
	if sc.ServerMetrics.Enabled() {
		if us := sc.ServerMetrics.Resolve(cfg.URLs[0]).URLs; len(us) > 0 {
			metricsURL = us[0]
		}
	}
	out.Pins = &Pins{VCS: reportgen.BuildVCS()}
	out.Pins.Servers, out.Pins.Topology = identifyBefore(ctx, sc, cfg.URLs)
	if sc.Validity.CacheBust {
		cfg.PromptSalt = loadgen.NewPromptSalt()
	}
	for _, u := range resetURLs(sc.Validity, cfg.URLs) {
		if err := resetCache(ctx, sc, u); err != nil {
			return nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
		}
	}
	var scraper *servermetrics.Scraper
	var smFile *os.File
	if sc.ServerMetrics.Enabled() {
		var w io.Writer
		if artifactDir != "" {
			f, err := os.Create(filepath.Join(artifactDir, servermetrics.File))
			if err != nil {
				return nil, fmt.Errorf("scenario %q: artifacts: %w", sc.Name, err)
			}
			smFile, w = f, f
			defer smFile.Close() // on early return; closed below otherwise
		}
		// The scrapes outlive a cancelled run: the one after it still says where
		// the server's counters ended. Each is bounded by the scrape timeout.
		var err error
		if scraper, err = servermetrics.Start(context.WithoutCancel(ctx), sc.ServerMetrics.Resolve(cfg.URLs[0]), w); err != nil {
			return nil, fmt.Errorf("scenario %q: %w: %w", sc.Name, scenario.ErrInvalidScenario, err)
		}
	}
	var gpu *gpuRun
	if sc.GPUTelemetry.Enabled() {
		// An endpoint that is down is said once, by the summary's warnings after the run.
		g, _, err := startGPU(ctx, sc, cfg.URLs[0], artifactDir)
		if err != nil {
			if scraper != nil {
				_, _ = scraper.Stop()
			}
			return nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
		}
		gpu = g
		defer gpu.close() // on early return; stopped below otherwise
	}
	if w := newAbortWatch(sc.Abort, metricOptions(cfg)); w != nil {
		cfg.Watch = w
	}
	cfg.Watch = withInFlight(cfg.Watch, rc.onInFlight)
	var lo *loadgen.Outcome
	var runErr error
	if len(sc.Classes) > 0 {
		lo, runErr = runClasses(ctx, sc, cfg, tok, rc.onRecord) // classes.go: one run of several
	} else {
		lo, runErr = loadgen.Run(ctx, cfg, tok, rc.onRecord)
	}
	if lo != nil {
		identifyAfter(context.WithoutCancel(ctx), sc, out.Pins.Servers, metricsURL)
	}
	if scraper != nil {
		if srv != nil {
			// The mock counts a request when it has recorded it, just after the last
			// byte went out: let the requests the client saw finish count first.
			for i := 0; srv.InFlight() > 0 && i < 2000; i++ {
				time.Sleep(time.Millisecond)
			}
		}
		sum, err := scraper.Stop()
		out.ServerMetrics = &sum
		if smFile != nil {
			if cerr := smFile.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("servermetrics: %w", cerr)
			}
			out.Files = append(out.Files, smFile.Name())
		}
		if err != nil && runErr == nil {
			runErr = err
		}
	}
	if gpu != nil {
		name, err := gpu.stop()
		if name != "" {
			out.Files = append(out.Files, name)
		}
		if err != nil && runErr == nil {
			runErr = err
		}
	}
	if srv != nil {
		if err := srv.Close(); err != nil && runErr == nil {
			runErr = fmt.Errorf("mock server: %w", err)
		}
		if serverFile != "" {
			out.serverPath = serverFile // summarised from the file below
		} else if out.Server = srv.Records(); out.Server == nil {
			out.Server = []record.Server{}
		}
	}
	if served != nil {
		runErr = served.after(runErr)
		if artifactDir != "" {
			stdout, stderr := served.p.Logs()
			out.Files = append(out.Files, stdout, stderr)
		}
	}
	if lo == nil {
		if errors.Is(runErr, loadgen.ErrInvalidConfig) {
			return nil, fmt.Errorf("scenario %q: %w: %w", sc.Name, scenario.ErrInvalidScenario, runErr)
		}
		return nil, fmt.Errorf("scenario %q: %w", sc.Name, runErr)
	}
	out.Client, out.Metrics, out.Interrupted = lo.Records, lo.Metrics, lo.Interrupted
	out.Warnings = append(out.Warnings, lo.Warnings...)
	self := lo.Self
	out.Self = &self
	out.Pins.Dataset = &reportgen.Dataset{Fingerprint: lo.Fingerprint, Requests: lo.Fingerprinted}
	if err := writeShard(artifactDir, cfg, rc, lo); err != nil && runErr == nil {
		runErr = fmt.Errorf("artifacts: %w", err)
	}
	if cfg.RecordFile != "" {
		// One streaming pass over the recordings gives the exact metrics (loadgen's,
		// kept in constant memory, are approximate) and the verdicts' compact inputs.
		out.clientPath = cfg.RecordFile
		out.Files = append(out.Files, cfg.RecordFile)
		s, err := summarizeFiles(cfg.RecordFile, out.serverPath, metricOptions(cfg), cfg.SLO)
		if err != nil && runErr == nil {
			runErr = err
		}
		if s != nil {
			out.sum, out.Metrics = s, s.metrics
		}
	}
	out.setPrefixIdeal(lo.PrefixCache)
	if gpu != nil {
		out.summarizeGPU(gpu.acc)
	}
	out.completeSaved()
	if runErr != nil && (errors.Is(runErr, context.Canceled) || errors.Is(runErr, context.DeadlineExceeded)) {
		runErr = nil // the run stopped early: Interrupted says so
	}
	sc.APIKey = ""
	out.Scenario = sc
	out.TemplateOverhead = out.summary().templateOverheads()
	if artifactDir != "" {
		ti := &reportgen.TokenizerInfo{Name: tok.Name(), Source: tok.Source(), Fingerprint: tok.Fingerprint()}
		if err := out.writeArtifacts(ti, lo.Start, rc.command); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr != nil {
		return out, fmt.Errorf("scenario %q: %w", sc.Name, runErr)
	}
	return out, nil
}

// writeArtifacts writes the metrics, scenario, verdicts and reportgen's exports into
// o.Dir, each atomically, and lists them (with the recordings already there) in
// o.Files. The client recording is not written here: loadgen wrote it as the run went.
func (o *Outcome) writeArtifacts(tok *reportgen.TokenizerInfo, start time.Time, command []string) error {
	write := func(name string, f func(w io.Writer) error) error {
		p := filepath.Join(o.Dir, name)
		if err := reportgen.WriteFileAtomic(p, f); err != nil {
			return fmt.Errorf("artifacts: %s: %w", name, err)
		}
		o.Files = append(o.Files, p)
		return nil
	}
	val := o.Verdicts(check.KindValidity)
	doc := validityDoc{Self: o.Self, Pins: o.Pins, Shards: o.shards}
	for _, v := range val {
		doc.Verdicts = append(doc.Verdicts, docVerdict(v))
	}
	metrics := struct {
		record.Metrics
		Validity    *validityDoc             `json:"validity,omitempty"`
		PrefixCache *record.PrefixCacheIdeal `json:"prefix_cache,omitempty"`
	}{o.Metrics, &doc, o.prefixIdeal}
	if err := write(MetricsFile, func(w io.Writer) error { return reportgen.WriteJSON(w, metrics) }); err != nil {
		return err
	}
	if err := write(ValidityFile, func(w io.Writer) error { return reportgen.WriteJSON(w, doc) }); err != nil {
		return err
	}
	if err := write(ScenarioFile, func(w io.Writer) error { return reportgen.WriteJSON(w, o.Scenario) }); err != nil {
		return err
	}
	if err := write(RunStatsFile, func(w io.Writer) error { return reportgen.WriteJSON(w, o.RunStats()) }); err != nil {
		return err
	}
	if o.GPU != nil {
		if err := write(servermetrics.GPUSummaryFile, func(w io.Writer) error { return reportgen.WriteJSON(w, o.GPU) }); err != nil {
			return err
		}
	}
	vs := o.Check()
	if len(vs) > 0 {
		err := write(VerdictsFile, func(w io.Writer) error {
			for _, v := range vs {
				if _, err := fmt.Fprintf(w, "%s %s\n\n", status(v), v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if o.Mocked {
		// The mock wrote its recording and FILE.summary.json itself.
		matches, _ := filepath.Glob(filepath.Join(o.Dir, "server*"))
		o.Files = append(o.Files, matches...)
	}
	sc := o.Scenario
	run := reportgen.Run{Records: o.Client, Each: o.each, Metrics: o.Metrics, Cancelled: o.Interrupted || o.Aborted() != "", PrefixCache: o.prefixIdeal, Manifest: reportgen.Manifest{
		Command: command, Scenario: sc.Name, Config: sc, Seed: sc.Seed,
		Tokenizer: tok, Aborted: o.Aborted(),
	}}
	if p := o.Pins; p != nil {
		run.Manifest.VCS, run.Manifest.Dataset, run.Manifest.Servers, run.Manifest.Topology = p.VCS, p.Dataset, p.Servers, p.Topology
	}
	if o.File(ClientFile) != "" {
		run.RecordFile = ClientFile
	}
	if !start.IsZero() {
		run.Manifest.Created = start.UTC()
	}
	ro := reportgen.RunReportOptions{Title: "perfgate: " + sc.Name + " (" + sc.LoadString() + ")", Lengths: o.ReportLengths(), PrefixCache: o.prefixIdeal, GPU: o.GPU}
	ro.Mark, ro.Headline = runAnswer(vs, val, o.Health()[0], o.Aborted()) // the markdown summary's (Outcome.Summary)
	for _, v := range append(slices.Clone(val), vs...) {
		ro.Verdicts = append(ro.Verdicts, reportgen.Verdict{Pass: v.Pass, Text: v.String()})
	}
	files, err := reportgen.WriteExports(o.Dir, run, reportgen.ExportOptions{Report: ro, ServerMetrics: o.ServerMetrics,
		Prefix: sc.Exports.Prefix, NoRecords: sc.Exports.Level == scenario.ExportSummary, SliceDuration: time.Duration(sc.Exports.SliceDuration * float64(time.Second))})
	o.Files = append(o.Files, files...)
	if err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	return nil
}

// WriteReports rebuilds o's artifacts in o.Dir from its records: the metrics, the
// scenario, the verdicts and every reportgen export (the AIPerf JSON, CSV and JSONL,
// the HTML report, the manifest last). It is how a run read back with [Load], a
// killed one included, gets its reports: the recordings themselves are left as they
// are. command is recorded in the manifest.
func (o *Outcome) WriteReports(command ...string) error {
	if o.Dir == "" {
		return errors.New("scenario: write reports: the outcome has no directory")
	}
	ti := &reportgen.TokenizerInfo{Name: o.Scenario.TokenizerOrDefault()}
	o.Files = slices.DeleteFunc(o.Files, func(f string) bool {
		b := filepath.Base(f)
		return b != ClientFile && b != servermetrics.File && b != servermetrics.GPUFile // writeArtifacts lists the rest again
	})
	if err := o.writeArtifacts(ti, time.Time{}, command); err != nil {
		return fmt.Errorf("scenario %q: %w", o.Scenario.Name, err)
	}
	return nil
}

// status is "PASS" or "FAIL".
func status(v check.Verdict) string {
	if v.Pass {
		return "PASS"
	}
	return "FAIL"
}
