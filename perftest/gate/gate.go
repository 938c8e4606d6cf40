package gate

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/reportgen"
)

// ErrInvalid is wrapped by the errors of a gate setting that cannot be used as
// written (package scenario's ErrInvalidScenario is the same error).
var ErrInvalid = errors.New("scenario: invalid scenario")

// Gate configures a run-level regression gate: K runs of the current build compared
// with K runs of a baseline, statistic by statistic ([RunStatList]), by
// check.CompareFamily. Its zero value is the default gate: δ = 5% on every statistic,
// family alpha 0.01 over the primary statistics (TTFT p50, ITL p50, request latency
// p50, output token throughput), 5 runs per side doubling up to 20 while a primary
// statistic is inconclusive (when the gate runs the current side), the between-session
// noise measured from a baseline of ten sessions or more and otherwise assumed as large
// as the runs' noise (SessionCV tells it), an inconclusive answer passes (and says so),
// and a δ below the minimum detectable effect is a warning. In a scenario file it is the
// "regression" block.
type Gate struct {
	// Baseline is the baseline's directory (a series written by RunSeries, SaveSeries,
	// `perfgate profile --num-runs K --artifact-dir DIR`, or one run), for `perfgate
	// profile` with the scenario file; Go code passes the baseline itself.
	Baseline string `json:"baseline,omitempty"`
	// Margin is δ, relative (0.05 = 5%), for every statistic; 0 = check.DefaultMargin.
	Margin float64 `json:"margin,omitzero"`
	// Margins overrides δ per statistic: {"ttft_p99": 0.1}.
	Margins map[string]float64 `json:"margins,omitempty"`
	// Alpha is the family alpha of the primary statistics (Holm); 0 = check.DefaultAlpha.
	Alpha float64 `json:"alpha,omitzero"`
	// Primary replaces the primary statistics (nil = those of RunStatList marked
	// Primary). Fail names further statistics that fail the gate when they regress
	// (compared at the family alpha, outside the Holm family); every other statistic
	// is reported only.
	Primary []string `json:"primary,omitempty"`
	Fail    []string `json:"fail,omitempty"`
	// Runs is the number of runs per side to start with (0 = DefaultRuns), and MaxRuns
	// the cap of the sequential plan (check.Schedule: Runs, 2·Runs, 4·Runs, …, MaxRuns;
	// 0 = 20, or Runs when larger). MaxRuns equal to Runs turns the extra runs off.
	Runs    int `json:"runs,omitzero"`
	MaxRuns int `json:"max_runs,omitzero"`
	// FailInconclusive makes an inconclusive primary statistic fail the gate.
	FailInconclusive bool `json:"fail_inconclusive,omitempty"`
	// StrictMDE makes a δ below the minimum detectable effect fail instead of warn.
	StrictMDE bool `json:"strict_mde,omitempty"`
	// IgnoreWorkload names workload settings as scenario files name them ("isl",
	// "concurrency"; a [Workload]'s Settings) that may differ between the baseline and
	// the current runs.
	IgnoreWorkload []string `json:"ignore_workload,omitempty"`
	// PriorCV is the between-run CV (0.03 = 3%) to assume for every statistic when a
	// side has one run and the baseline has neither several runs to measure it nor a
	// stored CV ([Series.PriorCV]); 0 = none (one run per side is then inconclusive).
	PriorCV float64 `json:"prior_cv,omitzero"`
	// SessionCV is the between-session CV (0.02 = 2%) to assume for every statistic when
	// the two sides' sessions are too few to measure it (fewer than check.MinSessions)
	// and the baseline stores none ([Series.SessionCV]); 0 = none: a side of one session
	// is then assumed to wander between sessions as far as its runs wander within one,
	// and the verdict says so. In (0, 1).
	SessionCV float64 `json:"session_cv,omitzero"`
}

