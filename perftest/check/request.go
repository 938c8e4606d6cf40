package check

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Request is what the checks need to know about one measured request. Package perftest
// and cmd/perfgate fill it from the client recording (and the mock server's recording).
type Request struct {
	ID        string    // request id, printed in "worst" lists
	Err       string    // non-empty if the request failed
	TTFT      float64   // time to first token, seconds; 0 when not measured
	Latency   float64   // request latency (send to last byte), seconds
	Gaps      []float64 // inter-token (inter-chunk) gaps, seconds
	ISL       int       // input tokens the client counted
	ServerISL int       // input tokens the server counted (mock recording or usage.prompt_tokens); -1 = unknown
	OSL       int       // output tokens
	Turn      int       // 0-based turn within a conversation
	// Overhead is how many more input tokens the server is expected to count than the
	// client's ISL: for chat requests, the chat template's tokens around the message
	// contents (record.Client.ISLTemplate - ISL, exact per request). TokenizerMatch
	// compares ServerISL with ISL + Overhead.
	Overhead int
	// OverheadUnknown marks a chat request whose recording has no rendered-template
	// count (record.Client.ISLTemplate: recorded before it existed, or a custom
	// payload), so ISL is the message contents only; TokenizerMatch says so.
	OverheadUnknown bool
}

// ITL returns the request's inter-token latency in seconds: the p-quantile of its gaps,
// or for p = 0 their mean. Without gaps it falls back to (Latency-TTFT)/(OSL-1), AIPerf's
// per-request definition, and to 0 when that is undefined.
func (r Request) ITL(p float64) float64 {
	if len(r.Gaps) > 0 {
		if p == 0 {
			s := 0.0
			for _, g := range r.Gaps {
				s += g
			}
			return s / float64(len(r.Gaps))
		}
		return quantile(r.Gaps, p)
	}
	if r.OSL > 1 && r.Latency > r.TTFT {
		return (r.Latency - r.TTFT) / float64(r.OSL-1)
	}
	return 0
}

// SLO is a per-request service-level objective: a request is good when it succeeded and
// meets every non-zero bound. The zero SLO counts every successful request as good.
//
// In JSON the durations are strings such as "200ms" (numbers are read as nanoseconds).
type SLO struct {
	TTFT    time.Duration // maximum time to first token; 0 = no bound
	ITL     time.Duration // maximum inter-token latency of the request; 0 = no bound
	Latency time.Duration // maximum request latency; 0 = no bound
	// ITLPercentile picks which of a request's inter-token gaps is compared with ITL:
	// 0 means their mean (AIPerf's and vLLM's per-request ITL), 0.99 their p99.
	ITLPercentile float64
}

// String prints the SLO as written, e.g. "TTFT <= 200ms, ITL(mean) <= 20ms".
func (s SLO) String() string {
	var parts []string
	if s.TTFT > 0 {
		parts = append(parts, "TTFT <= "+s.TTFT.String())
	}
	if s.ITL > 0 {
		which := "mean"
		if s.ITLPercentile > 0 {
			which = pname(s.ITLPercentile)
		}
		parts = append(parts, fmt.Sprintf("ITL(%s) <= %s", which, s.ITL))
	}
	if s.Latency > 0 {
		parts = append(parts, "latency <= "+s.Latency.String())
	}
	if len(parts) == 0 {
		return "no error"
	}
	return strings.Join(parts, ", ")
}

// IsZero reports whether s has no bounds.
func (s SLO) IsZero() bool { return s == SLO{} }

// Miss returns which bounds r misses ("error", "TTFT", "ITL", "latency"); nil if r is good.
func (s SLO) Miss(r Request) []string {
	if r.Err != "" {
		return []string{"error"}
	}
	var m []string
	if s.TTFT > 0 && r.TTFT > s.TTFT.Seconds() {
		m = append(m, "TTFT")
	}
	if s.ITL > 0 && r.ITL(s.ITLPercentile) > s.ITL.Seconds() {
		m = append(m, "ITL")
	}
	if s.Latency > 0 && r.Latency > s.Latency.Seconds() {
		m = append(m, "latency")
	}
	return m
}

type sloJSON struct {
	TTFT          Duration `json:"ttft,omitzero"`
	ITL           Duration `json:"itl,omitzero"`
	Latency       Duration `json:"latency,omitzero"`
	ITLPercentile float64  `json:"itl_percentile,omitzero"`
}

// MarshalJSON writes the durations as strings ("200ms").
func (s SLO) MarshalJSON() ([]byte, error) {
	return json.Marshal(sloJSON{Duration(s.TTFT), Duration(s.ITL), Duration(s.Latency), s.ITLPercentile})
}

// UnmarshalJSON reads durations written as strings ("200ms") or as nanoseconds.
func (s *SLO) UnmarshalJSON(b []byte) error {
	var j sloJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = SLO{time.Duration(j.TTFT), time.Duration(j.ITL), time.Duration(j.Latency), j.ITLPercentile}
	return nil
}

// Duration is a time.Duration that reads and writes JSON and YAML as a string such as
// "1.5s" (and also reads a number of nanoseconds).
type Duration time.Duration

// MarshalText writes d as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText parses a time.ParseDuration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	*d = Duration(v)
	return nil
}

// UnmarshalJSON accepts a string ("200ms") or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		return d.UnmarshalText([]byte(s))
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("check: duration %s: want a string like \"200ms\" or nanoseconds", b)
	}
	*d = Duration(n)
	return nil
}
