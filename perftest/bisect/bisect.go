package bisect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/reportgen"
)

// ErrInvalid is wrapped by the errors of a bisection that cannot start as configured,
// found before anything is measured: a revision that is not a commit, a good commit
// that is not an ancestor of the bad one, uncommitted changes, a bisection under way.
var ErrInvalid = errors.New("bisect: invalid")

// ErrUntestable is what a [Measure] wraps when a commit cannot be measured (its server
// did not start, or exited while serving): the commit is skipped, as `git bisect run`
// skips a commit whose script exits 125. At the good commit it stops the bisection.
var ErrUntestable = errors.New("bisect: the commit cannot be measured")

// Verdict is what a commit's gate means to git bisect.
type Verdict int

const (
	// Good: no regression against the good side (or an improvement): git bisect good.
	Good Verdict = iota
	// Bad: regressed: git bisect bad.
	Bad
	// Skip: inconclusive at the gate's cap of runs, or the commit could not be
	// measured: git bisect skip.
	Skip
)

func (v Verdict) String() string {
	switch v {
	case Good:
		return "good"
	case Bad:
		return "bad"
	}
	return "skip"
}

// ExitCode is the verdict as a `git bisect run` script says it: 0 good, 1 bad, 125 skip.
func (v Verdict) ExitCode() int {
	switch v {
	case Good:
		return 0
	case Bad:
		return 1
	}
	return 125
}

// VerdictOf maps a gate's answer onto git bisect: regressed is [Bad], no regression
// and improved are [Good], inconclusive (the gate's sequential plan ended at its cap,
// or more runs could not tell) and a comparison that could not be made are [Skip].
func VerdictOf(r gate.GateResult) Verdict {
	if r.Invalid() {
		return Skip
	}
	switch r.Change() {
	case check.ChangeRegressed:
		return Bad
	case check.ChangeNoRegression, check.ChangeImproved:
		return Good
	}
	return Skip
}

// Measure adds n runs of commit to s (the work tree is checked out at commit), s's
// runs in s.Dir when it has one. Its error stops the bisection, unless it wraps
// [ErrUntestable] at a commit other than the good one: that commit is skipped. It
// must add the runs to s (as package run's Extend does), in s's session.
type Measure func(ctx context.Context, commit string, s *gate.Series, n int) error

// Config is a bisection: the repository, the two commits, the gate and how a commit
// is measured.
type Config struct {
	// Dir is the repository's work tree ("" = the current directory).
	Dir string
	// Good and Bad are revisions (a hash, a tag, a branch, HEAD~5): Good an ancestor
	// of Bad, measured as the baseline every commit is gated against.
	Good, Bad string
	// Gate is the regression gate each commit must pass (its zero value is the
	// default gate: δ 5%, 5 runs a side doubling up to 20 while inconclusive).
	Gate gate.Gate
	// Measure measures a commit.
	Measure Measure
	// Artifacts is the directory each commit's runs go in, Artifacts/<commit hash>
	// (run-NNN, runs.json, the gate's report); "" = kept nowhere.
	Artifacts string
	// Log gets one line per step (nil = none).
	Log io.Writer
}

// Step is one commit gated against the good side.
type Step struct {
	Commit, Subject string
	Verdict         Verdict
	// Result is the gate's answer (zero when the commit could not be measured).
	Result gate.GateResult
	// Untestable says why the commit could not be measured ("" when it was).
	Untestable string
	// Progress is git's count of what is left ("3 revisions left to test after this
	// (roughly 2 steps)"; "" for the bad commit's check).
	Progress string
}

// Line is the step as one line: the commit, the verdict, and the gate's headline.
func (s Step) Line() string {
	why := s.Untestable
	if why == "" {
		why = s.Result.Headline()
	}
	return fmt.Sprintf("%s %s: %s: %s", Short(s.Commit), s.Subject, s.Verdict, why)
}

// Result is a bisection's answer.
type Result struct {
	// Good and Bad are the two commits, resolved; GoodRuns the good side's runs.
	Good, Bad string
	GoodRuns  *gate.Series
	// Steps are the commits gated, in order: the bad commit first (is there a
	// regression to find?), then those git bisect chose.
	Steps []Step
	// FirstBad is the first bad commit git named ("" when it named none); Culprit its
	// step, the gate that found it regressed against the good side.
	FirstBad string
	Culprit  *Step
	// Candidates are the commits the first bad one could be when git was left with
	// only skipped commits (git bisect run's "only 'skip'ped commits left to test").
	Candidates []string
}

// Found reports whether the bisection named a first bad commit.
func (r *Result) Found() bool { return r != nil && r.FirstBad != "" && r.Culprit != nil }

