package metric

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/record"
)

// SLO is the per-request service-level objective goodput counts against: a request is
// good when it succeeded and meets every non-zero bound. The zero SLO counts every
// successful request as good. It is perfgate's one goodput definition: loadgen's
// goodput scalar and perftest/check's Goodput verdict both call [SLO.Miss].
//
// In JSON and YAML the durations are Go duration text such as "200ms"; a bare number
// is an error (it has no unit).
type SLO struct {
	TTFT    time.Duration `json:"ttft,omitzero"`    // maximum time to first token; 0 = no bound
	ITL     time.Duration `json:"itl,omitzero"`     // maximum inter-token latency of the request; 0 = no bound
	Latency time.Duration `json:"latency,omitzero"` // maximum request latency; 0 = no bound
	// ITLPercentile picks what is compared with ITL: 0 means the request's ITL
	// ([Request.ITL], AIPerf's (latency − TTFT)/(OSL − 1)); p in (0, 1] the p-quantile
	// ([Quantile]) of its inter-chunk gaps ([Request.ICL]).
	ITLPercentile float64 `json:"itl_percentile,omitzero"`
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
			which = "p" + strconv.FormatFloat(s.ITLPercentile*100, 'f', -1, 64)
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

// ITLValue returns the value of q that s compares with its ITL bound, in ms (see
// [SLO.ITLPercentile]), and whether it is defined.
func (s SLO) ITLValue(q *Request) (float64, bool) {
	if s.ITLPercentile > 0 {
		if len(q.ICL) == 0 {
			return 0, false
		}
		xs := make([]float64, len(q.ICL))
		for i, g := range q.ICL {
			xs[i] = MS(g)
		}
		return Quantile(xs, s.ITLPercentile), true
	}
	return q.ITL()
}

// Miss returns which bounds q misses ("error", "TTFT", "ITL", "latency"); nil if q is
// good. A bound on a value the request did not measure (TTFT of a non-streamed
// request, ITL with OSL < 2) is missed.
func (s SLO) Miss(q *Request) []string {
	if !q.OK {
		return []string{"error"}
	}
	var m []string
	if s.TTFT > 0 && (!q.HasTTFT || q.TTFT > s.TTFT) {
		m = append(m, "TTFT")
	}
	if s.ITL > 0 {
		if v, ok := s.ITLValue(q); !ok || v > MS(s.ITL) {
			m = append(m, "ITL")
		}
	}
	if s.Latency > 0 && q.Latency > s.Latency {
		m = append(m, "latency")
	}
	return m
}

// Good reports whether q meets s (Miss is empty).
func (s SLO) Good(q *Request) bool { return len(s.Miss(q)) == 0 }

// AIPerf returns the SLO in AIPerf's --goodput form, metric name → ms, as metrics.json
// records it; nil for the zero SLO.
func (s SLO) AIPerf() map[string]float64 {
	m := map[string]float64{}
	if s.TTFT > 0 {
		m[record.MetricTTFT] = MS(s.TTFT)
	}
	if s.ITL > 0 {
		m[record.MetricITL] = MS(s.ITL)
	}
	if s.Latency > 0 {
		m[record.MetricRequestLatency] = MS(s.Latency)
	}
	if len(m) == 0 {
		return nil
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

// UnmarshalJSON reads durations written as text ("200ms"); unknown fields are errors.
func (s *SLO) UnmarshalJSON(b []byte) error {
	var j sloJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return err
	}
	*s = SLO{time.Duration(j.TTFT), time.Duration(j.ITL), time.Duration(j.Latency), j.ITLPercentile}
	return nil
}

// Duration is a time.Duration read and written as Go duration text ("1.5s"):
// [record.Duration], perfgate's one duration type in files.
type Duration = record.Duration

// DurationForm says what a duration in a file must look like ([record.DurationForm]).
const DurationForm = record.DurationForm
