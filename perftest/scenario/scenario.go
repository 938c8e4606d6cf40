package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/servermetrics"
)

// Artifact file names written by [Run] into its artifact directory.
const (
	ClientFile   = "client.jsonl"  // client recording, one record.Client per line
	ServerFile   = "server.jsonl"  // mock server recording, one record.Server per line (mock only)
	MetricsFile  = "metrics.json"  // record.Metrics of the client recording
	ScenarioFile = "scenario.json" // the scenario as run (API key redacted)
	VerdictsFile = "verdicts.txt"  // the objectives' verdicts, one block each
)

// Defaults applied by [Run] to zero fields.
const (
	DefaultName      = "scenario"
	DefaultTokenizer = "gpt2"
	// DefaultRequests is the request count when Requests, Duration and InputFile are all unset.
	DefaultRequests = 100
)

// Scenario describes one benchmark run. It is plain data: printable with %+v, readable
// from JSON or YAML (durations as "30s"), the same type `perfgate profile` fills from
// a file. Every field's zero value is documented; the zero Scenario is a valid run:
// 100 chat requests, one at a time, 128-token prompts in the gpt2 tokenizer, streamed
// from the in-process mock server.
type Scenario struct {
	// Name names the run in messages and artifacts; "" = "scenario".
	Name string `json:"name,omitempty" yaml:"name,omitempty"`

	// Endpoint is the server's base URL ("http://127.0.0.1:8000") or a full endpoint
	// URL. "" = start the in-process mock server (configured by Mock) on 127.0.0.1 at a
	// free port, and stop it when the run ends.
	Endpoint string `json:"endpoint,omitempty" yaml:"endpoint,omitempty"`
	// APIKey is sent as a bearer token. It is never printed, nor written into artifacts.
	APIKey loadgen.Secret `json:"api_key,omitempty" yaml:"-"`
	// Model is the "model" field sent; "" = the mock's model, or loadgen.DefaultModel.
	Model string `json:"model,omitempty" yaml:"model,omitempty"`
	// EndpointType is the API: "chat" (zero), "completions", "embeddings", "rankings",
	// "rerank" or "responses".
	EndpointType loadgen.Endpoint `json:"endpoint_type,omitempty" yaml:"endpoint_type,omitempty"`
	// NoStream turns SSE streaming off (the zero value streams, which TTFT and ITL need).
	NoStream bool `json:"no_stream,omitempty" yaml:"no_stream,omitempty"`
	// Tokenizer counts tokens on the client, and on the mock unless Mock.Tokenizer says
	// otherwise: anything tokenizer.Load accepts; "" = "gpt2".
	Tokenizer string `json:"tokenizer,omitempty" yaml:"tokenizer,omitempty"`

	// ISL and OSL are the input and output length distributions in tokens, such as
	// "fixed:128", "normal:512,64" or (vLLM's random dataset) "vllm-range:128,0.3".
	// Zero ISL = fixed:128; zero OSL = no output cap sent (the mock then generates
	// its default of 128 tokens).
	ISL distribution.Spec `json:"isl,omitzero" yaml:"isl,omitempty"`
	OSL distribution.Spec `json:"osl,omitzero" yaml:"osl,omitempty"`
	// IgnoreEOS sends "ignore_eos": true so a real server generates exactly OSL tokens.
	IgnoreEOS bool `json:"ignore_eos,omitempty" yaml:"ignore_eos,omitempty"`
	// UseServerTokenCount (AIPerf's --use-server-token-count) takes OSL and ISL from
	// the server's usage (completion_tokens, prompt_tokens) instead of the client
	// tokenizer, in the metrics and in the OSLFit/ISLFit length checks of a real
	// endpoint: it sets Client.UsageOSL and Client.UsageISL. False = client counts.
	UseServerTokenCount bool `json:"use_server_token_count,omitempty" yaml:"use_server_token_count,omitempty"`
	// Corpus is the synthetic prompt style: "shakespeare" (zero), "random" (random
	// token ids) or "vllm" (vLLM's RandomDataset, reproduced from Seed).
	Corpus string `json:"corpus,omitempty" yaml:"corpus,omitempty"`
	// PrefixTokens is the length of a prompt prefix every request shares; 0 = none.
	PrefixTokens int `json:"prefix_tokens,omitempty" yaml:"prefix_tokens,omitempty"`
	// SystemPrompt, if set, is the system message of every conversation.
	SystemPrompt string `json:"system_prompt,omitempty" yaml:"system_prompt,omitempty"`
	// Turns is the number of turns per conversation (history carried); zero = 1.
	Turns distribution.Spec `json:"turns,omitzero" yaml:"turns,omitempty"`
	// InputFile replaces synthetic prompts with a file in InputFormat ("payloads",
	// "mooncake", "sharegpt" or "recording"); "" = synthetic prompts.
	InputFile   string `json:"input_file,omitempty" yaml:"input_file,omitempty"`
	InputFormat string `json:"input_format,omitempty" yaml:"input_format,omitempty"`

	// Concurrency is the number of closed-loop workers, or with Rate the ceiling on
	// requests in flight; 0 = 1 worker (closed loop) or no ceiling (open loop).
	Concurrency int `json:"concurrency,omitempty" yaml:"concurrency,omitempty"`
	// Rate > 0 makes the load open-loop at Rate requests/s; 0 = closed loop.
	Rate float64 `json:"rate,omitempty" yaml:"rate,omitempty"`
	// Arrival is the open-loop arrival process: "poisson" (zero), "constant" or
	// "gamma" with shape Burstiness (zero = 1).
	Arrival    string  `json:"arrival,omitempty" yaml:"arrival,omitempty"`
	Burstiness float64 `json:"burstiness,omitempty" yaml:"burstiness,omitempty"`
	// Ramp ramps the load up over this long: the rate from RampFrom to Rate (open loop),
	// or the workers from 1 to Concurrency (closed loop); 0 = no ramp.
	RampFrom float64       `json:"ramp_from,omitempty" yaml:"ramp_from,omitempty"`
	Ramp     time.Duration `json:"ramp,omitempty" yaml:"ramp,omitempty"`
	// Schedule replays the input file's timestamps as the arrival schedule.
	Schedule bool `json:"schedule,omitempty" yaml:"schedule,omitempty"`

	// WarmupRequests are sent first and left out of every metric and check; 0 = none.
	WarmupRequests int `json:"warmup_requests,omitempty" yaml:"warmup_requests,omitempty"`
	// Requests stops the run after this many measured requests, Duration after this
	// long; whichever comes first. Both zero (and no InputFile) = DefaultRequests.
	Requests int           `json:"requests,omitempty" yaml:"requests,omitempty"`
	Duration time.Duration `json:"duration,omitempty" yaml:"duration,omitempty"`

	// Seed seeds every random choice: lengths, prompts, arrivals, and the mock's
	// latencies and outputs (unless Mock.Seed is set). The same seed, the same run.
	Seed uint64 `json:"seed,omitempty" yaml:"seed,omitempty"`

	// Mock configures the in-process mock server started when Endpoint is empty. Its
	// zero value serves with TTFT 20 ms and ITL 5 ms; its zero Tokenizer and Seed take
	// the scenario's.
	Mock mockserver.Config `json:"mock,omitzero" yaml:"mock,omitempty"`

	// Objectives are the pass/fail rules checked by Outcome.Check, by perftest's
	// Result.AssertObjectives and by `perfgate profile`.
	Objectives Objectives `json:"objectives,omitzero" yaml:"objectives,omitempty"`

	// ServerMetrics scrapes the server's Prometheus metrics before, during (every
	// Interval, zero = 1 s) and after the run into server_metrics.jsonl, summarised in
	// Outcome.ServerMetrics, server_metrics.json and the HTML report. A URL may be a
	// path ("/metrics"), resolved against Endpoint or the in-process mock. Zero =
	// scrape nothing. A failed scrape is recorded, never fatal.
	ServerMetrics servermetrics.Config `json:"server_metrics,omitzero" yaml:"server_metrics,omitempty"`

	// Client holds every other load-generator setting (timeouts, headers, extra body,
	// several URLs, cancellation, SLO for the metrics' goodput …). The fields above
	// replace its corresponding fields; its zero value is loadgen's defaults.
	Client loadgen.Config `json:"client,omitzero" yaml:"client,omitempty"`
}

