package scenario

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/gate"
	"github.com/perfgate/perfgate/perftest/validity"
	"github.com/perfgate/perfgate/servermetrics"
	"github.com/perfgate/perfgate/serverproc"
)

// Defaults applied by run.Run to zero fields.
const (
	DefaultName      = "scenario"
	DefaultTokenizer = "gpt2"
	// DefaultRequests is the request count when Requests, Duration, InputFile and RateSeries are all unset.
	DefaultRequests = 100
)

// Scenario describes one benchmark run. It is plain data: printable with %+v, readable
// from JSON or YAML (durations as "30s"), the same type `perfgate profile` fills from
// a file. Every field's zero value is documented; the zero Scenario is a valid run:
// 100 chat requests, one at a time, 128-token prompts in the gpt2 tokenizer, streamed
// from the in-process mock server.
//
// A Scenario is a name, a tokenizer, the load generator's [loadgen.Config] inline
// (embedded: its fields are the scenario's, flat in files — "concurrency", "isl",
// "timeout" — and in Go — sc.Concurrency, sc.ISL), the mock's configuration, the
// objectives and the server-metrics scrape. Each load-generator setting has one
// field, one default and one validation, loadgen's:
//
//	scenario.Scenario{
//		Name: "chat",
//		Config: loadgen.Config{
//			Workload: loadgen.Workload{ISL: distribution.MustSpec("normal:512,64")},
//			Load:     loadgen.Load{Concurrency: 8},
//			Stop:     loadgen.Stop{Requests: 200},
//		},
//	}
//
// Empty URLs start the in-process mock server (configured by Mock) on 127.0.0.1 at a
// free port, and stop it when the run ends. Renamed from earlier versions: the URL
// (Endpoint, file "endpoint") is URLs ("endpoint: URL" is still read as "urls:
// [URL]"), the API kind (EndpointType) is API (file "endpoint_type", unchanged),
// UseServerTokenCount is UsageOSL and UsageISL ("use_server_token_count: true" is
// still read as both), and the Client block is gone: its fields are top-level.
type Scenario struct {
	// Name names the run in messages and artifacts; "" = "scenario".
	Name string `json:"name,omitempty"`
	// Tokenizer counts tokens on the client, and on the mock unless Mock.Tokenizer says
	// otherwise: anything tokenizer.Load accepts; "" = "gpt2".
	Tokenizer string `json:"tokenizer,omitempty"`

	// Config is the load generator's configuration: target, workload, load, stop and
	// recording (see [loadgen.Config]). Its URLs empty = the in-process mock; its Model
	// "" = the mock's first model, or loadgen.DefaultModel; its stop conditions all
	// unset (no Requests, Duration, InputFile or RateSeries) = DefaultRequests. Its RecordFile is
	// not used: Run records into the artifact directory. The API key is never printed,
	// nor written into artifacts.
	loadgen.Config

	// Classes, when set, are the run's traffic classes: each its own workload, load,
	// headers and start, all run at once on one clock into one recording, each record
	// carrying its class (docs/classes.md). The top level then sets no workload or
	// load field but the seed; its stop (requests, duration) is each class's unless
	// the class sets its own. Empty = a run of one class, the top level's. Read from
	// scenario files (`perfgate profile --config FILE`) and Go; no flag sets it.
	Classes []Class `json:"classes,omitempty"`

	// Mock configures the in-process mock server started when URLs is empty. Its
	// zero value serves with TTFT 20 ms and ITL 5 ms; its zero Tokenizer and Seed take
	// the scenario's.
	Mock mockserver.Config `json:"mock,omitzero"`

	// Server is a server process run.Run starts before the run and stops after it, as it
	// does the mock: the build under test, started fresh for each run (an A/B gate on
	// one GPU, where two builds cannot run at once). Run waits until it is ready,
	// checks it as run.Preflight checks a running server, sends the requests to URLs (set
	// them: Server.URL "" = URLs[0]), stops the run with an error naming the server if
	// it exits, and after the run stops it and checks its port is released. Its logs
	// go into the artifact directory (server-NAME.stdout.log, .stderr.log). nil = the
	// server at URLs is already running. Set from Go or `perfgate profile --server-cmd`;
	// not read from or written to scenario files (it may carry secrets).
	Server *serverproc.Server `json:"-"`

	// Objectives are the pass/fail rules checked by Outcome.Check, by perftest's
	// Result.AssertObjectives and by `perfgate profile`.
	Objectives Objectives `json:"objectives,omitzero"`

	// ServerMetrics scrapes the server's Prometheus metrics before, during (every
	// Interval, zero = 1 s) and after the run into server_metrics.jsonl, summarised in
	// Outcome.ServerMetrics, server_metrics.json and the HTML report. A URL may be a
	// path ("/metrics"), resolved against the first URL or the in-process mock. Zero =
	// scrape nothing. A failed scrape is recorded, never fatal.
	ServerMetrics servermetrics.Config `json:"server_metrics,omitzero"`

	// GPUTelemetry scrapes DCGM exporters (or any Prometheus endpoint with DCGM's
	// names: DCGM_FI_DEV_POWER_USAGE, DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, …) before,
	// during and after the run into gpu_telemetry.jsonl, summarised over the measured
	// window per GPU in Outcome.GPU and gpu_telemetry.json, with the GPU metrics
	// (gpu_energy, tokens_per_joule, output_tps_per_gpu, energy_per_request, …) in
	// the run's metrics. An endpoint that answers without DCGM's names is invalid; one
	// that does not answer is a warning, and the GPU metrics are then unknown. Zero =
	// scrape nothing.
	GPUTelemetry servermetrics.Config `json:"gpu_telemetry,omitzero"`

	// Exports names and selects the AIPerf exports written beside the recordings.
	Exports Exports `json:"exports,omitzero"`

	// Validity switches and tunes the checks that say whether the run's numbers can be
	// trusted (client limits, client-bound, steady state, warm cache, tail samples);
	// the zero value runs each at its documented default (docs/validity.md).
	Validity validity.Config `json:"validity,omitzero"`

	// Abort stops the run while it goes when one of its conditions holds on a sliding
	// window ("error_rate>0.2" after a delay), or when more than a fraction of its
	// requests failed (AIPerf's --failed-request-threshold); the zero value stops
	// nothing. docs/abort.md.
	Abort Abort `json:"abort,omitzero"`

	// Regression is the regression gate `perfgate profile` applies with this file: the
	// baseline directory, margins, runs per side and its settings ([Gate]). Zero = no
	// gate (unless --baseline gives one).
	Regression gate.Gate `json:"regression,omitzero"`
}

