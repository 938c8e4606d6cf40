package check

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// Rule is one objective written as text, as k6 writes thresholds: "ttft_p99<=250ms",
// "error_rate<=0.01", "goodput(ttft<=200ms, itl<=20ms)>=0.95". [ParseRule] reads it
// once, and the same rule is then usable from a test (perftest's Result.Assert), a
// scenario file (objectives.rules) and the CLI (--assert). The zero Rule is invalid.
//
// The forms (spaces are allowed anywhere; a latency is Go duration text such as
// "250ms" or "1.5s", and a bare number there is milliseconds, as AIPerf writes it; a
// fraction may be written as a percentage, "95%"; any other quantile's value is a
// number in the metric's unit, optionally followed by that unit as verdicts print it,
// "generated_images_p50>=2" or ">=2 img": [Unit.Parse]):
//
//	METRIC_pNN<=VALUE, METRIC_pNN>=VALUE   the NN-th percentile of a per-request metric
//	                                       of docs/metrics.md, by its rule name (ttft,
//	                                       ttfo, itl, latency, isl, osl,
//	                                       output_tps_per_user) or its full name
//	                                       (time_to_first_token, time_to_second_token, …)
//	error_rate<=FRACTION                   failed requests (error_rate<=1 allows any)
//	goodput>=FRACTION                      requests meeting the scenario's SLO, with
//	                                       95% confidence (a Wilson lower bound)
//	goodput(SLO)>=FRACTION                 the same against SLO, e.g. ttft<=200ms, itl<=20ms
//	output_token_throughput>=TOK_PER_S     run-level floors: each run-level metric the
//	request_throughput>=REQ_PER_S          catalogue records as a run statistic
//	                                       (metric.Def.IsRunStat), by its name
//	tokenizer_match, tokenizer_match<=N    the server counted each request's input as
//	                                       the client did (within N tokens)
//	prefix_cache_hit_rate>=FRACTION        a run-level metric the catalogue marks rule-able
//	prefix_cache_gap<=FRACTION             (metric.Def.RunRule), either way (<= or >=);
//	prefix_cache_ideal_hit_rate>=FRACTION  a run that does not report it (an unknown
//	                                       hit rate) makes the rule invalid, never a pass
//
// Any of them may be scoped to the requests sent to one model of a model mix by
// {model=NAME} after the name: "ttft_p99{model=lora-a}<=200ms",
// "error_rate{model=base}<=0.01", "goodput(ttft<=200ms){model=b}>=0.9" (docs/models.md),
// or to one traffic class of a run of several by {class=NAME}: "ttft_p99{class=chat}<=200ms",
// "request_throughput{class=batch}>=2" (docs/classes.md). A scoped rule with no
// request of its model or class fails.
type Rule struct {
	// Source is the rule as written, printed in messages.
	Source string

	kind   ruleKind
	metric Metric  // quantile rules
	p      float64 // quantile rules
	atMost bool    // "<=" (else ">=")
	value  float64 // the limit: seconds for latencies, else the metric's unit
	slo    *SLO    // goodput(SLO); nil = the caller's SLO
	scope  Scope   // {model=NAME} or {class=NAME}: only those requests; zero = all
	run    string  // ruleRun: the run-level metric's name
}

type ruleKind int

const (
	ruleNone ruleKind = iota
	ruleQuantile
	ruleErrorRate
	ruleGoodput
	ruleRun // a run-level metric by name (runRule): output_token_throughput>=X, prefix_cache_gap<=0.02
	ruleTokenizerMatch
)

// RuleError is the error of a rule that cannot be parsed: the rule as written, the
// 1-based column (in bytes) where the problem is, and what was wanted there.
type RuleError struct {
	Rule   string
	Column int
	Msg    string
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("check: rule %q, column %d: %s", e.Rule, e.Column, e.Msg)
}

// ErrBadRule is wrapped by every [RuleError].
var ErrBadRule = errors.New("check: bad rule")

// Unwrap returns [ErrBadRule].
func (e *RuleError) Unwrap() error { return ErrBadRule }

// ruleMetric returns the per-request metric a rule names, by its short name or its
// full name in package metric's catalogue ("ttft" or "time_to_first_token").
func ruleMetric(name string) (Metric, bool) {
	d, ok := metric.LookupRule(name)
	if !ok {
		return "", false
	}
	return Metric(d.RuleName()), true
}

// ruleScanner reads a rule left to right, keeping the byte offset for errors.
type ruleScanner struct {
	src string
	i   int
}

