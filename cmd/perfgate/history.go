package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perfgate/perfgate/history"
	"github.com/perfgate/perfgate/perftest/gate"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/reportgen"
)

// historyCommands are the subcommands of `perfgate history`.
var historyCommands = []struct{ name, synopsis, summary string }{
	{"add", "[--db DB] [--commit SHA] [--branch B] [--build ID] ARTIFACT_DIR…", "record saved artifact directories (one result each)"},
	{"list", "[--db DB] [--scenario S] [--branch B] [--last N] [--json]", "list the series and their results"},
	{"show", "[--db DB] [--json] ID", "show one result: identity, each run's statistics, verdicts"},
	{"report", "[--db DB] [--out history.html] [--scenario S] [--metric M,…]", "HTML report: series over commits, run intervals, change points, baselines"},
	{"check", "[--db DB] [--scenario S] [--metric M,…] [--margin 5%] [--recent N] [--summary-md FILE]", "exit 99 when a change point near the newest results is a regression beyond the margin"},
	{"export", "[--db DB] [--format csv|json] [--out FILE] [--scenario S]", "every result's per-run statistics as CSV, or the results as JSON"},
	{"baseline", "[--db DB] --out DIR history:SCENARIO[?last=N&branch=B&since=change]", "write a regression gate's baseline directory (runs.json) from the history"},
}

func cmdHistory(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" && len(args) == 1 {
		w := e.stdout
		if len(args) == 0 {
			w = e.stderr
		}
		fmt.Fprintln(w, "Usage: perfgate history <command> [flags]   (the database: --db, or $"+history.EnvHistory+")")
		fmt.Fprintln(w, "\nCommands:")
		for _, c := range historyCommands {
			fmt.Fprintf(w, "  %-7s %s\n", c.name, c.summary)
		}
		if len(args) == 0 {
			return invalidf("a command is required (%s)", historyNames())
		}
		return flag.ErrHelp
	}
	sub, rest := args[0], args[1:]
	if sub == "help" && len(rest) > 0 { // history help SUB is history SUB -h
		sub, rest = rest[0], []string{"-h"}
	}
	for _, c := range historyCommands {
		if c.name != sub {
			continue
		}
		fs := newFlags(e, "history "+c.name, c.synopsis)
		db := fs.String("db", "", "the history: a SQLite file, or a postgres:// URL (default $"+history.EnvHistory+")")
		h := &historyCmd{e: e, fs: fs, db: db}
		switch sub {
		case "add":
			return h.add(ctx, rest)
		case "list":
			return h.list(ctx, rest)
		case "show":
			return h.show(ctx, rest)
		case "report":
			return h.report(ctx, rest)
		case "check":
			return h.check(ctx, rest)
		case "export":
			return h.export(ctx, rest)
		case "baseline":
			return h.baseline(ctx, rest)
		}
	}
	return invalidf("unknown command %q%s; want one of %s", sub, didYouMean(sub, strings.Split(historyNames(), ", ")), historyNames())
}

func historyNames() string {
	var n []string
	for _, c := range historyCommands {
		n = append(n, c.name)
	}
	return strings.Join(n, ", ")
}

type historyCmd struct {
	e  *env
	fs *flag.FlagSet
	db *string
}

// parseFlagsOnly parses a subcommand that takes flags and no positional argument.
func (h *historyCmd) parseFlagsOnly(args []string) error {
	pos, err := h.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return invalidf("%s takes no arguments, got %q", h.fs.Name(), pos[0])
	}
	return nil
}

