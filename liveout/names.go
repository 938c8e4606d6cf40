package liveout

// Series is one metric the outputs push: its Prometheus name (remote-write), its
// OpenTelemetry name and unit (OTLP), its type and what it counts. Every series
// carries the labels scenario and run; the per-request ones model and endpoint too, and
// class in a run of traffic classes.
type Series struct {
	Prom, OTel, Unit, Type, Help string
	// PerModel: labelled with model, endpoint (the request's endpoint kind) and, in a
	// run of traffic classes, class.
	PerModel bool
}

// Series types.
const (
	Counter   = "counter"
	Gauge     = "gauge"
	Histogram = "histogram"
)

// The series, in push order (docs/outputs.md lists them from here).
var (
	SeriesRequests     = Series{"perfgate_requests_total", "perfgate.requests", "{request}", Counter, "Measured requests finished, by outcome (label outcome: ok or error).", true}
	SeriesInputTokens  = Series{"perfgate_input_tokens_total", "perfgate.input_tokens", "{token}", Counter, "Input tokens (ISL) of the successful measured requests.", true}
	SeriesOutputTokens = Series{"perfgate_output_tokens_total", "perfgate.output_tokens", "{token}", Counter, "Output tokens (OSL) of the successful measured requests.", true}
	SeriesTTFT         = Series{"perfgate_ttft_seconds", "perfgate.ttft", "s", Histogram, "Time to first token of the successful streamed requests.", true}
	SeriesITL          = Series{"perfgate_itl_seconds", "perfgate.itl", "s", Histogram, "Inter-token latency per request, (latency − TTFT) / (OSL − 1).", true}
	SeriesLatency      = Series{"perfgate_request_latency_seconds", "perfgate.request_latency", "s", Histogram, "Request latency (last byte − sent) of the successful requests.", true}
	SeriesRequestRate  = Series{"perfgate_request_rate", "perfgate.request_rate", "{request}/s", Gauge, "Measured requests finished a second over the last interval.", false}
	SeriesOutputRate   = Series{"perfgate_output_token_rate", "perfgate.output_token_rate", "{token}/s", Gauge, "Output tokens a second over the last interval.", false}
	SeriesWarmup       = Series{"perfgate_warmup_requests_total", "perfgate.warmup_requests", "{request}", Counter, "Warm-up requests finished (left out of every other series).", false}
	SeriesDropped      = Series{"perfgate_live_dropped_records_total", "perfgate.live.dropped_records", "{request}", Counter, "Finished requests the live output dropped because its buffer was full (the run's recording has them).", false}
)

// AllSeries lists every series.
var AllSeries = []Series{SeriesRequests, SeriesInputTokens, SeriesOutputTokens, SeriesTTFT, SeriesITL, SeriesLatency,
	SeriesRequestRate, SeriesOutputRate, SeriesWarmup, SeriesDropped}