// IsZero reports whether g is the zero Gate (for omitzero).
func (g Gate) IsZero() bool {
	return g.Baseline == "" && g.Margin == 0 && len(g.Margins) == 0 && g.Alpha == 0 && len(g.Primary) == 0 &&
		len(g.Fail) == 0 && g.Runs == 0 && g.MaxRuns == 0 && !g.FailInconclusive && !g.StrictMDE && len(g.IgnoreWorkload) == 0 &&
		g.PriorCV == 0 && g.SessionCV == 0
}

// Schedule is the gate's sequential plan.
func (g Gate) Schedule() check.Schedule {
	start := cmp.Or(g.Runs, DefaultRuns)
	return check.Schedule{Start: start, Cap: max(cmp.Or(g.MaxRuns, check.DefaultSchedule.Cap), start)}
}

// Validate reports a gate setting out of range or a statistic that does not exist,
// wrapping [ErrInvalid].
func (g Gate) Validate() error {
	var bad []string
	inRange := func(name string, x float64) {
		if x != 0 && !(x > 0 && x < 1) {
			bad = append(bad, fmt.Sprintf("%s %g: want a fraction in (0, 1), e.g. 0.05 for 5%%", name, x))
		}
	}
	inRange("margin", g.Margin)
	inRange("alpha", g.Alpha)
	inRange("prior_cv", g.PriorCV)
	inRange("session_cv", g.SessionCV)
	for _, k := range slices.Sorted(mapKeys(g.Margins)) {
		inRange("margins."+k, g.Margins[k])
		if g.Margins[k] == 0 {
			bad = append(bad, fmt.Sprintf("margins.%s 0: want a fraction in (0, 1)", k))
		}
	}
	for _, names := range []struct {
		field string
		names []string
	}{{"primary", g.Primary}, {"fail", g.Fail}, {"margins", slices.Sorted(mapKeys(g.Margins))}} {
		for _, n := range names.names {
			if _, ok := LookupRunStat(n); !ok {
				msg := fmt.Sprintf("%s: no run statistic %q (want one of %s)", names.field, n, RunStatNames())
				var all []string
				for _, s := range RunStatList() {
					all = append(all, s.Name)
				}
				if near := check.Nearest(n, all); near != "" {
					msg += fmt.Sprintf("; did you mean %q?", near)
				}
				bad = append(bad, msg)
			}
		}
	}
	if g.Runs < 0 || g.MaxRuns < 0 {
		bad = append(bad, fmt.Sprintf("runs %d, max_runs %d: want >= 0", g.Runs, g.MaxRuns))
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: regression: %s", ErrInvalid, strings.Join(bad, "; "))
	}
	return nil
}

func mapKeys(m map[string]float64) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Change is a gate's overall answer, the worst of its failing statistics'.
type Change = check.Change

// GateResult is a regression gate's answer: one comparison per statistic both sides
// have, their verdicts (a reported-only statistic's verdict always passes), the
// workload and target differences, and the runs compared.
type GateResult struct {
	// Comparisons and Verdicts are in RunStatList's order.
	Comparisons []check.Comparison
	Verdicts    []check.Verdict
	// Stats names each comparison's statistic ("ttft_p50"), and Gating says whether
	// it can fail the gate (primary or named in Gate.Fail).
	Stats  []string
	Gating []bool
	// Workload lists the workload settings that differ (not ignored): non-empty means
	// the baseline was refused and nothing was compared.
	Workload []Difference
	// Target lists where the two sides' requests went and what answered, where they
	// differ; shown beside the verdict, never a reason to refuse.
	Target []Difference
	// Identity lists what differs between what the two sides measured with
	// ([CompareIdentity] of their first runs' manifests: dataset fingerprint, server
	// identity, hardware); shown beside the verdict, never a reason to refuse (comparing
	// a new server build with the old one is the point). Empty when either side's
	// manifest is not on disk.
	Identity []string
	// Baseline and Current are the series compared; Looks the number of looks taken
	// (1 without sequential runs) and Alpha the family alpha of the last look.
	Baseline, Current *Series
	Looks             int
	Alpha             float64
	Gate              Gate
}