// trends runs the change-point analysis over the series sf selects, for the
// comma-separated metrics (all when empty).
func (h *historyCmd) trends(ctx context.Context, sf seriesFlags, d history.Detection, metrics string) ([]*history.Trend, error) {
	s, err := h.open(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	trends, err := history.Analyze(ctx, s, sf.query(), d, splitList(metrics))
	if err != nil {
		return nil, runtimef("%v", err)
	}
	return trends, nil
}

// parse parses flags that may come before or after the positional arguments
// (`history add DIR --db DB`), and returns the positional ones.
func (h *historyCmd) parse(args []string) ([]string, error) {
	flags, pos := splitArgs(h.fs, args)
	return pos, parseFlags(h.fs, flags)
}

// open opens the database named by --db or the environment.
func (h *historyCmd) open(ctx context.Context) (history.Store, error) {
	addr := *h.db
	if addr == "" {
		addr = os.Getenv(history.EnvHistory)
	}
	if addr == "" {
		return nil, invalidf("no history database: give --db (a SQLite file or a postgres:// URL) or set %s", history.EnvHistory)
	}
	s, err := history.Open(ctx, addr)
	if err != nil {
		return nil, runtimef("%v", err)
	}
	return s, nil
}

// seriesQuery adds the flags that select results.
type seriesFlags struct {
	scenario, branch *string
	last             *int
}

func (h *historyCmd) seriesFlags() seriesFlags {
	return seriesFlags{
		scenario: h.fs.String("scenario", "", "keep the series of this scenario name"),
		branch:   h.fs.String("branch", "", "keep the results of this branch of the server under test"),
		last:     h.fs.Int("last", 0, "keep the newest N results (0 = all)"),
	}
}

func (f seriesFlags) query() history.Query {
	return history.Query{Scenario: *f.scenario, Branch: *f.branch, Last: *f.last}
}

// identityFlags adds the flags naming the server under test into o.
func identityFlags(fs *flag.FlagSet, o *historyOpts) {
	fs.StringVar(&o.commit, "commit", "", "[output] commit of the server under test (default $PERFGATE_COMMIT, $GITHUB_SHA, $CI_COMMIT_SHA, …)")
	fs.StringVar(&o.branch, "branch", "", "[output] branch of the server under test (default $PERFGATE_BRANCH, $GITHUB_REF_NAME, $CI_COMMIT_REF_NAME, …)")
	fs.StringVar(&o.build, "build", "", "[output] build of the server under test (default $PERFGATE_BUILD, $GITHUB_RUN_ID, $CI_PIPELINE_ID, …)")
	fs.StringVar(&o.topology, "topology", "", "[output] what was measured, if not what the artifacts say (\"2 × H100, TP=2\")")
}

func (h *historyCmd) add(ctx context.Context, args []string) error {
	var ho historyOpts
	identityFlags(h.fs, &ho)
	url := h.fs.String("artifacts-url", "", "where the artifacts are kept (a URL), instead of the directory's path")
	dirs, err := h.parse(args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return invalidf("perfgate history add: give the artifact directories to record")
	}
	if *url != "" && len(dirs) > 1 {
		return invalidf("--artifacts-url names one directory's artifacts; got %d directories", len(dirs))
	}
	// Read every directory first: a bad one adds nothing.
	var results []*history.Result
	for _, d := range dirs {
		id := ho.identity()
		id.Artifacts = *url
		r, err := historyFromDir(d, id)
		if err != nil {
			return invalid(err)
		}
		results = append(results, r)
	}
	s, err := h.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	return recordResults(ctx, h.e.stdout, s, results)
}

// recordResults adds results to s, says what it did, and updates the change points of
// the series they belong to (incrementally).
func recordResults(ctx context.Context, w io.Writer, s history.Store, results []*history.Result) error {
	var keys []history.SeriesKey
	for _, r := range results {
		added, err := s.Add(ctx, r)
		if err != nil {
			return runtimef("%v", err)
		}
		what := "recorded"
		if !added {
			what = "already recorded"
		}
		fmt.Fprintf(w, "history: %s result %d: %s, commit %s, %d run(s), %s\n", what, r.ID, r.Scenario, shortSHA(r.Commit), len(r.Runs), r.Artifacts)
		if k := r.Series(); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if _, err := history.Analyze(ctx, s, history.Query{Series: &k}, history.Detection{}, nil); err != nil {
			return runtimef("%v", err)
		}
	}
	return nil
}

func shortSHA(c string) string {
	if c == "" {
		return "(none)"
	}
	return c[:min(len(c), 10)]
}

func (h *historyCmd) list(ctx context.Context, args []string) error {
	sf := h.seriesFlags()
	asJSON := h.fs.Bool("json", false, "print JSON")
	if err := h.parseFlagsOnly(args); err != nil {
		return err
	}
	s, err := h.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	rs, err := s.Results(ctx, sf.query())
	if err != nil {
		return runtimef("%v", err)
	}
	if *asJSON {
		return reportgen.WriteJSON(h.e.stdout, rs)
	}
	if len(rs) == 0 {
		fmt.Fprintln(h.e.stdout, "history: no results")
		return nil
	}
	tw := tabwriter.NewWriter(h.e.stdout, 0, 0, 2, ' ', 0)
	var cur history.SeriesKey
	for _, r := range rs {
		if r.Series() != cur {
			cur = r.Series()
			fmt.Fprintf(tw, "\nseries %s (workload %s)\n", r.Scenario, r.Fingerprint[:min(12, len(r.Fingerprint))])
			fmt.Fprintln(tw, "  id\tstarted\tcommit\tbranch\tbuild\truns\tverdicts\tttft_p50\toutput_tps\t")
		}
		verdicts := "pass"
		if !r.Passed() {
			verdicts = "FAIL"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", r.ID, r.Created.Format("2006-01-02 15:04"), shortSHA(r.Commit), r.Branch, r.Build, len(r.Runs), verdicts,
			centerText(&r, "ttft_p50"), centerText(&r, "output_tps"))
	}
	return tw.Flush()
}

func centerText(r *history.Result, m string) string {
	v := r.Values(m)
	if len(v) == 0 {
		return "-"
	}
	return history.Format(m, history.Center(v))
}

func (h *historyCmd) show(ctx context.Context, args []string) error {
	asJSON := h.fs.Bool("json", false, "print JSON")
	pos, err := h.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return invalidf("history show takes one result ID (perfgate history list shows them)")
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil {
		return invalidf("perfgate history show: %q is not a result ID", pos[0])
	}
	s, err := h.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	r, err := s.Get(ctx, id)
	if errors.Is(err, history.ErrNotFound) {
		return invalid(err)
	} else if err != nil {
		return runtimef("%v", err)
	}
	if *asJSON {
		return reportgen.WriteJSON(h.e.stdout, r)
	}
	w := h.e.stdout
	fmt.Fprintf(w, "result %d: %s (workload %s)\n", r.ID, r.Scenario, r.Fingerprint)
	fmt.Fprintf(w, "  commit %s, branch %s, build %s\n", shortSHA(r.Commit), r.Branch, r.Build)
	fmt.Fprintf(w, "  started %s, recorded %s, perfgate %s\n", r.Created.Format(time.RFC3339), r.Recorded.Format(time.RFC3339), r.Version)
	fmt.Fprintf(w, "  host %s, topology %s\n  artifacts %s\n", r.Host, r.Topology, r.Artifacts)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "metric\t")
	for _, run := range r.Runs {
		fmt.Fprintf(tw, "run %d\t", run.Run)
	}
	fmt.Fprintln(tw, "center\t")
	for _, m := range r.Metrics() {
		fmt.Fprintf(tw, "%s\t", m)
		for _, run := range r.Runs {
			if v, ok := run.Stats[m]; ok {
				fmt.Fprintf(tw, "%s\t", history.Format(m, v))
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintf(tw, "%s\t\n", centerText(&r, m))
	}
	tw.Flush()
	for _, v := range r.Verdicts {
		mark := "pass"
		if !v.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s %s: %s\n", mark, v.Check, v.Summary)
	}
	return nil
}

// detectionFlags adds the change-point detection flags.
func detectionFlags(fs *flag.FlagSet) func() (history.Detection, error) {
	window := fs.Int("window", history.DefaultWindow, "change-point detection: sliding window, in results")
	maxP := fs.Float64("max-p", history.DefaultMaxP, "change-point detection: significance level of a change point")
	minSeg := fs.Int("min-segment", history.DefaultMinSegment, "change-point detection: fewest results either side of a change point (≥ 2)")
	return func() (history.Detection, error) {
		switch {
		case *window < 4:
			return history.Detection{}, invalidf("--window: want at least 4 results, got %d", *window)
		case !(*maxP > 0 && *maxP < 1):
			return history.Detection{}, invalidf("--max-p: want a level in (0, 1), got %g", *maxP)
		case *minSeg < 2:
			return history.Detection{}, invalidf("--min-segment: want at least 2, got %d", *minSeg)
		}
		return history.Detection{Window: *window, MaxP: *maxP, MinSegment: *minSeg}, nil
	}
}

func (h *historyCmd) check(ctx context.Context, args []string) error {
	sf := h.seriesFlags()
	metrics := h.fs.String("metric", strings.Join(history.PrimaryStats(), ","), "statistics to check, comma-separated")
	margin := h.fs.String("margin", "5%", "a change worse than this fails (\"5%\" or 0.05)")
	recent := h.fs.Int("recent", history.DefaultRecent, "a change point within the newest N results of its series counts")
	lookback := h.fs.Int("lookback", history.DefaultLookback, "successive changes within the newest N results add up (drift)")
	detect := detectionFlags(h.fs)
	var summaryMD string
	registerSummaryFlag(h.fs, &summaryMD)
	if err := h.parseFlagsOnly(args); err != nil {
		return err
	}
	d, err := detect()
	if err != nil {
		return err
	}
	m, err := parseFraction(*margin)
	if err != nil {
		return invalidf("--margin: %v", err)
	}
	if *recent < 1 || *lookback < 1 {
		return invalidf("--recent and --lookback: want at least 1 result")
	}
	trends, err := h.trends(ctx, sf, d, *metrics)
	if err != nil {
		return err
	}
	if len(trends) == 0 {
		return invalidf("perfgate history check: no results to check (perfgate history list shows what the history holds)")
	}
	c := history.Check{Detection: d, Margin: m, Recent: *recent, Lookback: *lookback}
	j := c.JudgeAll(trends, nil) // the trends are of the checked metrics: all count
	series := map[history.SeriesKey]bool{}
	for _, tr := range trends {
		series[tr.Series] = true
	}
	s := reportgen.Summary{Title: "perfgate history check", Mark: "PASS", Trends: summaryTrends(trends)}
	line := func(mark, text string) {
		fmt.Fprintln(h.e.stdout, mark+": "+text)
		s.Verdicts = append(s.Verdicts, reportgen.SummaryLine{Mark: mark, Text: text})
	}
	for _, f := range j.Regressions {
		line("REGRESSION", f.String())
	}
	for _, v := range j.TooFewSince {
		line("TOO FEW RESULTS", v.String())
	}
	for _, v := range j.TooFew {
		line("NOT ENOUGH DATA", v.String())
	}
	for _, v := range j.Verdicts {
		tr := v.Trend
		row := reportgen.SummaryStat{Name: tr.Series.Scenario + " " + tr.Metric, Current: reportgen.FormatNumber(tr.Values[len(tr.Values)-1]), Verdict: v.Status.String(), Gating: true}
		if len(v.Regressions) > 0 {
			row.Change = fmt.Sprintf("%+.1f%% worse", 100*v.Regressions[0].Worse)
		}
		s.Stats = append(s.Stats, row)
	}
	err = nil
	switch n := len(j.TooFew) + len(j.TooFewSince); {
	case len(j.Regressions) > 0:
		s.Mark, s.Headline = "FAIL", fmt.Sprintf("%d regression(s) beyond %s", len(j.Regressions), *margin)
		err = &exitError{ExitAssertFailed, errors.New("perfgate history check: " + s.Headline)}
	case n == len(trends):
		s.Mark, s.Headline = "INCONCLUSIVE", "cannot tell: too few results in every checked trend (above)"
	case n > 0:
		s.Mark, s.Headline = "INCONCLUSIVE", fmt.Sprintf("cannot tell for %d of %d metric trends (above): too few results; no regression beyond %s in the other %d", n, len(trends), *margin, len(trends)-n)
	default:
		s.Headline = fmt.Sprintf("no regression beyond %s near the newest results (%d series, %d metric trends)", *margin, len(series), len(trends))
	}
	if err == nil {
		fmt.Fprintln(h.e.stdout, "history check: "+s.Headline)
	}
	setSummary(h.e, s)
	return writeSummary(h.e, summaryMD, err)
}

// parseFraction reads "5%" or "0.05".
func parseFraction(s string) (float64, error) {
	scale := 1.0
	if t, ok := strings.CutSuffix(strings.TrimSpace(s), "%"); ok {
		s, scale = t, 0.01
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v*scale > 0 && v*scale < 1) {
		return 0, fmt.Errorf("want a fraction like 5%% or 0.05, got %q", s)
	}
	return v * scale, nil
}

func (h *historyCmd) report(ctx context.Context, args []string) error {
	sf := h.seriesFlags()
	out := h.fs.String("out", "history.html", "the HTML report to write")
	metrics := h.fs.String("metric", "", "statistics to draw, comma-separated (default: all)")
	margin := h.fs.String("margin", "5%", "the check's margin, marked on regressions")
	detect := detectionFlags(h.fs)
	if err := h.parseFlagsOnly(args); err != nil {
		return err
	}
	d, err := detect()
	if err != nil {
		return err
	}
	m, err := parseFraction(*margin)
	if err != nil {
		return invalidf("--margin: %v", err)
	}
	trends, err := h.trends(ctx, sf, d, *metrics)
	if err != nil {
		return err
	}
	err = reportgen.WriteFileAtomic(*out, func(w io.Writer) error {
		return history.WriteReport(w, trends, history.ReportOptions{Check: history.Check{Detection: d, Margin: m}, Source: storeLabel(*h.db)})
	})
	if err != nil {
		return invalidf("--out: %v", err)
	}
	abs, _ := filepath.Abs(*out)
	fmt.Fprintf(h.e.stdout, "history report: %d metric trends: %s\n", len(trends), abs)
	return nil
}

func storeLabel(db string) string {
	if db == "" {
		db = os.Getenv(history.EnvHistory)
	}
	return history.Redact(db)
}

func (h *historyCmd) export(ctx context.Context, args []string) error {
	sf := h.seriesFlags()
	format := h.fs.String("format", "csv", "csv (one row per result, run and statistic) or json (the results)")
	out := h.fs.String("out", "", "file to write (default: standard output)")
	if err := h.parseFlagsOnly(args); err != nil {
		return err
	}
	if *format != "csv" && *format != "json" {
		return invalidf("--format: want csv or json, got %q", *format)
	}
	s, err := h.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	rs, err := s.Results(ctx, sf.query())
	if err != nil {
		return runtimef("%v", err)
	}
	write := func(w io.Writer) error {
		if *format == "json" {
			return reportgen.WriteJSON(w, rs)
		}
		return history.WriteCSV(w, rs)
	}
	if *out == "" {
		return write(h.e.stdout)
	}
	if err := reportgen.WriteFileAtomic(*out, write); err != nil {
		return invalidf("--out: %v", err)
	}
	fmt.Fprintf(h.e.stderr, "history export: %d results: %s\n", len(rs), *out)
	return nil
}

// historyOpts are profile's --history flags: where to record the result, and the
// identity of the server under test.
type historyOpts struct {
	addr, commit, branch, build, topology string
}

// identity is the server's identity from the flags, else the environment.
func (o historyOpts) identity() history.Identity {
	return history.Identity{Commit: o.commit, Branch: o.branch, Build: o.build, Topology: o.topology}.FromEnv(os.Getenv)
}

func registerHistoryFlags(fs *flag.FlagSet, o *historyOpts) {
	fs.StringVar(&o.addr, "history", os.Getenv(history.EnvHistory), "[output] record the result in this history: a SQLite file or a postgres:// URL (default $"+history.EnvHistory+"; its password is never printed or stored)")
	identityFlags(fs, o)
}

// recordHistory records a finished profile's runs (one result) in --history, and
// returns err, the run's own outcome: a result is recorded whether its assertions
// passed or not, but not a run that broke, was interrupted or was aborted. A history that cannot
// be written fails a passing run (exit 1) and is reported beside a failing one.
func recordHistory(ctx context.Context, e *env, o profileOpts, err error, outs ...*perfrun.Outcome) error {
	if o.history.addr == "" || len(outs) == 0 || (err != nil && err != errAssertFailed) {
		return err
	}
	for _, out := range outs {
		if out == nil || out.Interrupted {
			return err
		}
		if why := out.Aborted(); why != "" {
			// A run stopped early measured part of its load: not a result to compare with.
			fmt.Fprintf(e.stdout, "history: not recorded: the run was aborted (%s)\n", firstLine(why))
			return err
		}
	}
	herr := func() error {
		r, err := historyResult(outs, o.history.identity())
		if err != nil {
			return err
		}
		s, err := history.Open(ctx, o.history.addr)
		if err != nil {
			return err
		}
		defer s.Close()
		return recordResults(ctx, e.stdout, s, []*history.Result{r})
	}()
	if herr == nil {
		return err
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "perfgate profile: --history: %v\n", firstLine(herr.Error()))
		return err
	}
	return runtimef("--history: %v", herr)
}

func (h *historyCmd) baseline(ctx context.Context, args []string) error {
	out := h.fs.String("out", "", "the baseline directory to write (runs.json), for profile --baseline DIR or perftest.LoadBaseline")
	pos, err := h.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return invalidf("history baseline takes one %sSCENARIO (options: ?last=N&branch=B&since=change)", history.BaselinePrefix)
	}
	if *out == "" {
		return invalidf("--out is required: the baseline directory to write")
	}
	arg := pos[0]
	if !history.IsBaselineSpec(arg) {
		arg = history.BaselinePrefix + arg
	}
	spec, err := history.ParseBaselineSpec(arg)
	if err != nil {
		return invalid(err)
	}
	s, err := h.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	series, results, err := loadHistoryBaseline(ctx, s, spec)
	if err != nil {
		return invalid(err)
	}
	if err := history.WriteBaseline(*out, series); err != nil {
		return runtimef("%v", err)
	}
	fmt.Fprintf(h.e.stdout, "history baseline %s: %d runs of %d results (commits %s … %s): %s\n", spec, len(series.Runs), len(results),
		shortSHA(results[0].Commit), shortSHA(results[len(results)-1].Commit), filepath.Join(*out, gate.RunsFile))
	return nil
}
