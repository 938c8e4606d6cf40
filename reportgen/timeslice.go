package reportgen

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/record"
)

// MaxTimeSlices is the most slices a run's timeslice export holds: a slice duration
// that would cut a run finer is refused.
const MaxTimeSlices = 10_000

// TimesliceFiles returns the names of AIPerf's timeslice exports with prefix ("" =
// the default): PREFIX_aiperf_timeslices.json and PREFIX_aiperf_timeslices.csv.
func TimesliceFiles(prefix string) (json, csv string) {
	if prefix == "" {
		prefix = DefaultExportPrefix
	}
	return prefix + "_aiperf_timeslices.json", prefix + "_aiperf_timeslices.csv"
}

// TimeSlices is the one definition of a run's time slices, which the timeslice exports
// and the HTML report's charts over time share: back-to-back windows of Width from
// Start, the first measured request's send (the benchmark's start, as AIPerf slices
// it), N of them, enough to reach the last measured request's completion. A request
// belongs to the slice its send time falls in (half-open: [Start+k·Width,
// Start+(k+1)·Width)); the last slice may be partial, ending at End.
type TimeSlices struct {
	Start, End, Width time.Duration
	N                 int
}

// NewTimeSlices returns the slices of width over [start, end]: ceil((end-start)/width)
// of them, at least one. width must be positive.
func NewTimeSlices(start, end, width time.Duration) TimeSlices {
	n := 1
	if end > start {
		n = int((end - start + width - 1) / width)
	}
	return TimeSlices{Start: start, End: max(end, start), Width: width, N: n}
}

// Index returns the slice t falls in: floor((t-Start)/Width), negative before Start
// (a warm-up request) and N or more after the last slice.
func (s TimeSlices) Index(t time.Duration) int {
	d := t - s.Start
	k := int(d / s.Width)
	if d < 0 && d%s.Width != 0 {
		k--
	}
	return k
}

// Bounds returns slice k's start and end, relative to Start; the last slice ends at
// End when that comes first.
func (s TimeSlices) Bounds(k int) (from, to time.Duration) {
	return time.Duration(k) * s.Width, min(time.Duration(k+1)*s.Width, max(s.End-s.Start, time.Duration(k)*s.Width))
}

// measuredSpan returns the first measured send and the last measured completion, and
// whether any request was measured.
func measuredSpan(each func(func(*record.Client) error) error) (start, end time.Duration, ok bool) {
	start = -1
	_ = each(func(r *record.Client) error {
		if r.Warmup {
			return nil
		}
		if start < 0 || r.Sent < start {
			start = r.Sent
		}
		end = max(end, r.Done)
		return nil
	})
	return start, end, start >= 0
}

// SliceMetrics cuts a run's measured requests into slices of width and summarises
// each slice's requests as the run's are ([metric.Accumulator] under opt): the
// per-request metrics' statistics of the requests sent in it, the failed ones counted.
// It returns the slices and one summary per slice, and an error when width is not
// positive or would give more than [MaxTimeSlices]. No measured request: no slices.
func SliceMetrics(each func(func(*record.Client) error) error, width time.Duration, opt metric.Options) (TimeSlices, []record.Metrics, error) {
	if width <= 0 {
		return TimeSlices{}, nil, fmt.Errorf("reportgen: time slice of %v: want a positive duration", width)
	}
	start, end, ok := measuredSpan(each)
	if !ok {
		return TimeSlices{}, nil, nil
	}
	ts := NewTimeSlices(start, end, width)
	if ts.N > MaxTimeSlices {
		return ts, nil, fmt.Errorf("reportgen: time slices of %v cut this %v run into %d slices, more than %d: choose a longer slice duration", width, (end - start).Round(time.Millisecond), ts.N, MaxTimeSlices)
	}
	accs := make([]*metric.Accumulator, ts.N)
	err := each(func(r *record.Client) error {
		if r.Warmup {
			return nil
		}
		k := min(max(ts.Index(r.Sent), 0), ts.N-1)
		if accs[k] == nil {
			accs[k] = metric.NewAccumulator(opt)
		}
		accs[k].Add(r)
		return nil
	})
	if err != nil {
		return ts, nil, err
	}
	out := make([]record.Metrics, ts.N)
	for k, a := range accs {
		if a != nil {
			out[k] = a.Metrics()
		}
	}
	return ts, out, nil
}