// WithDefaults returns s with the documented defaults of its zero fields filled in,
// as [Run] runs it: Name, Tokenizer, Requests (when no other stop is set), and the
// mock's Tokenizer and Seed.
func (s Scenario) WithDefaults() Scenario {
	if s.Name == "" {
		s.Name = DefaultName
	}
	if s.Tokenizer == "" {
		s.Tokenizer = DefaultTokenizer
	}
	if s.Requests == 0 && s.Duration == 0 && s.InputFile == "" && s.Client.Requests == 0 && s.Client.Duration == 0 && s.Client.InputFile == "" {
		s.Requests = DefaultRequests
	}
	if s.Endpoint == "" {
		if s.Mock.Tokenizer == "" {
			s.Mock.Tokenizer = s.Tokenizer
		}
		if s.Mock.Seed == 0 {
			s.Mock.Seed = s.Seed
		}
	}
	return s
}

// LoadConfig returns the loadgen configuration the scenario runs with, sending to url.
func (s Scenario) LoadConfig(url string) loadgen.Config {
	c := s.Client
	c.URLs = []string{url}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	setInt := func(dst *int, v int) {
		if v != 0 {
			*dst = v
		}
	}
	if s.APIKey != "" {
		c.APIKey = s.APIKey
	}
	set(&c.Model, s.Model)
	if s.EndpointType != "" {
		c.API = s.EndpointType
	}
	c.Stream = !s.NoStream
	if s.ISL.Distribution != nil {
		c.ISL = s.ISL
	}
	if s.OSL.Distribution != nil {
		c.OSL = s.OSL
	}
	c.IgnoreEOS = c.IgnoreEOS || s.IgnoreEOS
	c.UsageOSL = c.UsageOSL || s.UseServerTokenCount
	c.UsageISL = c.UsageISL || s.UseServerTokenCount
	set(&c.Corpus, s.Corpus)
	setInt(&c.PrefixTokens, s.PrefixTokens)
	set(&c.SystemPrompt, s.SystemPrompt)
	if s.Turns.Distribution != nil {
		c.Turns = s.Turns
	}
	set(&c.InputFile, s.InputFile)
	set(&c.InputFormat, s.InputFormat)
	setInt(&c.Concurrency, s.Concurrency)
	if s.Rate != 0 {
		c.Rate = s.Rate
	}
	set(&c.Arrival, s.Arrival)
	if s.Burstiness != 0 {
		c.Burstiness = s.Burstiness
	}
	if s.RampFrom != 0 {
		c.RampFrom = s.RampFrom
	}
	if s.Ramp != 0 {
		c.Ramp = s.Ramp
	}
	c.Schedule = c.Schedule || s.Schedule
	setInt(&c.WarmupRequests, s.WarmupRequests)
	setInt(&c.Requests, s.Requests)
	if s.Duration != 0 {
		c.Duration = s.Duration
	}
	if s.Seed != 0 {
		c.Seed = s.Seed
	}
	c.RecordFile = "" // Run writes the recording itself
	return c
}