// Headline is the bisection's answer as one sentence that stands alone.
func (r *Result) Headline() string {
	if r == nil || len(r.Steps) == 0 {
		return "bisect: nothing was measured"
	}
	against := "against good " + Short(r.Good)
	bad := r.Steps[0]
	switch {
	case r.Found():
		return fmt.Sprintf("bisect: first bad commit %s %s: %s %s (%d commits gated)", Short(r.FirstBad), r.Culprit.Subject,
			Regressions(r.Culprit.Result), against, len(r.Steps))
	case len(r.Candidates) > 0:
		var cs []string
		for _, c := range r.Candidates {
			cs = append(cs, Short(c))
		}
		return fmt.Sprintf("bisect: no single first bad commit: only skipped commits are left, and the first bad commit is one of %s (%d commits gated %s)",
			strings.Join(cs, ", "), len(r.Steps), against)
	case bad.Verdict == Good:
		return fmt.Sprintf("bisect: bad %s does not regress %s (%s): nothing to bisect", Short(r.Bad), against, strings.TrimPrefix(bad.Result.Headline(), "regression gate: "))
	case bad.Verdict == Skip:
		why := bad.Untestable
		if why == "" {
			why = strings.TrimPrefix(bad.Result.Headline(), "regression gate: ")
		}
		return fmt.Sprintf("bisect: bad %s %s cannot be told apart: %s: nothing bisected", Short(r.Bad), against, why)
	}
	return "bisect: stopped before git named a first bad commit"
}

// Regressions says how a gate that regressed did: each gating statistic that failed,
// with its change and the interval of the ratio, e.g. "TTFT p50 +10.2% [+7.1%, +13.4%],
// 5 vs 10 runs".
func Regressions(r gate.GateResult) string {
	var parts []string
	for i, c := range r.Comparisons {
		if !r.Gating[i] || r.Verdicts[i].Pass {
			continue
		}
		_, _, change, interval := c.Cells()
		parts = append(parts, strings.TrimSpace(c.Metric+" "+change+" "+interval))
	}
	if len(parts) == 0 {
		return strings.TrimPrefix(r.Headline(), "regression gate: ")
	}
	runs := ""
	if r.Baseline != nil && r.Current != nil {
		runs = fmt.Sprintf(", %d vs %d runs", r.Baseline.Len(), r.Current.Len())
	}
	return "regressed: " + strings.Join(parts, ", ") + runs
}

// Summary is the bisection as a markdown summary (reportgen.WriteSummary): the
// headline, the two commits, one line per commit gated, the culprit's statistics
// against the good side, and links to its gate report and both sides' runs.
func (r *Result) Summary() reportgen.Summary {
	s := reportgen.Summary{Title: "perfgate bisect", Headline: r.Headline(), Mark: "INCONCLUSIVE"}
	switch {
	case r.Found():
		s.Mark = "FOUND"
	case len(r.Steps) > 0 && r.Steps[0].Verdict == Good:
		s.Mark = "NO REGRESSION"
	}
	s.Headline = strings.TrimPrefix(s.Headline, "bisect: ")
	if r.GoodRuns != nil {
		s.Lines = append(s.Lines, fmt.Sprintf("good: %s, %d runs; bad: %s", r.Good, r.GoodRuns.Len(), r.Bad))
	}
	for _, st := range r.Steps {
		s.Lines = append(s.Lines, "gated: "+st.Line())
	}
	if r.Culprit != nil {
		cs := r.Culprit.Result.Summary()
		s.Stats = cs.Stats
		s.Artifacts = cs.Artifacts
	}
	return s
}

