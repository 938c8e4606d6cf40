package mockserver

import (
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/perfgate/perfgate/internal/kvcache"
	"github.com/perfgate/perfgate/record"
)

// latency histogram bucket upper bounds, seconds.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// KV-cache model behind the vLLM-named metrics.
const (
	// PrefixBlockTokens is the default block size of the mock's prefix cache, in
	// tokens (vLLM's default): a prompt hits the cache for each leading block of 16
	// token ids that an earlier prompt began with too. Config.PrefixCache sets another.
	PrefixBlockTokens = kvcache.DefaultBlockSize
	// KVCacheTokens is the mock's KV-cache capacity: vllm:kv_cache_usage_perc is the
	// tokens held by the requests in flight (prompt plus output cap) over this.
	KVCacheTokens = 1 << 18
)

// metrics holds the Prometheus metrics, served by /metrics through client_golang:
// perfgate's own (perfgate_mock_*) and vLLM's names (vllm:*), so a scraper written
// for vLLM can be tested against the mock.
type metrics struct {
	reg *prometheus.Registry

	requests  *prometheus.CounterVec // endpoint, status
	errors    *prometheus.CounterVec // kind
	tokensIn  *prometheus.CounterVec // endpoint
	tokensOut *prometheus.CounterVec // endpoint
	ttft      *prometheus.HistogramVec
	e2e       *prometheus.HistogramVec

	vPrompt, vGen        prometheus.Counter
	vTTFT, vE2E          prometheus.Histogram
	vQueries, vHits      prometheus.Counter
	vSuccess             *prometheus.CounterVec // finished_reason
	waiting, running     atomic.Int64
	kvTokens             atomic.Int64
	inflight, streams    func() int64
	prefix               *kvcache.Cache
	promptTok, genTokens atomic.Int64 // vLLM counters' totals, for tests
	// eps holds each endpoint's series resolved once (endpoint → *epSeries): a
	// WithLabelValues lookup hashes its labels, and observe made six per request.
	eps sync.Map
}

// epSeries is one endpoint's series of the per-request metrics, and the success
// counters of the common finish reasons.
type epSeries struct {
	ok             prometheus.Counter // requests{endpoint, "200"}
	in, out        prometheus.Counter
	ttft, e2e      prometheus.Observer
	length, stopOK prometheus.Counter // vllm:request_success_total{finished_reason}
}

func (m *metrics) series(endpoint string) *epSeries {
	if v, ok := m.eps.Load(endpoint); ok {
		return v.(*epSeries)
	}
	e := &epSeries{
		ok: m.requests.WithLabelValues(endpoint, "200"), in: m.tokensIn.WithLabelValues(endpoint), out: m.tokensOut.WithLabelValues(endpoint),
		ttft: m.ttft.WithLabelValues(endpoint), e2e: m.e2e.WithLabelValues(endpoint),
		length: m.vSuccess.WithLabelValues("length"), stopOK: m.vSuccess.WithLabelValues("stop"),
	}
	v, _ := m.eps.LoadOrStore(endpoint, e)
	return v.(*epSeries)
}

// newMetrics registers every metric; model is the model_name label of the vLLM
// metrics, inflight and streams read the server's gauges.
// prefix is the prefix cache's configuration (validated).
func newMetrics(model string, inflight, streams func() int64, prefix PrefixCache) *metrics {
	cache, err := kvcache.New(prefix.blockSize(), prefix.Blocks)
	if err != nil {
		panic("mockserver: prefix cache config not validated: " + err.Error())
	}
	m := &metrics{reg: prometheus.NewRegistry(), inflight: inflight, streams: streams, prefix: cache}
	cv := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	hv := func(name, help string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: latencyBuckets}, []string{"endpoint"})
		m.reg.MustRegister(h)
		return h
	}
	m.requests = cv("perfgate_mock_requests_total", "Requests answered, by endpoint and status.", "endpoint", "status")
	m.errors = cv("perfgate_mock_errors_total", "Rejected requests, requests to no API path (not recorded), injected faults and client disconnects, by kind.", "kind")
	m.tokensIn = cv("perfgate_mock_prompt_tokens_total", "Input tokens received.", "endpoint")
	m.tokensOut = cv("perfgate_mock_generation_tokens_total", "Output tokens sent.", "endpoint")
	m.ttft = hv("perfgate_mock_time_to_first_token_seconds", "Server-side time to first token.")
	m.e2e = hv("perfgate_mock_request_duration_seconds", "Server-side request duration (receive to last byte).")
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "perfgate_mock_requests_in_flight", Help: "Requests being served."}, func() float64 { return float64(m.inflight()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "perfgate_mock_streams_open", Help: "Streams open."}, func() float64 { return float64(m.streams()) }),
	)

	vl := prometheus.Labels{"model_name": model}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: vl})
		m.reg.MustRegister(c)
		return c
	}
	hist := func(name, help string) prometheus.Histogram {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: latencyBuckets, ConstLabels: vl})
		m.reg.MustRegister(h)
		return h
	}
	gauge := func(name, help string, f func() float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: vl}, f))
	}
	m.vPrompt = counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.")
	m.vGen = counter("vllm:generation_tokens_total", "Number of generation tokens processed.")
	m.vQueries = counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in tokens.")
	m.vHits = counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in tokens.")
	m.vTTFT = hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.")
	m.vE2E = hist("vllm:e2e_request_latency_seconds", "Histogram of end-to-end request latency in seconds.")
	m.vSuccess = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vllm:request_success_total", Help: "Count of successfully processed requests.", ConstLabels: vl}, []string{"finished_reason"})
	m.reg.MustRegister(m.vSuccess)
	gauge("vllm:num_requests_running", "Requests past their first token, being generated.", func() float64 { return float64(m.running.Load()) })
	gauge("vllm:num_requests_waiting", "Generation requests admitted whose first token is not out yet.", func() float64 { return float64(m.waiting.Load()) })
	gauge("vllm:kv_cache_usage_perc", "KV-cache usage: tokens held by requests in flight over the capacity (1 = 100%).", func() float64 {
		return min(1, float64(m.kvTokens.Load())/KVCacheTokens)
	})
	return m
}

