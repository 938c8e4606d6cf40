package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// FromClient converts a client recording into [Request]s, leaving warm-up requests out.
// ServerISL is the server's usage.prompt_tokens (-1 when the server sent no usage);
// callers holding a server recording overwrite it with the server's own count.
// IDs are the request ids, or the send index when a record has none. Overhead is the
// record's chat-template overhead (ISLTemplate - ISL) when it was counted; a record
// whose input is templated but could not be rendered (record.ISLTemplateUnknown) is
// marked OverheadUnknown.
func FromClient(cs []record.Client) []Request { return FromClientOptions(cs, metric.Options{}) }

// FromClientOptions is [FromClient] with the metric definitions opt chooses (OSL by
// usage when opt.UsageOSL), so verdicts agree with the run's metrics. Every value comes
// from [metric.Of], through [NewRequest].
func FromClientOptions(cs []record.Client, opt metric.Options) []Request {
	out := make([]Request, 0, len(cs))
	var q metric.Request
	for i := range cs {
		c := &cs[i]
		if c.Warmup {
			continue
		}
		q.Reset(c, opt)
		r := NewRequest(c, &q)
		for _, g := range q.ICL {
			r.Gaps = append(r.Gaps, g.Seconds())
		}
		out = append(out, r)
	}
	return out
}

// NewRequest is the one mapping from a client record and its derived values (q, from
// [metric.Request.Reset]) to a [Request]: [FromValues] of q, then the record's id
// (the send index when it has none), server-side input count, turn, chat-template
// overhead and error. Gaps is left empty; a caller that needs them fills it from q.ICL.
func NewRequest(c *record.Client, q *metric.Request) Request {
	r := FromValues(*q)
	r.ID, r.ServerISL, r.Turn, r.Model, r.Class = c.RequestID, c.UsagePromptTokens, c.Turn, c.Model, c.Class
	if r.ID == "" {
		r.ID = strconv.Itoa(c.Index)
	}
	r.Media = c.ImageTokens + c.AudioTokens
	if n, ok := c.TemplateOverhead(); ok {
		r.Overhead = n
	} else if c.ISLTemplate == record.ISLTemplateUnknown && c.ISL > 0 {
		r.OverheadUnknown = true
	}
	if c.UsagePromptTokens < 0 {
		r.ServerISL = -1
	}
	if !c.OK() {
		r.Err = c.ErrorKind
		if c.Error != "" {
			r.Err += ": " + c.Error
		}
	}
	return r
}

// FromValues returns the Request fields derived from q: Latency, TTFT, TTFO, ISL, OSL
// and Values (q as a [metric.Store] keeps it, [metric.Request.Kept]: no gaps, times
// from the send, TTFO to the µs past 2.1 s, as metrics.json has it). The record-level fields (ID, Err, ServerISL,
// Turn, overhead) are [NewRequest]'s.
func FromValues(q metric.Request) Request {
	r := Request{Latency: q.Latency.Seconds(), ISL: q.ISL, OSL: q.OSL}
	if q.HasTTFT {
		r.TTFT = q.TTFT.Seconds()
	}
	if q.HasTTFO {
		r.TTFO = q.TTFO.Seconds()
	}
	v := q.Kept()
	r.Values = &v
	return r
}

// Metric names a per-request metric of package metric's catalogue, by its rule name
// ("ttft") or its full name ("time_to_first_token"): what [Bound], [Metric.Sample] and
// the rules read. The constants (TTFT, …) are the metrics with a short name.
type Metric string

// def returns m's catalogue entry.
func (m Metric) def() (metric.Def, bool) { return metric.LookupRule(string(m)) }

// Unit returns the metric's unit, as [CatalogueUnit] maps its catalogue unit:
// Seconds for a latency or a duration, Tokens for a length, Images for an image count,
// TokPerSec, ImgPerSec, … for a throughput, None for a ratio (an unknown metric: Seconds).
func (m Metric) Unit() Unit {
	d, ok := m.def()
	if !ok {
		return Seconds
	}
	return UnitOf(d)
}

// Label returns the name printed in messages ("TTFT", "ITL", …).
func (m Metric) Label() string {
	if d, ok := m.def(); ok {
		return d.VerdictLabel()
	}
	return string(m)
}

// Sample returns the metric's values over the successful requests (a metric a request
// does not have, such as ITL with one output token, is left out), derived by the
// metric's catalogue entry from [Request.Metric] (without the gaps, which no
// per-request metric reads), latencies in seconds.
func (m Metric) Sample(reqs []Request) Sample {
	s := Sample{Name: m.Label(), Unit: m.Unit()}
	d, known := m.def()
	if !known {
		return s
	}
	for i := range reqs {
		r := &reqs[i]
		if r.Err != "" {
			continue
		}
		q := r.values()
		v, ok := d.Value(&q)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if d.IsTime() {
			v /= 1e3
		}
		s.Values = append(s.Values, v)
		s.IDs = append(s.IDs, r.ID)
		if d.FromSend {
			s.Notes = append(s.Notes, "prompt "+Tokens.Format(float64(r.ISL))+" tok")
		} else {
			s.Notes = append(s.Notes, "")
		}
	}
	return s
}