func (s *ruleScanner) skip() {
	for s.i < len(s.src) && (s.src[s.i] == ' ' || s.src[s.i] == '\t') {
		s.i++
	}
}

func (s *ruleScanner) fail(at int, format string, a ...any) error {
	return &RuleError{Rule: s.src, Column: at + 1, Msg: fmt.Sprintf(format, a...)}
}

// ident reads [a-z0-9_.]+.
func (s *ruleScanner) ident() (string, int) {
	s.skip()
	start := s.i
	for s.i < len(s.src) {
		c := rune(s.src[s.i])
		if !(unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' || c == '.') {
			break
		}
		s.i++
	}
	return s.src[start:s.i], start
}

// op reads "<=" or ">=".
func (s *ruleScanner) op() (atMost bool, at int, err error) {
	s.skip()
	at = s.i
	switch {
	case strings.HasPrefix(s.src[s.i:], "<="):
		s.i += 2
		return true, at, nil
	case strings.HasPrefix(s.src[s.i:], ">="):
		s.i += 2
		return false, at, nil
	case s.i < len(s.src) && (s.src[s.i] == '<' || s.src[s.i] == '>' || s.src[s.i] == '='):
		return false, at, s.fail(at, "want <= or >= (a quantile or a rate is never exactly equal)")
	case s.i == len(s.src):
		return false, at, s.fail(at, "want <= or >= and a value after the name")
	}
	return false, at, s.fail(at, "want <= or >= after the name, got %q", s.src[s.i:s.i+1])
}

// value reads the rest of a term: up to a ',' or ')' when nested, else to the end.
func (s *ruleScanner) value(nested bool) (string, int) {
	s.skip()
	start := s.i
	for s.i < len(s.src) && !(nested && (s.src[s.i] == ',' || s.src[s.i] == ')')) {
		s.i++
	}
	return strings.TrimSpace(s.src[start:s.i]), start
}

// ParseRule parses one rule (see [Rule] for the forms). Its error is a [*RuleError]
// naming the rule, the column and the accepted form.
func ParseRule(text string) (Rule, error) {
	src := strings.TrimSpace(text)
	s := &ruleScanner{src: src}
	r := Rule{Source: src}
	if src == "" {
		return r, s.fail(0, "empty rule; want e.g. ttft_p99<=250ms, error_rate<=0 or goodput>=0.95")
	}
	name, at := s.ident()
	if name == "" {
		return r, s.fail(at, "want a name such as ttft_p99, error_rate or goodput")
	}
	if name == "goodput" {
		s.skip()
		if s.i < len(s.src) && s.src[s.i] == '(' {
			s.i++
			slo, err := s.slo()
			if err != nil {
				return r, err
			}
			r.slo = &slo
		}
	}
	if err := s.scope(&r); err != nil {
		return r, err
	}
	if name == "tokenizer_match" {
		r.kind = ruleTokenizerMatch
		s.skip()
		if s.i == len(s.src) {
			return r, nil
		}
	}
	atMost, opAt, err := s.op()
	if err != nil {
		return r, err
	}
	r.atMost = atMost
	val, valAt := s.value(false)
	if val == "" {
		return r, s.fail(valAt, "want a value after %s", src[opAt:opAt+2])
	}
	switch name {
	case "tokenizer_match":
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 || !atMost {
			return r, s.fail(opAt, "want tokenizer_match or tokenizer_match<=TOKENS (a whole number >= 0)")
		}
		r.value = float64(n)
		return r, nil
	case "goodput":
		r.kind = ruleGoodput
		x, err := fraction(val)
		if err != nil || atMost || !(x > 0 && x <= 1) {
			return r, s.fail(opAt, "want goodput>=FRACTION with a fraction in (0, 1], e.g. goodput>=0.95")
		}
		r.value = x
		return r, nil
	case "error_rate":
		r.kind = ruleErrorRate
		x, err := fraction(val)
		if err != nil || !atMost || !(x >= 0 && x <= 1) {
			return r, s.fail(opAt, "want error_rate<=FRACTION with a fraction in [0, 1], e.g. error_rate<=0.01")
		}
		r.value = x
		return r, nil
	}
	if rr, ok := lookupRunRule(name); ok {
		x, want, atValue := rr.parse(val, src[opAt:opAt+2])
		if want != "" {
			if atValue {
				return r, s.fail(valAt, "%s", want)
			}
			return r, s.fail(opAt, "%s", want)
		}
		r.kind, r.run, r.value = ruleRun, rr.def.Name, x
		return r, nil
	}
	i := strings.LastIndex(name, "_p")
	if i < 0 {
		return r, s.fail(at, "unknown name %q; want METRIC_pNN (METRIC: %s), %s", name, MetricNames(), runRuleNames())
	}
	m, ok := ruleMetric(name[:i])
	if !ok {
		return r, s.fail(at, "unknown metric %q; want %s", name[:i], MetricNames())
	}
	p, err := strconv.ParseFloat(name[i+2:], 64)
	if err != nil || !(p >= 0 && p <= 100) {
		return r, s.fail(at+i+2, "the percentile after _p must be in [0, 100] (p100 = the maximum), e.g. %s_p99", name[:i])
	}
	r.kind, r.metric, r.p = ruleQuantile, m, p/100
	x, err := m.Unit().Parse(val)
	switch {
	case err != nil && m.Unit() == Seconds:
		return r, s.fail(valAt, "%s is a latency: %v", name, err)
	case err != nil:
		return r, s.fail(valAt, "%v", err)
	}
	r.value = x
	if !(r.value > 0) {
		return r, s.fail(valAt, "the bound must be positive")
	}
	return r, nil
}