// Short is a commit hash's first 12 characters.
func Short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Run bisects cfg.Good..cfg.Bad with git bisect in cfg.Dir, gating each commit git
// chooses against the good commit's runs, and returns what it found (see the package
// documentation). Bad input is an error wrapping [ErrInvalid], returned before
// anything is measured. Any other error stops the bisection and is returned with the
// steps so far; the repository's bisection is reset whatever happens.
func Run(ctx context.Context, cfg Config) (res *Result, err error) {
	if cfg.Measure == nil {
		return nil, fmt.Errorf("%w: no Measure", ErrInvalid)
	}
	if err := cfg.Gate.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	r := repo{dir: cfg.Dir}
	good, bad, err := Validate(cfg)
	if err != nil {
		return nil, err
	}
	b := &bisector{cfg: cfg, repo: r, res: &Result{Good: good, Bad: bad}}
	b.res.GoodRuns = &gate.Series{Dir: b.dir(good)}
	first, err := r.bisect("start", bad, good)
	if err != nil {
		_, _ = r.git("bisect", "reset") // a start that failed half-way
		return nil, err
	}
	defer func() {
		if rerr := b.reset(); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	return b.res, b.run(ctx, first)
}

// Validate resolves cfg's two revisions and checks that git bisect can run between
// them in cfg.Dir (see [Run]), returning the good and bad commits' hashes; its errors
// wrap [ErrInvalid]. It changes nothing.
func Validate(cfg Config) (good, bad string, err error) {
	r := repo{dir: cfg.Dir}
	if err := r.check(); err != nil {
		return "", "", err
	}
	if good, err = r.commit("good", cfg.Good); err != nil {
		return "", "", err
	}
	if bad, err = r.commit("bad", cfg.Bad); err != nil {
		return "", "", err
	}
	if good == bad {
		return "", "", fmt.Errorf("%w: good %s and bad %s are the same commit %s: nothing lies between them", ErrInvalid, cfg.Good, cfg.Bad, Short(good))
	}
	ok, err := r.ancestor(good, bad)
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if !ok {
		return "", "", fmt.Errorf("%w: good %s (%s) is not an ancestor of bad %s (%s): git bisect looks for the change between an older good commit and a newer bad one",
			ErrInvalid, cfg.Good, Short(good), cfg.Bad, Short(bad))
	}
	return good, bad, nil
}

// bisector is one bisection under way.
type bisector struct {
	cfg  Config
	repo repo
	res  *Result
	head string // the commit checked out by this bisection ("" = as git left it)
}

func (b *bisector) logf(format string, a ...any) {
	if b.cfg.Log != nil {
		fmt.Fprintf(b.cfg.Log, format+"\n", a...)
	}
}

func (b *bisector) dir(sha string) string {
	if b.cfg.Artifacts == "" {
		return ""
	}
	return filepath.Join(b.cfg.Artifacts, Short(sha))
}

// reset ends git's bisection: the work tree goes back to the branch it was on.
func (b *bisector) reset() error {
	_, err := b.repo.git("bisect", "reset")
	return err
}

// run gates the bad commit, then each commit git chooses (next: where git start left
// the bisection), marking it with the verdict.
func (b *bisector) run(ctx context.Context, next state) error {
	res := b.res
	b.logf("bisect: good %s %s, bad %s %s; gating bad against good first", Short(res.Good), b.repo.subject(res.Good), Short(res.Bad), b.repo.subject(res.Bad))
	st, err := b.step(ctx, res.Bad, "")
	if err != nil {
		return err
	}
	if st.Verdict != Bad {
		return nil // nothing to find: the headline says why
	}
	for err == nil && !next.done() {
		var s Step
		if s, err = b.step(ctx, next.next, next.progress); err != nil {
			break
		}
		b.head = "" // git checks out the next commit to test
		next, err = b.repo.bisect(s.Verdict.String(), s.Commit)
	}
	if err != nil {
		return err
	}
	res.FirstBad, res.Candidates = next.firstBad, next.candidates
	for i := range res.Steps {
		if res.Steps[i].Commit == res.FirstBad {
			res.Culprit = &res.Steps[i]
		}
	}
	return nil
}

// step gates commit against the good side and records the step.
func (b *bisector) step(ctx context.Context, commit, progress string) (Step, error) {
	s := Step{Commit: commit, Subject: b.repo.subject(commit), Progress: progress}
	if progress != "" {
		progress = " (" + progress + ")"
	}
	b.logf("bisect: gating %s %s%s", Short(commit), s.Subject, progress)
	cur := &gate.Series{Dir: b.dir(commit)}
	cur.ShareSession(b.res.GoodRuns) // one job, one machine: one session
	var untestable error
	r, err := gate.Looks(b.cfg.Gate, b.res.GoodRuns, func(look, k int, _ *gate.Series) (*gate.Series, error) {
		if err := b.grow(ctx, b.res.GoodRuns, b.res.Good, k); err != nil {
			return cur, fmt.Errorf("good %s: %w", Short(b.res.Good), err) // never skipped
		}
		err := b.grow(ctx, cur, commit, k)
		if errors.Is(err, ErrUntestable) {
			untestable = err
		}
		return cur, err
	}, func() *gate.Series { return b.res.GoodRuns })
	switch {
	case untestable != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil:
		s.Verdict, s.Untestable = Skip, "cannot be measured: "+untestable.Error()
	case err != nil:
		return s, err
	default:
		r.Baseline = snapshot(b.res.GoodRuns) // the good side grows for later commits; this gate saw these runs
		s.Result, s.Verdict = r, VerdictOf(r)
		if cur.Dir != "" && !r.Invalid() {
			if err := r.WriteReport(filepath.Join(cur.Dir, reportgen.GateReportFile)); err != nil {
				return s, err
			}
		}
	}
	b.res.Steps = append(b.res.Steps, s)
	b.logf("bisect: %s", s.Line())
	return s, nil
}

// snapshot is s as it is now: the runs a gate compared, kept as they were when the
// good side grows for a later commit.
func snapshot(s *gate.Series) *gate.Series {
	cp := *s
	cp.Runs, cp.Dirs = slices.Clip(s.Runs), slices.Clip(s.Dirs)
	return &cp
}

// grow measures commit until s has k runs (checking the commit out first).
func (b *bisector) grow(ctx context.Context, s *gate.Series, commit string, k int) error {
	n := k - s.Len()
	if n <= 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.head != commit {
		if err := b.repo.checkout(commit); err != nil {
			return err
		}
		b.head = commit
	}
	had := s.Len()
	if err := b.cfg.Measure(ctx, commit, s, n); err != nil {
		return err
	}
	if s.Len() != had+n {
		return fmt.Errorf("bisect: measuring %s added %d runs, want %d", Short(commit), s.Len()-had, n)
	}
	return nil
}