// admit accounts for a generation request whose prompt (ids) was parsed: it
// reserves KV-cache tokens for the prompt and the output cap, and counts the request
// as waiting until its first token. release undoes it.
func (m *metrics) admit(c *call, ids []int, maxOut int) {
	c.kv = int64(len(ids) + max(maxOut, 0))
	c.admitted = true
	m.kvTokens.Add(c.kv)
	m.waiting.Add(1)
}

// prefixLookup looks the prompt ids up in the prefix cache and caches its blocks,
// counts vLLM's prefix-cache queries (the prompt tokens) and hits (the cached ones),
// and returns the cached tokens; 0 if lose (an injected cache fault: the blocks
// are still cached).
func (m *metrics) prefixLookup(ids []int, lose bool) int {
	cached := m.prefix.Access(ids)
	if lose {
		cached = 0
	}
	m.vQueries.Add(float64(len(ids)))
	if cached > 0 {
		m.vHits.Add(float64(cached))
	}
	return cached
}

// firstToken moves an admitted request from waiting to running.
func (m *metrics) firstToken(c *call) {
	if c.admitted && !c.started {
		c.started = true
		m.waiting.Add(-1)
		m.running.Add(1)
	}
}

func (m *metrics) release(c *call) {
	if !c.admitted {
		return
	}
	c.admitted = false
	m.kvTokens.Add(-c.kv)
	if c.started {
		m.running.Add(-1)
	} else {
		m.waiting.Add(-1)
	}
}

// unrouted counts a request to no API path, by reason (not_found,
// method_not_allowed): an error, not a request of the workload.
func (m *metrics) unrouted(reason string) { m.errors.WithLabelValues(reason).Inc() }

// observe counts one finished request.
func (m *metrics) observe(r *record.Server, end time.Time) {
	ep := m.series(r.Endpoint)
	if r.Status == 200 {
		ep.ok.Inc()
	} else {
		m.requests.WithLabelValues(r.Endpoint, strconv.Itoa(r.Status)).Inc()
	}
	switch {
	case r.Rejected != "":
		m.errors.WithLabelValues(r.Rejected).Inc()
	case r.Fault != "":
		m.errors.WithLabelValues(r.Fault).Inc()
	}
	if r.ClientGone {
		m.errors.WithLabelValues("client_gone").Inc()
	}
	if r.Rejected != "" {
		return
	}
	ep.in.Add(float64(r.ISL))
	ep.out.Add(float64(r.OSL))
	m.vPrompt.Add(float64(r.ISL))
	m.vGen.Add(float64(r.OSL))
	m.promptTok.Add(int64(r.ISL))
	m.genTokens.Add(int64(r.OSL))
	if r.FirstTokenNS != 0 {
		s := float64(r.FirstTokenNS-r.RecvNS) / 1e9
		ep.ttft.Observe(s)
		m.vTTFT.Observe(s)
	}
	e2e := float64(end.UnixNano()-r.RecvNS) / 1e9
	ep.e2e.Observe(e2e)
	m.vE2E.Observe(e2e)
	if r.Status >= 200 && r.Status < 300 && r.FinishReason != "" {
		switch r.FinishReason {
		case "length":
			ep.length.Inc()
		case "stop":
			ep.stopOK.Inc()
		default:
			m.vSuccess.WithLabelValues(r.FinishReason).Inc()
		}
	}
}

// write renders the Prometheus text exposition format.
func (m *metrics) write(w io.Writer) error {
	fams, err := m.reg.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			return err
		}
	}
	return nil
}