// Scope kinds: the key of a rule's {KEY=NAME} and of a scoped run statistic's name.
const (
	ScopeModel = "model" // one model of a model mix (record.Client.Model)
	ScopeClass = "class" // one traffic class of a run of several (record.Client.Class)
)

// Scope is the part of a run a rule or a run statistic is scoped to: {model=NAME},
// the requests sent to one model of a model mix, or {class=NAME}, the requests of one
// traffic class. The zero Scope is the whole run. One mechanism serves both: rules
// filter the requests and take the part's own run-level metrics
// (record.Metrics.Models or .Classes), and the regression gate names a part's
// statistics "ttft_p99{class=batch}" ([Scope.Name]).
type Scope struct {
	Key  string // ScopeModel or ScopeClass; "" = the whole run
	Name string
}

// IsZero reports whether s is the whole run.
func (s Scope) IsZero() bool { return s.Key == "" }

// String is "{KEY=NAME}", "" for the whole run.
func (s Scope) String() string {
	if s.IsZero() {
		return ""
	}
	return "{" + s.Key + "=" + s.Name + "}"
}

// Named returns stat's name in the scope: "ttft_p99{class=batch}", stat alone for
// the whole run.
func (s Scope) Named(stat string) string { return stat + s.String() }

// Has reports whether q is in the scope.
func (s Scope) Has(q *Request) bool {
	switch s.Key {
	case ScopeModel:
		return q.Model == s.Name
	case ScopeClass:
		return q.Class == s.Name
	}
	return true
}

// Metrics returns the scope's own run-level metrics from the run's m: a model's or a
// class's breakdown, m itself for the whole run.
func (s Scope) Metrics(m record.Metrics) record.Metrics {
	switch s.Key {
	case ScopeModel:
		return m.Models[s.Name]
	case ScopeClass:
		return m.Classes[s.Name]
	}
	return m
}

// Filter returns the requests of reqs in the scope (reqs itself for the whole run).
func (s Scope) Filter(reqs []Request) []Request {
	if s.IsZero() {
		return reqs
	}
	var mine []Request
	for i := range reqs {
		if s.Has(&reqs[i]) {
			mine = append(mine, reqs[i])
		}
	}
	return mine
}

// CutScope splits a scoped name, "ttft_p99{class=batch}", into the name and its
// scope; a name without one is returned whole with the zero Scope. ok is false for a
// malformed scope ("x{class=}", "x{zone=a}").
func CutScope(name string) (base string, s Scope, ok bool) {
	i := strings.IndexByte(name, '{')
	if i < 0 {
		return name, Scope{}, true
	}
	if !strings.HasSuffix(name, "}") {
		return name, Scope{}, false
	}
	key, val, found := strings.Cut(name[i+1:len(name)-1], "=")
	key, val = strings.TrimSpace(key), strings.TrimSpace(val)
	if !found || (key != ScopeModel && key != ScopeClass) || val == "" || strings.ContainsAny(val, "{}") {
		return name, Scope{}, false
	}
	base = strings.TrimSpace(name[:i])
	if base == "" || strings.ContainsAny(base, "{}") {
		return name, Scope{}, false
	}
	return base, Scope{Key: key, Name: val}, true
}