// Exports are AIPerf's --profile-export-prefix and --export-level.
type Exports struct {
	// Prefix names the files PREFIX_aiperf.json, PREFIX_aiperf.csv and PREFIX.jsonl;
	// "" = reportgen.DefaultExportPrefix ("profile_export").
	Prefix string `json:"prefix,omitempty"`
	// Level is "records" (zero: the aggregates and the per-request JSONL) or
	// "summary" (the aggregates only). client.jsonl, the one recording, is always
	// written.
	Level string `json:"level,omitempty"`
	// SliceDuration, in seconds, writes AIPerf's timeslice exports
	// (PREFIX_aiperf_timeslices.json and .csv: each per-request metric's statistics
	// over the requests sent in each slice of this width, from the first measured
	// request) and draws the HTML report's charts over time on the same slices
	// (reportgen.SliceMetrics). AIPerf's --slice-duration. Zero = no timeslice export,
	// and the report picks a round width.
	SliceDuration float64 `json:"slice_duration,omitzero"`
}

// Export levels of [Exports.Level].
const (
	ExportSummary = "summary"
	ExportRecords = "records"
)

// ExportLevels are the values [Exports.Level] takes.
var ExportLevels = []string{ExportSummary, ExportRecords}

// Mocked reports whether the scenario runs against the in-process mock server (no URLs).
func (s Scenario) Mocked() bool { return len(s.URLs) == 0 }

// WithDefaults returns s with the documented defaults of its zero fields filled in,
// as run.Run runs it: Name, Tokenizer, Requests (when no other stop is set, a rate
// series included), and the mock's Tokenizer and Seed.
func (s Scenario) WithDefaults() Scenario {
	s.Name, s.Tokenizer = s.NameOrDefault(), s.TokenizerOrDefault()
	if s.Requests == 0 && s.Duration == 0 && s.InputFile == "" && len(s.RateSeries) == 0 && len(s.Classes) == 0 {
		s.Requests = DefaultRequests // a rate series ends at its last point instead
	}
	if s.Mocked() {
		if s.Mock.Tokenizer == "" {
			s.Mock.Tokenizer = s.Tokenizer
		}
		if s.Mock.Seed == 0 {
			s.Mock.Seed = s.Seed
		}
	}
	return s
}

// NameOrDefault is the scenario's name, [DefaultName] when it has none.
func (s Scenario) NameOrDefault() string { return cmp.Or(s.Name, DefaultName) }