// MetricNames lists the rule names of every per-request metric in package metric's
// catalogue, those with a short name first, for messages and help:
// "ttft, ttfo, …, time_to_second_token, … or …".
func MetricNames() string {
	var names, long []string
	for _, d := range metric.Catalogue() {
		switch {
		case d.Kind != metric.PerRequest:
		case d.Short != "":
			names = append(names, d.Short)
		default:
			long = append(long, d.Name)
		}
	}
	names = append(names, long...)
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Bound is a quantile bound on a per-request metric, written as data so a scenario file
// can hold it: {"metric": "ttft", "p": 0.99, "max_time": "200ms"} means TTFT p99 <= 200 ms.
// A latency metric (ttft, ttfo, itl, latency, …: unit ms in docs/metrics.md) is bounded by
// MaxTime and MinTime, durations (text such as "200ms" in JSON and YAML); a token or
// throughput metric (isl, osl, output_tps_per_user, …) by Max and Min, in its unit. A zero limit is no limit on that
// side; the other pair must be zero ([Bound.Err] says so). The same bound is the rule
// "ttft_p99<=200ms" ([ParseRule]).
type Bound struct {
	Metric  Metric        `json:"metric"`
	P       float64       `json:"p"`
	MaxTime time.Duration `json:"max_time,omitzero"`
	MinTime time.Duration `json:"min_time,omitzero"`
	Max     float64       `json:"max,omitzero"`
	Min     float64       `json:"min,omitzero"`
}

type boundJSON struct {
	Metric  Metric   `json:"metric"`
	P       float64  `json:"p"`
	MaxTime Duration `json:"max_time,omitzero"`
	MinTime Duration `json:"min_time,omitzero"`
	Max     float64  `json:"max,omitzero"`
	Min     float64  `json:"min,omitzero"`
}

// MarshalJSON writes the durations as text ("200ms").
func (b Bound) MarshalJSON() ([]byte, error) {
	return json.Marshal(boundJSON{b.Metric, b.P, Duration(b.MaxTime), Duration(b.MinTime), b.Max, b.Min})
}

// UnmarshalJSON reads the durations as text ("200ms"); a bare number is an error.
func (b *Bound) UnmarshalJSON(data []byte) error {
	var j boundJSON
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return err
	}
	*b = Bound{j.Metric, j.P, time.Duration(j.MaxTime), time.Duration(j.MinTime), j.Max, j.Min}
	return nil
}

// Err reports what is wrong with b as written (nil if nothing): an unknown metric, a
// level outside [0, 1], no limit, or the limit pair that does not fit the metric.
func (b Bound) Err() error {
	var errs []error
	_, known := b.Metric.def()
	if !known {
		errs = append(errs, fmt.Errorf("metric %q: want %s", b.Metric, MetricNames()))
	}
	if !(b.P >= 0 && b.P <= 1) {
		errs = append(errs, fmt.Errorf("p %v: want a quantile level in [0, 1]", b.P))
	}
	latency := b.Metric.Unit() == Seconds
	switch {
	case b.Max == 0 && b.Min == 0 && b.MaxTime == 0 && b.MinTime == 0:
		errs = append(errs, errors.New("set max or min (max_time or min_time for a latency)"))
	case !known:
	case latency && (b.Max != 0 || b.Min != 0):
		errs = append(errs, fmt.Errorf("%s is a latency: bound it with max_time/min_time as text such as \"200ms\" (MaxTime/MinTime in Go), not max/min", b.Metric))
	case !latency && (b.MaxTime != 0 || b.MinTime != 0):
		errs = append(errs, fmt.Errorf("%s is not a latency: bound it with max/min in %s, not max_time/min_time", b.Metric, b.Metric.Unit()))
	}
	return errors.Join(errs...)
}

// Rules returns the bound as rules: one per limit, the upper one first.
func (b Bound) Rules() []Rule {
	var rs []Rule
	hi, lo := b.Max, b.Min
	if b.Metric.Unit() == Seconds {
		hi, lo = b.MaxTime.Seconds(), b.MinTime.Seconds()
	}
	if hi != 0 {
		rs = append(rs, QuantileRule(b.Metric, b.P, true, hi))
	}
	if lo != 0 {
		rs = append(rs, QuantileRule(b.Metric, b.P, false, lo))
	}
	return rs
}

// Check evaluates the bound on reqs: an upper and a lower limit give one verdict each
// (upper first); a bound that [Bound.Err] rejects gives a failing verdict.
func (b Bound) Check(reqs []Request) []Verdict {
	if err := b.Err(); err != nil {
		return []Verdict{invalid("quantile", "%s %s: %v", b.Metric.Label(), pname(b.P), strings.ReplaceAll(err.Error(), "\n", "; "))}
	}
	var vs []Verdict
	for _, r := range b.Rules() {
		vs = append(vs, r.Check(reqs, record.Metrics{}, SLO{}, 0))
	}
	return vs
}