// TimesliceRates are the single values each slice carries beside its metrics'
// statistics, as AIPerf's timeslices do: the request and output-token throughput of
// the slice's requests, by the run's own definitions (the catalogue's
// request_throughput and output_token_throughput over the requests sent in the slice:
// successful requests, and their OSL, over the span from the first one's send to the
// last one's completion).
var TimesliceRates = []string{record.MetricRequestThroughput, record.MetricOutputTokenThroughput}

// timesliceStats are the statistics each metric of a slice gives, in the CSV's order
// (AIPerf's): the mean, the extremes, the percentiles and the standard deviation.
var timesliceStats = csvStatCols

// statValue returns stat's value of s by its column name.
func statValue(s record.Stat, stat string) float64 {
	switch stat {
	case "avg":
		return s.Avg
	case "min":
		return s.Min
	case "max":
		return s.Max
	case "std":
		return s.Std
	}
	for i, p := range []string{"p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"} {
		if p == stat {
			v, _ := s.Quantile(record.StatPercentiles[i])
			return v
		}
	}
	return math.NaN()
}

// WriteTimeslicesCSV writes PREFIX_aiperf_timeslices.csv in AIPerf's tidy layout: the
// header Timeslice,Metric,Unit,Stat,Value, then one row per slice, metric and
// statistic (slices in order; metrics in the report's order; statistics avg, min,
// max, p1 … p99, std), the metric by its header ("Time to First Token"), the unit as
// AIPerf spells it, and the value with two decimals; then the slice's
// [TimesliceRates], each one row with the statistic "avg" (AIPerf's for a single
// value). A slice with no request has no rows.
func WriteTimeslicesCSV(w io.Writer, slices []record.Metrics) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"Timeslice", "Metric", "Unit", "Stat", "Value"})
	for k, m := range slices {
		for _, n := range statNames(m) {
			s := m.Stats[n]
			for _, stat := range timesliceStats {
				v := statValue(s, stat)
				if math.IsNaN(v) || math.IsInf(v, 0) {
					continue
				}
				_ = cw.Write([]string{strconv.Itoa(k), info(n).Header, aiperfUnit(s.Unit), stat, strconv.FormatFloat(v, 'f', 2, 64)})
			}
		}
		for _, n := range TimesliceRates {
			if s, ok := m.Scalars[n]; ok && !math.IsNaN(s.Value) && !math.IsInf(s.Value, 0) {
				_ = cw.Write([]string{strconv.Itoa(k), info(n).Header, aiperfUnit(s.Unit), "avg", strconv.FormatFloat(s.Value, 'f', 2, 64)})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteTimeslicesJSON writes PREFIX_aiperf_timeslices.json as AIPerf does: an object
// whose "timeslices" lists each slice in order, as an object with its
// "timeslice_index" and, keyed by metric tag, each metric's unit and statistics and
// the slice's [TimesliceRates] as {unit, avg} (as in profile_export_aiperf.json); then "input_config" (the manifest's Config), and under
// "perfgate" the slice duration and each slice's bounds in seconds from the first
// measured request, with its successful and failed requests.
func WriteTimeslicesJSON(w io.Writer, run Run, ts TimeSlices, slices []record.Metrics) error {
	type bounds struct {
		Start    float64 `json:"start_s"`
		End      float64 `json:"end_s"`
		Requests int     `json:"requests"`
		Errors   int     `json:"errors"`
	}
	list := make([]orderedJSON, len(slices))
	var bs []bounds
	for k, m := range slices {
		list[k].set("timeslice_index", k)
		for _, n := range statNames(m) {
			list[k].set(info(n).Tag, statJSON(m.Stats[n]))
		}
		for _, n := range TimesliceRates {
			if s, ok := m.Scalars[n]; ok && !math.IsNaN(s.Value) && !math.IsInf(s.Value, 0) {
				list[k].set(info(n).Tag, scalarJSON(s))
			}
		}
		from, to := ts.Bounds(k)
		bs = append(bs, bounds{Start: from.Seconds(), End: to.Seconds(), Requests: int(m.Value(record.MetricRequestCount)), Errors: int(m.Value(record.MetricErrorCount))})
	}
	var o orderedJSON
	o.set("timeslices", list)
	if run.Manifest.Config != nil {
		o.set("input_config", run.Manifest.Config)
	}
	o.set("perfgate", struct {
		SliceDuration float64  `json:"slice_duration_s"`
		Slices        []bounds `json:"slices"`
		Assignment    string   `json:"assignment"`
		Quantiles     string   `json:"quantile_method"`
	}{ts.Width.Seconds(), bs, "by send time, from the first measured request", "linear (numpy default)"})
	return writeJSON(w, o)
}