// Change is the gate's overall answer: ChangeRegressed if a gating statistic
// regressed (or was invalid, or failed the strict MDE rule), else ChangeInconclusive if
// one was inconclusive, else ChangeImproved if a gating statistic improved, else
// ChangeNoRegression. A refused baseline (another workload) is ChangeInconclusive with
// Workload set; [GateResult.Invalid] says so.
func (r GateResult) Change() Change {
	if len(r.Workload) > 0 {
		return check.ChangeInconclusive
	}
	worst := check.ChangeNoRegression
	improved := false
	for i, v := range r.Verdicts {
		if !r.Gating[i] {
			continue
		}
		c := r.Comparisons[i]
		switch {
		case c.Invalid != "" || !v.Pass && v.Status != check.Inconclusive:
			return check.ChangeRegressed
		case c.Change == check.ChangeInconclusive:
			worst = check.ChangeInconclusive
		case c.Change == check.ChangeImproved:
			improved = true
		}
	}
	if worst == check.ChangeNoRegression && improved {
		return check.ChangeImproved
	}
	return worst
}

// Invalid reports whether no comparison could be made: the baseline is another
// workload, or a side has no runs.
func (r GateResult) Invalid() bool {
	return len(r.Workload) > 0 || r.Baseline == nil || r.Current == nil || r.Baseline.Len() == 0 || r.Current.Len() == 0
}

// Pass reports whether the gate passed: no gating statistic failed, and the baseline
// was this workload. An inconclusive one passes unless Gate.FailInconclusive.
func (r GateResult) Pass() bool {
	if r.Invalid() {
		return false
	}
	for i, v := range r.Verdicts {
		if r.Gating[i] && !v.Pass {
			return false
		}
	}
	return true
}

// Inconclusive reports whether a gating statistic was inconclusive (and none failed
// outright): more runs would tell.
func (r GateResult) Inconclusive() bool {
	return !r.Invalid() && r.Change() == check.ChangeInconclusive
}

// Headline is the gate's answer as one sentence that stands alone: the answer, the
// statistics it is about, and each side's runs and sessions, e.g. "regression gate:
// regressed: TTFT p50 +12.0% (baseline 5 runs in 1 session, current 5 runs in 1
// session)" or "regression gate: no regression on 4 gating statistics (baseline 50 runs
// in 10 sessions, current 5 runs in 1 session)".
func (r GateResult) Headline() string {
	if workloadUnknown(r.Workload) {
		return "regression gate: a side's workload is unknown, so whether both sent the same requests is unknown: nothing was compared"
	}
	if len(r.Workload) > 0 {
		var fs []string
		for _, d := range r.Workload {
			fs = append(fs, d.Field)
		}
		return "regression gate: the baseline is another workload (" + strings.Join(fs, ", ") + " differ): nothing was compared"
	}
	if r.Invalid() {
		return "regression gate: a side has no runs: nothing was compared"
	}
	runs := fmt.Sprintf("baseline %s, current %s", sidesText(r.Baseline), sidesText(r.Current))
	if r.Looks > 1 {
		runs += fmt.Sprintf(", %d looks", r.Looks)
	}
	var hit []string
	n := 0
	want := r.Change()
	for i, c := range r.Comparisons {
		if !r.Gating[i] {
			continue
		}
		n++
		if c.Change == want || want == check.ChangeRegressed && (!r.Verdicts[i].Pass && r.Verdicts[i].Status != check.Inconclusive || c.Invalid != "") {
			hit = append(hit, fmt.Sprintf("%s %s", c.Metric, signed(c.Ratio-1)))
		}
	}
	switch want {
	case check.ChangeNoRegression:
		return fmt.Sprintf("regression gate: no regression on %d gating statistics (%s)", n, runs)
	case check.ChangeImproved:
		return fmt.Sprintf("regression gate: improved, no regression: %s (%s)", strings.Join(hit, ", "), runs)
	case check.ChangeInconclusive:
		s := fmt.Sprintf("regression gate: inconclusive: %s (%s) can neither rule out nor show a regression", strings.Join(hit, ", "), runs)
		if !r.Pass() {
			s += "; inconclusive fails this gate"
		}
		return s
	}
	return fmt.Sprintf("regression gate: regressed: %s (%s)", strings.Join(hit, ", "), runs)
}

