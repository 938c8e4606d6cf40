package check

import (
	"math"
	"time"

	"github.com/perfgate/perfgate/metric"
)

// Request is what the checks need to know about one measured request. Package perftest
// and cmd/perfgate fill it from the client recording (and the mock server's recording).
type Request struct {
	ID        string    // request id, printed in "worst" lists
	Err       string    // non-empty if the request failed
	TTFT      float64   // time to first token, seconds; 0 when not measured
	TTFO      float64   // time to first output (non-reasoning) token, seconds; 0 when not measured
	Latency   float64   // request latency (send to last byte), seconds
	Gaps      []float64 // inter-token (inter-chunk) gaps, seconds
	ISL       int       // input tokens the client counted
	ServerISL int       // input tokens the server counted (mock recording or usage.prompt_tokens); -1 = unknown
	OSL       int       // output tokens
	Turn      int       // 0-based turn within a conversation
	Model     string    // the model it was sent to (a rule scoped {model=NAME} checks its own); "" = unknown
	Class     string    // its traffic class (a rule scoped {class=NAME} checks its own); "" = none
	// Overhead is how many more input tokens the server is expected to count than the
	// client's ISL: for chat requests, the chat template's tokens around the message
	// contents (record.Client.ISLTemplate - ISL, exact per request). TokenizerMatch
	// compares ServerISL with ISL + Overhead.
	Overhead int
	// OverheadUnknown marks a request whose input a server renders with its chat
	// template but whose client could not render it (record.ISLTemplateUnknown: a
	// failed render, an unreadable payload), so ISL is the message contents only;
	// TokenizerMatch says so.
	OverheadUnknown bool
	// Media is the part of Overhead that is the request's image and audio tokens
	// (record.Client.ImageTokens + AudioTokens), counted by the server's rule.
	Media int
	// Values are the request's derived values (without gaps) when it was made from a
	// recording by [NewRequest]; nil for a Request written by hand, whose values
	// [Request.Metric] derives from the fields above.
	Values *metric.Request
}

// ITL returns the request's inter-token latency in seconds, by [metric.SLO.ITLValue]:
// for p = 0 AIPerf's per-request ITL, (Latency − TTFT)/(OSL − 1) ([metric.Request.ITL]),
// for p in (0, 1] the p-quantile of its inter-chunk gaps; 0 when undefined.
func (r Request) ITL(p float64) float64 {
	m := r.Metric()
	v, ok := SLO{ITLPercentile: p}.ITLValue(&m)
	if !ok {
		return 0
	}
	return v / 1e3
}

// Metric returns r's values in package metric's form, which [SLO], [Request.ITL] and
// every [Metric] evaluate: Values with Gaps as its inter-chunk gaps, or for a Request
// without Values the fields above, durations rounded to the nanosecond (so a Request
// from [FromClient] gives back the recording's exact times).
func (r Request) Metric() metric.Request {
	m := r.values()
	for _, g := range r.Gaps {
		m.ICL = append(m.ICL, seconds(g))
	}
	return m
}

// values is [Request.Metric] without the gaps, which no per-request metric reads
// ([Metric.Sample] calls it once a request).
func (r *Request) values() metric.Request {
	if r.Values != nil {
		m := *r.Values
		m.OK, m.ICL = r.Err == "", nil
		return m
	}
	return metric.Request{
		OK: r.Err == "", Stream: true, Latency: seconds(r.Latency), ISL: r.ISL, OSL: r.OSL, UsageOSL: -1,
		TTFT: seconds(r.TTFT), HasTTFT: r.TTFT > 0, TTFO: seconds(r.TTFO), HasTTFO: r.TTFO > 0,
	}
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// SLO is the per-request service-level objective goodput counts against: the one
// goodput definition, [metric.SLO] (a request is good when it succeeded and meets every
// non-zero bound; durations read and written as "200ms").
type SLO = metric.SLO

// Duration is a time.Duration that reads and writes JSON and YAML as a string such as
// "1.5s" ([metric.Duration]).
type Duration = metric.Duration

// DurationForm says what a duration in a file must look like ([metric.DurationForm]).
const DurationForm = metric.DurationForm