// scope reads an optional {model=NAME} or {class=NAME} into r.scope.
func (s *ruleScanner) scope(r *Rule) error {
	s.skip()
	if s.i >= len(s.src) || s.src[s.i] != '{' {
		return nil
	}
	start := s.i
	end := strings.IndexByte(s.src[s.i:], '}')
	if end < 0 {
		return s.fail(len(s.src), "want } to close {model=NAME} or {class=NAME}")
	}
	key, name, ok := strings.Cut(s.src[s.i+1:s.i+end], "=")
	if key = strings.TrimSpace(key); !ok || (key != ScopeModel && key != ScopeClass) {
		return s.fail(start+1, "want {model=NAME} or {class=NAME}: a rule is scoped to one model of a model mix or one traffic class, got {%s}", s.src[s.i+1:s.i+end])
	}
	if r.scope = (Scope{Key: key, Name: strings.TrimSpace(name)}); r.scope.Name == "" {
		return s.fail(start+1+len(key)+1, "want a %s name after {%s=", key, key)
	}
	s.i += end + 1
	return nil
}

// Model returns the model r is scoped to ({model=NAME}), "" otherwise.
func (r Rule) Model() string {
	if r.scope.Key == ScopeModel {
		return r.scope.Name
	}
	return ""
}

// Class returns the traffic class r is scoped to ({class=NAME}), "" otherwise.
func (r Rule) Class() string {
	if r.scope.Key == ScopeClass {
		return r.scope.Name
	}
	return ""
}

// Scope returns the part of the run r is scoped to; zero = the whole run.
func (r Rule) Scope() Scope { return r.scope }

// QuantileRule returns the rule m_pNN<=limit (atMost) or m_pNN>=limit, p in [0, 1],
// limit in m's unit (seconds for latencies), as [ParseRule] would read it; its Source
// is that text, e.g. "ttft_p99<=200ms".
func QuantileRule(m Metric, p float64, atMost bool, limit float64) Rule {
	op := ">="
	if atMost {
		op = "<="
	}
	v := strconv.FormatFloat(limit, 'g', -1, 64)
	if m.Unit() == Seconds {
		// The longest duration's seconds round up to 2^63 ns, one past what a
		// time.Duration holds: clamp, so the text is the longest duration, not a
		// negative one.
		if ns := math.Round(limit * 1e9); ns >= math.MaxInt64 {
			v = metric.MaxDuration.String()
		} else {
			v = time.Duration(ns).String()
		}
	}
	r := Rule{Source: string(m) + "_p" + strconv.FormatFloat(p*100, 'g', -1, 64) + op + v,
		kind: ruleQuantile, metric: m, p: p, atMost: atMost, value: limit}
	// The rule is what its text reads as, so that String round-trips.
	if back, err := ParseRule(r.Source); err == nil {
		return back
	}
	return r
}

// GoodputRule returns the rule goodput(slo)>=minFraction; its Source is written as
// ParseRule reads it ("goodput(ttft<=200ms, itl<=20ms)>=0.95"), except that an
// SLO.ITLPercentile, which the text form has no place for, is only in the SLO.
func GoodputRule(slo SLO, minFraction float64) Rule {
	return Rule{Source: "goodput(" + slo.Terms() + ")>=" + strconv.FormatFloat(minFraction, 'g', -1, 64),
		kind: ruleGoodput, value: minFraction, slo: &slo}
}

// MustRule is [ParseRule] that panics on error; for package-level values.
func MustRule(text string) Rule {
	r, err := ParseRule(text)
	if err != nil {
		panic(err)
	}
	return r
}

// slo reads "ttft<=200ms, itl<=20ms)" (the opening parenthesis already read) with
// [metric.ParseSLO], the one SLO parser.
func (s *ruleScanner) slo() (SLO, error) {
	start := s.i
	end := strings.IndexByte(s.src[s.i:], ')')
	if end < 0 {
		// Say what is wrong with the terms, if anything, before the missing ")".
		if _, err := metric.ParseSLO(s.src[start:]); err != nil {
			if se := (*metric.SLOError)(nil); errors.As(err, &se) {
				return SLO{}, s.fail(start+se.Column-1, "%s", se.Msg)
			}
		}
		return SLO{}, s.fail(len(s.src), "want ) to close goodput(")
	}
	slo, err := metric.ParseSLO(s.src[start : start+end])
	if se := (*metric.SLOError)(nil); errors.As(err, &se) {
		return SLO{}, s.fail(start+se.Column-1, "%s", se.Msg)
	}
	s.i = start + end + 1
	return slo, err
}

