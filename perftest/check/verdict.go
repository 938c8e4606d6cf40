package check

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBreached is wrapped by the error of every failing [Verdict] (see [Verdict.Err]), so a
// caller can tell a breached objective from a setup error with errors.Is.
var ErrBreached = errors.New("check: objective breached")

// ErrInconclusive is wrapped, instead of [ErrBreached], by the error of a failing verdict
// whose [Status] is [Inconclusive]: the data could not tell, which is not a breach.
var ErrInconclusive = errors.New("check: inconclusive")

// ErrInvalidRun is wrapped, instead of [ErrBreached], by the error of a failing verdict
// whose [Status] is [Invalid]: the measurement itself cannot be trusted, so it is neither
// a performance pass nor a performance failure.
var ErrInvalidRun = errors.New("check: invalid measurement")

// Status says what kind of answer a [Verdict] is, beyond Pass. The zero value,
// [Decided], means Pass says it all.
type Status uint8

// Statuses.
const (
	// Decided: the check reached an answer; Pass is that answer.
	Decided Status = iota
	// Inconclusive: the data cannot tell (e.g. a regression gate whose interval straddles
	// its margin). Pass says whether the gate lets an inconclusive answer through.
	Inconclusive
	// Invalid: the measurement is not valid (client-bound, not steady, warm cache…), so
	// its numbers must not be read as a performance result. Pass is false unless the check
	// is configured as a warning.
	Invalid
)

// String returns "decided", "inconclusive" or "invalid".
func (s Status) String() string {
	switch s {
	case Decided:
		return "decided"
	case Inconclusive:
		return "inconclusive"
	case Invalid:
		return "invalid"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Line is one labelled line of a verdict's evidence.
type Line struct {
	Label string // e.g. "quantiles"; printed followed by a colon and aligned
	Text  string
}

// Verdict is the outcome of one check. Its zero value is a failing verdict with no text.
type Verdict struct {
	// Check names the check, e.g. "quantile", "goodput", "length-fit". Stable; for programs.
	Check string
	// Pass reports whether the objective was met.
	Pass bool
	// Summary is the first line: the verdict on its own, in got/want order.
	Summary string
	// Evidence are the labelled lines printed under the summary.
	Evidence []Line
	// Value is the headline number the check measured (a quantile in its unit, a goodput
	// fraction, a p-value, …), for dashboards; see Unit.
	Value float64
	// Unit is Value's unit.
	Unit Unit
	// Status refines Pass: [Decided] (the zero value), [Inconclusive] or [Invalid].
	Status Status
	// Kind says what the verdict judges in a run's one list of verdicts (package
	// scenario's Outcome.Verdicts): [KindObjective], [KindHealth] or [KindValidity]; ""
	// for a verdict made outside that list.
	Kind Kind
}

// Kind is what a verdict on a run judges.
type Kind string

// The kinds of verdicts on a run.
const (
	// KindObjective: one of the scenario's objectives (a rule, a length fit, an abort
	// rule that held).
	KindObjective Kind = "objective"
	// KindHealth: the gate every run passes whatever its objectives: a request
	// completed, and failed requests are within the objectives' limit.
	KindHealth Kind = "health"
	// KindValidity: whether the measurement can be trusted (client-bound, steady
	// state, warm cache, tail samples); one that found it invalid has Status [Invalid].
	KindValidity Kind = "validity"
)

// String renders the verdict: the summary, then the evidence lines indented by four
// spaces with their labels aligned.
func (v Verdict) String() string {
	var b strings.Builder
	b.WriteString(v.Summary)
	w := 0
	for _, l := range v.Evidence {
		w = max(w, len(l.Label)+1)
	}
	for _, l := range v.Evidence {
		b.WriteString("\n    ")
		if l.Label == "" {
			b.WriteString(strings.Repeat(" ", w+2))
		} else {
			fmt.Fprintf(&b, "%-*s  ", w, l.Label+":")
		}
		// Continuation lines of multi-line evidence stay under the text column.
		b.WriteString(strings.ReplaceAll(l.Text, "\n", "\n    "+strings.Repeat(" ", w+2)))
	}
	return b.String()
}

// Err returns nil if the verdict passed, and otherwise an error whose text is
// [Verdict.String] and which wraps [ErrBreached].
func (v Verdict) Err() error {
	if v.Pass {
		return nil
	}
	return &Failure{Verdict: v}
}

// Failure is the error of a failing verdict.
type Failure struct{ Verdict Verdict }

func (f *Failure) Error() string { return f.Verdict.String() }

// Unwrap returns [ErrBreached], or [ErrInconclusive] / [ErrInvalidRun] for a verdict of
// that [Status].
func (f *Failure) Unwrap() error {
	switch f.Verdict.Status {
	case Inconclusive:
		return ErrInconclusive
	case Invalid:
		return ErrInvalidRun
	}
	return ErrBreached
}

// Context describes the run a verdict was computed on; [Verdict.With] adds it to the
// text. Zero fields are omitted.
type Context struct {
	Scenario  string // scenario name
	Load      string // load mode, e.g. "concurrency=10" or "Poisson{20 req/s}"
	Requests  int    // requests measured (warm-up excluded)
	Errors    int    // of which failed
	Seed      uint64 // the scenario's seed
	Rerun     string // how to re-run with the same seed, e.g. "go test -run '^TestX$' ./examples_test"
	Artifacts string // where the recording and reports are
}

// With returns v with c appended: a bracketed header on the summary line and the
// recording/seed lines at the end of the evidence.
func (v Verdict) With(c Context) Verdict {
	var h []string
	if c.Scenario != "" {
		h = append(h, fmt.Sprintf("scenario %q", c.Scenario))
	}
	if c.Load != "" {
		h = append(h, c.Load)
	}
	if c.Requests > 0 || c.Errors > 0 {
		h = append(h, fmt.Sprintf("n=%d", c.Requests), fmt.Sprintf("errors=%d", c.Errors))
	}
	if len(h) > 0 {
		v.Summary += "  [" + strings.Join(h, ", ") + "]"
	}
	ev := append([]Line(nil), v.Evidence...)
	if c.Artifacts != "" {
		ev = append(ev, Line{"artifacts", c.Artifacts})
	}
	seed := fmt.Sprintf("%d", c.Seed)
	if c.Rerun != "" {
		seed += "   re-run: " + c.Rerun
	}
	ev = append(ev, Line{"seed", seed})
	v.Evidence = ev
	return v
}

// All reports whether every verdict passed, and joins the errors of the failing ones.
func All(vs ...Verdict) error {
	var errs []error
	for _, v := range vs {
		if err := v.Err(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// invalid returns the failing verdict of a check that could not be evaluated.
func invalid(check, format string, args ...any) Verdict {
	return Verdict{Check: check, Summary: fmt.Sprintf("cannot check "+format, args...)}
}
