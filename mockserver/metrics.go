package mockserver

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/perfgate/perfgate/record"
)

// latency histogram bucket upper bounds, seconds.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

type histo struct {
	counts []uint64 // len(latencyBuckets)+1 (last = +Inf)
	sum    float64
	n      uint64
}

func (h *histo) observe(sec float64) {
	if h.counts == nil {
		h.counts = make([]uint64, len(latencyBuckets)+1)
	}
	i, _ := slices.BinarySearch(latencyBuckets, sec)
	h.counts[i]++
	h.sum += sec
	h.n++
}

type reqKey struct {
	endpoint string
	status   int
}

// metrics holds the Prometheus counters; updated once per finished request.
type metrics struct {
	mu        sync.Mutex
	requests  map[reqKey]uint64
	errors    map[string]uint64 // by kind (rejection reason or fault)
	tokensIn  map[string]uint64
	tokensOut map[string]uint64
	ttft      map[string]*histo
	e2e       map[string]*histo
}

func newMetrics() *metrics {
	return &metrics{requests: map[reqKey]uint64{}, errors: map[string]uint64{}, tokensIn: map[string]uint64{},
		tokensOut: map[string]uint64{}, ttft: map[string]*histo{}, e2e: map[string]*histo{}}
}

func (m *metrics) observe(r *record.Server, end time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[reqKey{r.Endpoint, r.Status}]++
	switch {
	case r.Rejected != "":
		m.errors[r.Rejected]++
	case r.Fault != "":
		m.errors[r.Fault]++
	}
	if r.ClientGone {
		m.errors["client_gone"]++
	}
	if r.Rejected != "" {
		return
	}
	m.tokensIn[r.Endpoint] += uint64(r.ISL)
	m.tokensOut[r.Endpoint] += uint64(r.OSL)
	if r.FirstTokenNS != 0 {
		h := m.ttft[r.Endpoint]
		if h == nil {
			h = &histo{}
			m.ttft[r.Endpoint] = h
		}
		h.observe(float64(r.FirstTokenNS-r.RecvNS) / 1e9)
	}
	h := m.e2e[r.Endpoint]
	if h == nil {
		h = &histo{}
		m.e2e[r.Endpoint] = h
	}
	h.observe(float64(end.UnixNano()-r.RecvNS) / 1e9)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// write renders the Prometheus text exposition format.
func (m *metrics) write(w io.Writer, inflight, streams int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintf(w, "# HELP perfgate_mock_requests_total Requests answered, by endpoint and status.\n# TYPE perfgate_mock_requests_total counter\n")
	keys := make([]reqKey, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b reqKey) int {
		if a.endpoint != b.endpoint {
			if a.endpoint < b.endpoint {
				return -1
			}
			return 1
		}
		return a.status - b.status
	})
	for _, k := range keys {
		fmt.Fprintf(w, "perfgate_mock_requests_total{endpoint=%q,status=\"%d\"} %d\n", k.endpoint, k.status, m.requests[k])
	}
	fmt.Fprintf(w, "# HELP perfgate_mock_errors_total Rejected requests, injected faults and client disconnects, by kind.\n# TYPE perfgate_mock_errors_total counter\n")
	for _, k := range sortedKeys(m.errors) {
		fmt.Fprintf(w, "perfgate_mock_errors_total{kind=%q} %d\n", k, m.errors[k])
	}
	fmt.Fprintf(w, "# HELP perfgate_mock_prompt_tokens_total Input tokens received.\n# TYPE perfgate_mock_prompt_tokens_total counter\n")
	for _, k := range sortedKeys(m.tokensIn) {
		fmt.Fprintf(w, "perfgate_mock_prompt_tokens_total{endpoint=%q} %d\n", k, m.tokensIn[k])
	}
	fmt.Fprintf(w, "# HELP perfgate_mock_generation_tokens_total Output tokens sent.\n# TYPE perfgate_mock_generation_tokens_total counter\n")
	for _, k := range sortedKeys(m.tokensOut) {
		fmt.Fprintf(w, "perfgate_mock_generation_tokens_total{endpoint=%q} %d\n", k, m.tokensOut[k])
	}
	fmt.Fprintf(w, "# HELP perfgate_mock_requests_in_flight Requests being served.\n# TYPE perfgate_mock_requests_in_flight gauge\nperfgate_mock_requests_in_flight %d\n", inflight)
	fmt.Fprintf(w, "# HELP perfgate_mock_streams_open Streams open.\n# TYPE perfgate_mock_streams_open gauge\nperfgate_mock_streams_open %d\n", streams)
	writeHist := func(name, help string, hs map[string]*histo) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
		for _, ep := range sortedKeys(hs) {
			h := hs[ep]
			cum := uint64(0)
			for i, le := range latencyBuckets {
				cum += h.counts[i]
				fmt.Fprintf(w, "%s_bucket{endpoint=%q,le=%q} %d\n", name, ep, strconv.FormatFloat(le, 'g', -1, 64), cum)
			}
			cum += h.counts[len(latencyBuckets)]
			fmt.Fprintf(w, "%s_bucket{endpoint=%q,le=\"+Inf\"} %d\n", name, ep, cum)
			fmt.Fprintf(w, "%s_sum{endpoint=%q} %g\n%s_count{endpoint=%q} %d\n", name, ep, h.sum, name, ep, h.n)
		}
	}
	writeHist("perfgate_mock_time_to_first_token_seconds", "Server-side time to first token.", m.ttft)
	writeHist("perfgate_mock_request_duration_seconds", "Server-side request duration (receive to last byte).", m.e2e)
}