// TokenizerOrDefault is the tokenizer the scenario counts with, [DefaultTokenizer]
// when it names none.
func (s Scenario) TokenizerOrDefault() string { return cmp.Or(s.Tokenizer, DefaultTokenizer) }

// TargetName names where the scenario's requests go: "the in-process mock server" or
// its URLs, comma-separated (a run's statistics keep it as gate.RunStats.Target).
func (s Scenario) TargetName() string {
	if s.Mocked() {
		return "the in-process mock server"
	}
	return strings.Join(s.URLs, ", ")
}

// Describe is a one-line summary of what the scenario runs, defaults filled in: the
// target, the API, the load, when it stops, the lengths, the tokenizer and the seed.
// For example "the in-process mock server (chat), concurrency=4, 40 requests, ISL
// normal:64,8, OSL fixed:16, tokenizer gpt2, seed 7".
func (s Scenario) Describe() string {
	d := s.WithDefaults()
	target := d.TargetName()
	c := d.Config
	var stop string
	switch {
	case c.InputFile != "":
		stop = "the requests of " + c.InputFile
	case c.Duration > 0 && c.Requests > 0:
		stop = fmt.Sprintf("%d requests or %s", c.Requests, c.Duration)
	case c.Duration > 0:
		stop = c.Duration.String()
	default:
		stop = fmt.Sprintf("%d requests", c.Requests)
	}
	isl, osl := c.InputLength().String(), "server default"
	if c.OSL.Distribution != nil {
		osl = c.OSL.String()
	}
	ep := string(cmp.Or(c.API, loadgen.EndpointChat))
	if len(d.Classes) > 0 {
		return fmt.Sprintf("%s (%s), %d classes: %s, tokenizer %s, seed %d", target, ep, len(d.Classes), d.LoadString(), d.Tokenizer, c.Seed)
	}
	return fmt.Sprintf("%s (%s), %s, %s, ISL %s, OSL %s, tokenizer %s, seed %d",
		target, ep, d.LoadString(), stop, isl, osl, d.Tokenizer, c.Seed)
}

// LoadString describes the load mode, e.g. "concurrency=10" or "Poisson{20 req/s}, concurrency<=64".
func (s Scenario) LoadString() string {
	if len(s.Classes) > 0 {
		return s.classesLoadString()
	}
	c := s.Config
	if len(c.RateSeries) > 0 {
		l := (&loadgen.SeriesPacer{Series: c.RateSeries, Arrival: c.Arrival, Burstiness: c.Burstiness}).String()
		if c.Concurrency > 0 {
			l += fmt.Sprintf(", concurrency<=%d", c.Concurrency)
		}
		return l
	}
	if c.Rate == 0 {
		if c.Schedule {
			return "schedule from " + c.InputFile
		}
		return fmt.Sprintf("concurrency=%d", max(c.Concurrency, 1))
	}
	var l string
	switch c.Arrival {
	case loadgen.ArrivalConstant:
		l = fmt.Sprintf("Constant{%g req/s}", c.Rate)
	case loadgen.ArrivalGamma:
		l = fmt.Sprintf("Gamma{%g req/s, burstiness %g}", c.Rate, max(c.Burstiness, 1))
	default:
		l = fmt.Sprintf("Poisson{%g req/s}", c.Rate)
	}
	if c.Concurrency > 0 {
		l += fmt.Sprintf(", concurrency<=%d", c.Concurrency)
	}
	return l
}

// scenarioAlias is Scenario without its methods, so that encoding/json writes and
// reads its fields (the embedded loadgen.Config's flat) and durationsAsText and
// durationsAsNanos turn every time.Duration into text and back.
type scenarioAlias Scenario

// MarshalJSON writes s with every duration as text ("30s"), loadgen's and the
// mock's included, so that the JSON is a scenario file [ReadFile] reads back. The API
// key is redacted.
func (s Scenario) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal((*scenarioAlias)(&s))
	if err != nil {
		return nil, err
	}
	return durationsAsText(b, reflect.TypeFor[scenarioAlias]())
}

// UnmarshalJSON reads s, with its durations as Go duration text ("30s"; a bare number
// is an error). Unknown fields are errors, so a typo cannot silently change a run.
// [ReadFile] checks a file before it gets here, and says where each problem is.
func (s *Scenario) UnmarshalJSON(b []byte) error {
	b, err := durationsAsNanos(b, reflect.TypeFor[scenarioAlias]())
	if err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode((*scenarioAlias)(s)); err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	return nil
}

// ErrInvalidScenario is wrapped by the errors of a scenario that cannot run as written.
var ErrInvalidScenario = gate.ErrInvalid