// Describe is a one-line summary of what the scenario runs, defaults filled in: the
// target, the API, the load, when it stops, the lengths, the tokenizer and the seed.
// For example "the in-process mock server (chat), concurrency=4, 40 requests, ISL
// normal:64,8, OSL fixed:16, tokenizer gpt2, seed 7".
func (s Scenario) Describe() string {
	d := s.WithDefaults()
	target := "the in-process mock server"
	if d.Endpoint != "" {
		target = d.Endpoint
	}
	c := d.LoadConfig(d.Endpoint)
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
	isl, osl := "fixed:128", "server default"
	if c.ISL.Distribution != nil {
		isl = c.ISL.String()
	}
	if c.OSL.Distribution != nil {
		osl = c.OSL.String()
	}
	ep := string(c.API)
	if ep == "" {
		ep = string(loadgen.EndpointChat)
	}
	return fmt.Sprintf("%s (%s), %s, %s, ISL %s, OSL %s, tokenizer %s, seed %d",
		target, ep, d.LoadString(), stop, isl, osl, d.Tokenizer, c.Seed)
}

// LoadString describes the load mode, e.g. "concurrency=10" or "Poisson{20 req/s}, concurrency<=64".
func (s Scenario) LoadString() string {
	c := s.LoadConfig("")
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

// scenarioJSON shadows the time.Duration fields so that JSON carries "30s", not nanoseconds.
type scenarioAlias Scenario

type scenarioJSON struct {
	*scenarioAlias
	Ramp     check.Duration `json:"ramp,omitzero"`
	Duration check.Duration `json:"duration,omitzero"`
}

// MarshalJSON writes s with every duration as text ("30s"), the client's and the
// mock's included, so that the JSON is a scenario file [ReadFile] reads back. The API
// key is redacted.
func (s Scenario) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(scenarioJSON{(*scenarioAlias)(&s), check.Duration(s.Ramp), check.Duration(s.Duration)})
	if err != nil {
		return nil, err
	}
	return durationsAsText(b, reflect.TypeFor[Scenario]())
}

// UnmarshalJSON reads s, with its durations as Go duration text ("30s"; a bare number
// is an error). Unknown fields are errors, so a typo cannot silently change a run.
// [ReadFile] checks a file before it gets here, and says where each problem is.
func (s *Scenario) UnmarshalJSON(b []byte) error {
	b, err := durationsAsNanos(b, reflect.TypeFor[Scenario]())
	if err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	j := scenarioJSON{scenarioAlias: (*scenarioAlias)(s)}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	s.Ramp, s.Duration = time.Duration(j.Ramp), time.Duration(j.Duration)
	return nil
}