// sidesText prints "5 runs in 1 session" (or "5 runs" for a side whose sessions
// are not known).
func sidesText(s *Series) string {
	n := s.Sessions()
	if n == 1 {
		return runsN(s.Len()) + " in 1 session"
	}
	return fmt.Sprintf("%s in %d sessions", runsN(s.Len()), n)
}

func runsN(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

func signed(x float64) string {
	if math.IsNaN(x) {
		return "(no ratio)"
	}
	return fmt.Sprintf("%+.1f%%", x*100)
}

// Where says where each side's requests went and what answered, and which of those
// settings differ: the lines shown beside the verdict.
func (r GateResult) Where() []check.Line {
	var ls []check.Line
	side := func(s *Series) string {
		t := fmt.Sprintf("%s: %s", cmp.Or(s.Dir, "(in memory)"), runsN(s.Len()))
		if where := s.Targets(); where != "" { // a history's runs keep no target
			t += " against " + where
		}
		return t
	}
	if r.Baseline != nil {
		ls = append(ls, check.Line{Label: "baseline", Text: side(r.Baseline)})
	}
	if r.Current != nil {
		ls = append(ls, check.Line{Label: "current", Text: side(r.Current)})
	}
	for i, d := range r.Target {
		l := ""
		if i == 0 {
			l = "target differs"
		}
		ls = append(ls, check.Line{Label: l, Text: d.String()})
	}
	for i, d := range r.Identity {
		l := ""
		if i == 0 {
			l = "measured with differs"
		}
		ls = append(ls, check.Line{Label: l, Text: d})
	}
	return ls
}

// priorCV is the between-run CV a one-run side assumes for stat: the baseline's
// measured one (several runs), else its stored one ([Series.PriorCV]), else the gate's
// configured one (0 = none).
func priorCV(baseline *Series, stat string, g Gate) float64 {
	if cv := baseline.CV(stat); !math.IsNaN(cv) && cv > 0 {
		return cv
	}
	if cv := baseline.PriorCV[stat]; cv > 0 && !math.IsInf(cv, 0) {
		return cv
	}
	return g.PriorCV
}

// sessionCV is the between-session CV the gate assumes for stat when the sessions are
// too few to measure it: the baseline's stored one ([Series.SessionCV], with its df),
// else the gate's configured one (0 = none), and where it came from.
func sessionCV(baseline *Series, stat string, g Gate) (cv, df float64, from string) {
	if cv := baseline.SessionCV[stat]; cv > 0 && cv < 1 {
		return cv, baseline.SessionDF, "the baseline's stored"
	}
	return g.SessionCV, 0, "the configured"
}

// seriesIdentity reads the manifest of s's first run from disk: what the series was
// measured with (false when it is not on disk).
func seriesIdentity(s *Series) (reportgen.Manifest, bool) {
	if s == nil || len(s.Dirs) == 0 || (s.Dir == "" && s.Dirs[0] == ".") {
		return reportgen.Manifest{}, false
	}
	d := s.Dirs[0]
	if !filepath.IsAbs(d) {
		d = filepath.Join(s.Dir, d)
	}
	m, err := ReadIdentity(d)
	return m, err == nil
}

// Compare gates current against baseline under g at family alpha (0 = g's): the
// workloads first ([Series.Workload]'s settings, [Diff]; another workload is refused,
// and so is a side whose workload is unknown), then every statistic
// both sides have, by check.CompareFamily, over each side's sessions
// ([RunStats.Session]). Sides measured in one shared session ([Series.ShareSession]) have no
// between-session term; otherwise the between-session noise is measured from
// check.MinSessions sessions or more, else taken from the baseline's stored SessionCV or
// g.SessionCV, else assumed as large as the runs' noise (and the verdict says so). A
// side of one run takes the other side's noise, or the baseline's between-run CV
// (PriorCV) when the baseline has runs to measure it; with one run on each side the
// answer is inconclusive and says that between-run noise was not measured.
func Compare(baseline, current *Series, g Gate, alpha float64) GateResult {
	r := GateResult{Baseline: baseline, Current: current, Gate: g, Looks: 1, Alpha: cmp.Or(alpha, g.Alpha, check.DefaultAlpha)}
	if baseline == nil || current == nil || baseline.Len() == 0 || current.Len() == 0 {
		return r
	}
	if baseline.Workload != nil && current.Workload != nil {
		r.Target = Diff(baseline.Workload.Target, current.Workload.Target, nil)
	}
	if bm, ok := seriesIdentity(baseline); ok {
		if cm, ok := seriesIdentity(current); ok {
			r.Identity = CompareIdentity(bm, cm)
		}
	}
	if r.Workload = WorkloadDiff(baseline, current, g.IgnoreWorkload); len(r.Workload) > 0 {
		return r
	}
	primary := func(s RunStat) bool {
		if g.Primary != nil {
			return slices.Contains(g.Primary, s.Name)
		}
		return s.Primary
	}
	same := sameSession(baseline, current)
	labels := func(sr *Series, stat string, xs []float64) []int {
		if xs == nil {
			return nil
		}
		return sr.sessionLabels(stat)
	}
	var series []check.Series
	for _, s := range scopedStats(baseline, current) {
		b, bm := baseline.Values(s.Name)
		c, cm := current.Values(s.Name)
		if len(b) == 0 && len(c) == 0 {
			continue // neither side has it (no goodput SLO)
		}
		base, _, _ := check.CutScope(s.Name) // a class's statistic takes the run's margin for it unless named itself
		rg := check.RunGate{Margin: cmp.Or(g.Margins[s.Name], g.Margins[base], g.Margin), HigherIsBetter: s.HigherIsBetter,
			FailInconclusive: g.FailInconclusive, StrictMDE: g.StrictMDE}
		if current.Len() == 1 || baseline.Len() == 1 {
			rg.PriorCV = priorCV(baseline, s.Name, g)
		}
		rg.SessionCV, rg.SessionDF, rg.SessionCVFrom = sessionCV(baseline, s.Name, g)
		rg.SameSession = same
		if bm > 0 || cm > 0 {
			// A run without the statistic (nothing completed) is not comparable; the
			// comparison of the rest would hide it.
			b, c = nil, nil
		}
		series = append(series, check.Series{Metric: s.Label, Unit: s.Unit, Baseline: b, Current: c, Gate: rg, Primary: primary(s),
			BaselineSessions: labels(baseline, s.Name, b), CurrentSessions: labels(current, s.Name, c)})
		r.Stats = append(r.Stats, s.Name)
		r.Gating = append(r.Gating, primary(s) || slices.Contains(g.Fail, s.Name))
	}
	r.Comparisons = check.CompareFamily(r.Alpha, series)
	for i, c := range r.Comparisons {
		v := c.Verdict()
		if !r.Gating[i] {
			v = c.Reported() // no threshold: nothing is wanted of it
		}
		if c.Invalid != "" && r.Gating[i] {
			if _, bm := baseline.Values(r.Stats[i]); bm > 0 {
				v.Evidence = append(v.Evidence, check.Line{Label: "note", Text: fmt.Sprintf("%d baseline runs lack %s", bm, r.Stats[i])})
			}
			if _, cm := current.Values(r.Stats[i]); cm > 0 {
				v.Evidence = append(v.Evidence, check.Line{Label: "note", Text: fmt.Sprintf("%d current runs lack %s", cm, r.Stats[i])})
			}
		}
		r.Verdicts = append(r.Verdicts, v)
	}
	return r
}

// AllVerdicts returns the gate's verdicts for printing: the workload refusal (with
// where each side ran) when the baseline is another workload, else each statistic's,
// gating ones first. [GateResult.Where] goes beside the headline.
func (r GateResult) AllVerdicts() []check.Verdict {
	if len(r.Workload) > 0 {
		v := check.Verdict{Check: "workload", Value: float64(len(r.Workload)), Unit: check.None, Status: check.Invalid, Summary: strings.TrimPrefix(r.Headline(), "regression gate: ")}
		for i, d := range r.Workload {
			l := ""
			if i == 0 {
				l = "differs"
			}
			v.Evidence = append(v.Evidence, check.Line{Label: l, Text: d.String()})
		}
		v.Evidence = append(v.Evidence, r.Where()...)
		hint := "re-record the baseline with this workload, or name the settings that may differ in the gate's IgnoreWorkload (ignore_workload)"
		if workloadUnknown(r.Workload) {
			hint = "describe each side's workload (package perftest/run builds and loads series with it); IgnoreWorkload does not waive an unknown workload"
		}
		v.Evidence = append(v.Evidence, check.Line{Label: "hint", Text: hint})
		return []check.Verdict{v}
	}
	var out []check.Verdict
	for pass := range 2 {
		for i, v := range r.Verdicts {
			if r.Gating[i] == (pass == 0) {
				out = append(out, v)
			}
		}
	}
	return out
}

// Looks runs g's sequential plan (g.Schedule: K → 2K → 4K … → MaxRuns): at each look,
// grow(look, k, cur) brings the current side (nil at the first look) to k runs and
// returns it, base (nil = baseline as given) returns the baseline side as it now is
// (an A/B gate grows both), and the look is compared ([Compare]) at its share of the
// family alpha (check.Schedule.Alpha). It stops at the first settled look, at the cap,
// or at grow's error, returned with the comparison of the runs so far. Package
// scenario's GateRuns and Interleave run their runs through it.
func Looks(g Gate, baseline *Series, grow func(look, k int, cur *Series) (*Series, error), base func() *Series) (GateResult, error) {
	sched := g.Schedule()
	looks := sched.Looks()
	family := cmp.Or(g.Alpha, check.DefaultAlpha)
	var cur *Series
	var r GateResult
	for i, k := range looks {
		var err error
		if cur, err = grow(i, k, cur); err != nil {
			if base != nil {
				baseline = base()
			}
			return Compare(baseline, cur, g, sched.Alpha(family, i)), err
		}
		if base != nil {
			baseline = base()
		}
		r = Compare(baseline, cur, g, sched.Alpha(family, i))
		r.Looks = i + 1
		if len(r.Workload) > 0 || check.Settled(r.Comparisons) {
			break
		}
	}
	return r, nil
}

// WriteReport writes the gate's HTML report to path (reportgen.WriteGateReport): its
// answer, where each side ran, and per statistic a dot per run and the ratio's
// interval against the δ band.
func (r GateResult) WriteReport(path string) error {
	rep := reportgen.GateReport{Title: "perfgate regression gate", Headline: r.Headline()}
	for _, l := range r.Where() {
		rep.Where = append(rep.Where, strings.TrimSpace(l.Label+": "+l.Text))
	}
	for _, d := range r.Workload {
		rep.Where = append(rep.Where, "workload differs: "+d.String())
	}
	for i, c := range r.Comparisons {
		v := r.Verdicts[i]
		rep.Metrics = append(rep.Metrics, reportgen.GateMetric{
			Name: c.Metric, Unit: string(c.Unit), Verdict: v.Summary, Pass: v.Pass, Change: c.Change.String(), Gating: r.Gating[i],
			Baseline: c.Baseline, Current: c.Current, Ratio: c.Ratio, Low: c.Low, High: c.High, Margin: c.Gate.Margin, HigherIsBetter: c.Gate.HigherIsBetter,
		})
	}
	if err := reportgen.WriteFileAtomic(path, func(w io.Writer) error { return reportgen.WriteGateReport(w, rep) }); err != nil {
		return fmt.Errorf("scenario: gate report: %w", err)
	}
	return nil
}