// ParseSLO reads an SLO with [metric.ParseSLO], the one SLO parser: rule terms,
// "ttft<=200ms, itl<=20ms" (the inside of a goodput(…) rule; bare numbers are ms), or
// AIPerf's "time_to_first_token:200". The whole text is the SLO: anything after it is
// an error. The error is a [*RuleError].
func ParseSLO(text string) (SLO, error) {
	slo, err := metric.ParseSLO(text)
	if se := (*metric.SLOError)(nil); errors.As(err, &se) {
		return SLO{}, &RuleError{Rule: text, Column: se.Column, Msg: se.Msg}
	}
	return slo, err
}

// fraction reads 0.95 or 95%.
func fraction(v string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil || math.IsNaN(x) {
		return 0, errors.New("not a number")
	}
	if strings.HasSuffix(v, "%") {
		x /= 100
	}
	return x, nil
}

// runRuleNames lists the rule names other than METRIC_pNN, for messages: error_rate,
// goodput, the run-level metrics (runRule), and tokenizer_match.
func runRuleNames() string {
	ns := []string{"error_rate", "goodput"}
	for _, d := range metric.Catalogue() {
		if _, ok := lookupRunRule(d.Name); ok {
			ns = append(ns, d.Name)
		}
	}
	return strings.Join(ns, ", ") + " or tokenizer_match"
}

// runRuleExample is an example rule on the run-level metric name.
func runRuleExample(name string) string {
	switch name {
	case record.MetricPrefixCacheGap:
		return name + "<=0.02"
	case record.MetricGPUEnergy:
		return name + "<=50000"
	case record.MetricGPUPower:
		return name + "<=700"
	case record.MetricGPUMemoryUsed:
		return name + "<=70000"
	case record.MetricTokensPerJoule:
		return name + ">=2.5"
	case record.MetricOutputTPSPerGPU:
		return name + ">=1000"
	case record.MetricEnergyPerRequest:
		return name + "<=150"
	}
	return name + ">=0.6"
}

// NeedsGaps reports whether checking r needs each request's inter-chunk gaps
// (Request.Gaps): a goodput rule whose SLO (its own, else slo) bounds a quantile of
// them (ITLPercentile > 0).
func (r Rule) NeedsGaps(slo SLO) bool {
	if r.kind != ruleGoodput {
		return false
	}
	if r.slo != nil {
		slo = *r.slo
	}
	return slo.ITL > 0 && slo.ITLPercentile > 0
}

// String returns the rule as written.
func (r Rule) String() string { return r.Source }

// IsErrorRate reports whether r is an error_rate rule, and its limit.
func (r Rule) IsErrorRate() (maxRate float64, ok bool) {
	return r.value, r.kind == ruleErrorRate
}

// Check evaluates r on a run's requests and metrics. slo is what a bare goodput rule
// counts against (goodput(…) carries its own); confidence is the goodput interval's
// (0 = [DefaultConfidence]). A quantile, error-rate, goodput or tokenizer rule gives
// one verdict; the zero Rule gives a failing one. The verdict's summary names the
// rule as written.
func (r Rule) Check(reqs []Request, m record.Metrics, slo SLO, confidence float64) Verdict {
	var v Verdict
	if !r.scope.IsZero() && r.kind != ruleNone {
		mine := r.scope.Filter(reqs)
		if len(mine) == 0 {
			if r.scope.Key == ScopeClass {
				return invalid("rule", "rule %q: no request of the run is of class %q (classes are named by the scenario's classes)", r.Source, r.scope.Name)
			}
			return invalid("rule", "rule %q: no request of the run was sent to model %q (models are named by --model-names)", r.Source, r.scope.Name)
		}
		reqs, m = mine, r.scope.Metrics(m) // the part's own run-level metrics (throughputs)
	}
	switch r.kind {
	case ruleQuantile:
		s := r.metric.Sample(reqs)
		if r.atMost {
			v = QuantileAtMost(s, r.p, r.value)
		} else {
			v = QuantileAtLeast(s, r.p, r.value)
		}
	case ruleErrorRate:
		v = ErrorRate(reqs, r.value)
	case ruleGoodput:
		if r.slo != nil {
			slo = *r.slo
		}
		v = Goodput(reqs, slo, r.value, confidence)
	case ruleRun:
		rr, ok := lookupRunRule(r.run)
		if !ok {
			return invalid("rule", "rule %q: the catalogue has no run-level metric %q", r.Source, r.run)
		}
		v = rr.check(m, r.atMost, r.value, len(reqs))
	case ruleTokenizerMatch:
		v = TokenizerMatch(reqs, int(r.value))
	default:
		return invalid("rule", "rule %q: not parsed (use check.ParseRule)", r.Source)
	}
	v.Evidence = append(v.Evidence, Line{Label: "rule", Text: r.Source})
	return v
}
