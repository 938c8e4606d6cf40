package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/perftest/check"
	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/servermetrics"
)

// DefaultArtifactDir is where profile writes its artifacts unless --artifact-dir says
// otherwise (AIPerf's default is "artifacts" too).
const DefaultArtifactDir = "artifacts"

// profileOpts are the CLI-only settings of a profile: what to do around the Scenario.
type profileOpts struct {
	artifactDir string
	summaryMD   string // --summary-md FILE
	quiet       bool
	uiType      string // --ui-type: dashboard, simple, none; "" = by the terminal
	mock        bool
	assertISL   string
	assertOSL   string
	alpha       float64
	numRuns     int
	confidence  float64
	sweepConc   string
	sweepRate   string
	searchConc  string
	searchRate  string
	searchTol   float64
	hasAsserts  bool
	waitModel   float64            // --wait-for-model-timeout, seconds
	shard       shardFlags         // --shards and friends (shard.go)
	shardInfo   *perfrun.ShardInfo // how the shard's start was synchronised (syncShard)
	history     historyOpts        // --history and the server's identity (history.go)
	gate        gateFlags          // --baseline and the regression gate's flags (regress.go)
	server      serverFlags        // --server-cmd and the servers profile starts (serverflags.go)
	live        liveOpts           // --out and --out-interval: live metrics (liveout.go)
}

// profileFlags holds the raw flag values until they are mapped onto a Scenario.
type profileFlags struct {
	models, tokenizer, endpointType, apiKey, corpus, inputFile, inputFormat string
	streaming, fixedSchedule, ignoreEOS                                     bool
	serverTokens                                                            bool
	rangeRatio, rate, burstiness, duration, timeout, idleTimeout, grace     float64
	islMean, islStd, oslMean, oslStd, turnMean, turnStd                     float64
	concurrency, requests, conversations, warmup, prefill                   int
	seed                                                                    uint64
	goodput, islDist, oslDist, arrival, config, name                        string
	urls, headers, extra, asserts                                           stringList
	serverMetrics                                                           stringList
	serverMetricsInterval                                                   float64
	gpuTelemetry                                                            stringList
	live                                                                    liveFlags
	// AIPerf flags that map onto an existing meaning (see aiperfFlags).
	urlStrategy, exportPrefix, exportLevel                string
	sliceDuration                                         float64 // --slice-duration, seconds
	cancelRate, cancelDelay, rampDuration, warmupDuration float64
	turnDelayMean, turnDelayStd                           float64
	prefixTokens, blockTokens, passages                   int
	legacyMaxTokens                                       bool
	// The validity checks' switches (validity.go).
	validity validityFlags
	// The abort rules' flags (abort.go).
	abort abortFlags
	// The rate series and https (httprate.go).
	http httpFlags
	// The prefix-cache workload (prefix.go).
	prefix prefixFlags
	// The model mix's flags (toolsmodels.go).
	mix mixFlags
	// The agent-trace and agent-job flags (agents.go).
	agents agentFlags
	// The image and audio input flags (media.go).
	media mediaFlags
}

func registerProfileFlags(fs *flag.FlagSet, f *profileFlags, o *profileOpts) {
	alias := func(names []string, usage string, reg func(name, usage string)) {
		for _, n := range names {
			reg(n, usage)
		}
	}
	str := func(p *string, def string, usage string, names ...string) {
		alias(names, usage, func(n, u string) { fs.StringVar(p, n, def, u) })
	}
	flt := func(p *float64, def float64, usage string, names ...string) {
		alias(names, usage, func(n, u string) { fs.Float64Var(p, n, def, u) })
	}
	integer := func(p *int, def int, usage string, names ...string) {
		alias(names, usage, func(n, u string) { fs.IntVar(p, n, def, u) })
	}
	boolean := func(p *bool, def bool, usage string, names ...string) {
		alias(names, usage, func(n, u string) { fs.BoolVar(p, n, def, u) })
	}
	// aiperf profile's flags (common cases).
	fs.Var(&f.urls, "url", "[target] server base URL, e.g. http://127.0.0.1:8000 (repeatable: several servers, see --url-strategy; or --mock)")
	fs.Var(&f.urls, "u", "[target] short for --url")
	str(&f.models, "", "[target] model name sent; several, comma-separated, spread the requests over them (a model mix: see --model-selection-strategy)", "model-names", "model", "m")
	str(&f.tokenizer, "", "[workload] tokenizer: built-in (gpt2, cl100k_base, o200k_base, …), tokenizer.json, directory or hub id (default gpt2)", "tokenizer")
	str(&f.endpointType, "", "[target] API: "+loadgen.OrList(loadgen.Endpoints)+" (messages: Anthropic; default chat)", "endpoint-type")
	boolean(&f.serverTokens, false, "[recording] take OSL and ISL from the server's usage (completion_tokens, prompt_tokens), not the client tokenizer", "use-server-token-count")
	boolean(&f.streaming, true, "[target] stream responses over SSE (needed for TTFT and ITL; --streaming=false to turn off)", "streaming")
	str(&f.apiKey, "", "[target] API key sent as a bearer token (never printed or recorded)", "api-key")
	fs.Var(&f.headers, "header", "[target] extra request header \"Name: value\" (repeatable)")
	fs.Var(&f.headers, "H", "[target] extra request header \"Name: value\" (repeatable)")
	fs.Var(&f.extra, "extra-inputs", "[workload] extra body field key:value (repeatable; JSON values allowed, ignore_eos:true is common)")
	str(&f.corpus, "", "[workload] synthetic prompt style: "+loadgen.OrList(loadgen.Corpora), "prompt-corpus", "random-corpus-style")
	flt(&f.rangeRatio, 0, "[workload] vLLM-style range ratio: lengths uniform in [N(1-r), N(1+r)]", "random-range-ratio")
	flt(&f.islMean, 0, "[workload] mean input tokens, e.g. 512", "prompt-input-tokens-mean", "synthetic-input-tokens-mean", "isl")
	flt(&f.islStd, 0, "[workload] stddev of input tokens", "prompt-input-tokens-stddev", "synthetic-input-tokens-stddev", "isl-stddev")
	flt(&f.oslMean, 0, "[workload] mean output tokens, e.g. 128 (sent as the output cap)", "prompt-output-tokens-mean", "output-tokens-mean", "osl")
	flt(&f.oslStd, 0, "[workload] stddev of output tokens", "prompt-output-tokens-stddev", "output-tokens-stddev", "osl-stddev")
	integer(&f.concurrency, 0, "[load] closed loop: requests in flight, e.g. 8; with --request-rate: the ceiling", "concurrency")
	flt(&f.rate, 0, "[load] open loop: requests per second, e.g. 10", "request-rate")
	integer(&f.prefill, 0, "[load] at most K requests waiting for their first token (a slot is held from send to the first output chunk)", "prefill-concurrency")
	integer(&f.requests, 0, "[stop] measured requests to send, e.g. 500", "request-count", "num-requests")
	integer(&f.conversations, 0, "[stop] conversations to send (with --conversation-turn-mean T: about N·T requests)", "conversation-num", "num-conversations", "num-sessions")
	flt(&f.turnMean, 0, "[workload] mean turns per conversation (history carried)", "conversation-turn-mean", "session-turns-mean")
	flt(&f.turnStd, 0, "[workload] stddev of turns per conversation", "conversation-turn-stddev", "session-turns-stddev")
	integer(&f.warmup, 0, "[recording] warmup requests sent first and left out of the metrics", "warmup-request-count", "num-warmup-requests")
	fs.Uint64Var(&f.seed, "random-seed", 0, "[workload] seed of every random choice (same seed, same workload)")
	str(&f.goodput, "", "[objectives] goodput SLO as aiperf writes it, e.g. \"time_to_first_token:200 inter_token_latency:20\" (ms), or as rule terms, \"ttft<=200ms, itl<=20ms\"", "goodput")
	str(&o.artifactDir, DefaultArtifactDir, "[output] directory for the exports, records and HTML report", "artifact-dir", "output-artifact-dir")
	str(&o.summaryMD, "", summaryUsage, "summary-md")
	str(&f.inputFile, "", "[workload] prompts or trace from a file instead of synthetic prompts", "input-file")
	str(&f.inputFormat, "", "[workload] format of --input-file: payloads, mooncake, sharegpt, recording or agent_trace (mooncake_trace = mooncake)", "custom-dataset-type", "input-format")
	boolean(&f.fixedSchedule, false, "[load] replay the input file's timestamps as the arrival schedule", "fixed-schedule")
	flt(&f.duration, 0, "[stop] stop after this many seconds, e.g. 60", "benchmark-duration")
	flt(&f.timeout, loadgen.DefaultTimeout.Seconds(), "[stop] per-request timeout in seconds, send to last byte", "request-timeout-seconds")
	flt(&f.idleTimeout, loadgen.DefaultIdleTimeout.Seconds(), "[stop] streamed requests: the longest wait for the headers or between chunks, in seconds (0 = none)", "idle-timeout-seconds")
	flt(&f.grace, loadgen.DefaultGracePeriod.Seconds(), "[stop] after --benchmark-duration, seconds requests in flight may still finish; then they are cancelled (0 = at once)", "benchmark-grace-period")
	fs.Var(&f.serverMetrics, "server-metrics", "[server metrics] Prometheus endpoint to scrape before, during and after the run (repeatable): a URL, or a path such as /metrics on the server under test (the mock too)")
	flt(&f.serverMetricsInterval, servermetrics.DefaultInterval.Seconds(), "[server metrics] seconds between server-metrics scrapes during the run", "server-metrics-interval")
	fs.Var(&f.gpuTelemetry, "gpu-telemetry", "[server metrics] DCGM exporter endpoint to scrape during the run for GPU power, energy, utilisation and memory (repeatable, or comma-separated): a URL such as http://HOST:9400/metrics, or a path on the server under test; adds gpu_energy, tokens_per_joule, output_tps_per_gpu, energy_per_request, …")
	aiperfFlags(fs, f)
	registerHTTPFlags(fs, &f.http)
	registerValidityFlags(fs, &f.validity)
	registerAbortFlags(fs, &f.abort)
	registerMixFlags(fs, &f.mix)
	registerAgentFlags(fs, &f.agents)
	registerMediaFlags(fs, &f.media)
	registerLiveFlags(fs, &f.live)
	// perfgate's own.
	boolean(&o.mock, false, "[target] profile the in-process mock server (no --url needed)", "mock")
	str(&f.config, "", "[workload] scenario file (YAML or JSON, the perftest Scenario); flags given override it", "config")
	str(&f.name, "", "[output] scenario name in reports", "name")
	str(&f.islDist, "", "[workload] input length distribution, e.g. normal:512,64 or lognormal:mean=512,stddev=128", "isl-dist")
	str(&f.oslDist, "", "[workload] output length distribution, e.g. fixed:128", "osl-dist")
	boolean(&f.ignoreEOS, false, "[workload] send ignore_eos so the server generates exactly the OSL", "ignore-eos")
	str(&f.arrival, "", "[load] open-loop arrivals: "+loadgen.OrList(loadgen.Arrivals), "arrival", "arrival-pattern", "request-rate-mode")
	flt(&f.burstiness, 0, "[load] gamma arrival shape (with --arrival gamma)", "burstiness", "arrival-smoothness", "vllm-burstiness")
	fs.Var(&f.asserts, "assert", "[objectives] "+assertHelp())
	str(&o.assertISL, "", "[objectives] assert the input lengths (as the mock received them, else as sent) fit this distribution", "assert-isl")
	str(&o.assertOSL, "", "[objectives] assert the output lengths fit this distribution", "assert-osl")
	flt(&o.alpha, check.DefaultAlpha, "[objectives] significance level of --assert-isl / --assert-osl", "alpha")
	integer(&o.numRuns, 1, "[load] repeat the run N times; metrics as mean ± confidence interval", "num-runs", "num-profile-runs")
	flt(&o.confidence, 0.95, "[load] confidence level of --num-runs intervals", "confidence", "confidence-level")
	str(&o.sweepConc, "", "[load] sweep concurrency levels: 1,2,4,8 or 1:64:x2", "sweep-concurrency")
	str(&o.sweepRate, "", "[load] sweep request rates: 5,10,20 or 10:100:+10", "sweep-rate")
	str(&o.searchConc, "", "[load] find the highest concurrency LO:HI meeting the assertions (bisection)", "search-concurrency")
	str(&o.searchRate, "", "[load] find the highest request rate LO:HI meeting the assertions (bisection)", "search-rate")
	flt(&o.searchTol, 0.05, "[load] relative tolerance of the search", "search-tolerance")
	fs.Float64Var(&o.waitModel, "wait-for-model-timeout", 0, "[target] wait up to this many seconds for the server to accept connections and list the model (GET /v1/models) before the run; 0 = check once")
	boolean(&o.quiet, false, "[output] no progress and no table; verdicts and where the artifacts are", "q", "quiet")
	registerUITypeFlag(fs, &o.uiType)
	registerShardFlags(fs, &o.shard)
	registerHistoryFlags(fs, &o.history)
	registerGateFlags(fs, &o.gate, true)
	registerServerFlags(fs, &o.server)
}

func cmdProfile(ctx context.Context, e *env, args []string) error {
	var f profileFlags
	var o profileOpts
	fs := newFlags(e, "profile", "--url URL | --mock [flags]")
	registerProfileFlags(fs, &f, &o)
	fs.Usage = func() { profileHelp(e.stdout, fs, false) }
	if slices.Contains(args, "--help-all") || slices.Contains(args, "-help-all") {
		profileHelp(e.stdout, fs, true)
		return flag.ErrHelp
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	sc, err := buildScenario(fs, &f, &o)
	if err != nil {
		return err
	}
	for _, n := range sc.Objectives.Deprecated() {
		fmt.Fprintf(e.stderr, "perfgate: note: %s\n", n)
	}
	if err := applyShardFlags(&sc, &o); err != nil {
		return err
	}
	if err := o.server.apply(&sc, o); err != nil {
		return err
	}
	return writeSummary(e, o.summaryMD, profile(ctx, e, sc, o))
}

// buildScenario maps the flags (over --config, if given) onto a Scenario and checks
// what can be checked before anything runs.
func buildScenario(fs *flag.FlagSet, f *profileFlags, o *profileOpts) (scenario.Scenario, error) {
	set := setFlags(fs)
	has := func(names ...string) bool {
		for _, n := range names {
			if set[n] {
				return true
			}
		}
		return false
	}
	var sc scenario.Scenario
	if f.config != "" {
		var err error
		if sc, err = readScenario(f.config); err != nil {
			return sc, err
		}
	}
	// The flags map onto the scenario in steps, one concern each, in this order (an
	// earlier step's error wins).
	for _, step := range []func(*scenario.Scenario, *profileFlags, *profileOpts, func(...string) bool) error{
		profileConflicts, profileTarget, profileModels, profileWorkload, profileLoad, profileInput, profileAgents, profileExtras, profileObjectives, profileValidity, profileAbort,
	} {
		if err := step(&sc, f, o, has); err != nil {
			return sc, err
		}
	}
	// Let the scenario check the rest (load generator, mock, objectives; every problem
	// at once), before anything runs.
	if err := sc.Validate(); err != nil {
		return sc, invalid(errors.New(trimInvalid(err.Error())))
	}
	return sc, nil
}

// profileConflicts checks the flags that contradict each other (or the scenario file): they make everything else moot.
func profileConflicts(sc *scenario.Scenario, f *profileFlags, o *profileOpts, has func(...string) bool) error {
	if err := checkUIType(o.uiType); err != nil {
		return err
	}
	// Conflicting modes first: they make everything else moot.
	switch {
	case len(f.urls) > 0 && o.mock:
		return invalidf("--url and --mock conflict: profile a server at a URL or the in-process mock, not both")
	case has("request-rate") && f.fixedSchedule:
		return invalidf("--request-rate and --fixed-schedule conflict: the schedule sets the arrival times")
	case f.fixedSchedule && f.inputFile == "" && sc.InputFile == "":
		return invalidf("--fixed-schedule needs --input-file (a mooncake trace or a recording)")
	case has("isl-dist") && has("prompt-input-tokens-mean", "synthetic-input-tokens-mean", "isl", "prompt-input-tokens-stddev", "synthetic-input-tokens-stddev", "isl-stddev"):
		return invalidf("--isl-dist and --prompt-input-tokens-mean/-stddev conflict: give the input length one way")
	case has("osl-dist") && has("prompt-output-tokens-mean", "output-tokens-mean", "osl", "prompt-output-tokens-stddev", "output-tokens-stddev", "osl-stddev"):
		return invalidf("--osl-dist and --prompt-output-tokens-mean/-stddev conflict: give the output length one way")
	case f.rangeRatio != 0 && (f.islStd != 0 || f.oslStd != 0):
		return invalidf("--random-range-ratio and --prompt-*-tokens-stddev conflict: a length is either uniform in a range or normal")
	case has("request-count", "num-requests") && has("conversation-num", "num-conversations", "num-sessions"):
		return invalidf("--request-count and --conversation-num conflict: give the count once")
	}
	modes := 0
	for _, m := range []string{o.sweepConc, o.sweepRate, o.searchConc, o.searchRate} {
		if m != "" {
			modes++
		}
	}
	if modes > 1 {
		return invalidf("--sweep-concurrency, --sweep-rate, --search-concurrency and --search-rate conflict: pick one")
	}
	return nil
}

// profileTarget maps what is benchmarked: URLs or the mock, name, model, tokenizer, API, streaming, key and headers.
func profileTarget(sc *scenario.Scenario, f *profileFlags, o *profileOpts, has func(...string) bool) error {
	if len(f.urls) > 0 {
		sc.URLs = nil
		for _, raw := range f.urls {
			u, err := url.Parse(raw)
			if !strings.Contains(raw, "://") {
				u, err = url.Parse("http://" + raw) // aiperf accepts host:port
			}
			if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
				return invalidf("--url %q: want an http(s) URL such as http://127.0.0.1:8000", raw)
			}
			sc.URLs = append(sc.URLs, u.String())
		}
	}
	if o.mock {
		sc.URLs = nil
	}
	if sc.Mocked() && !o.mock && f.config == "" {
		return invalidf("--url is required (the server to profile), or --mock for the in-process mock server")
	}
	if f.name != "" {
		sc.Name = f.name
	}
	if f.tokenizer != "" {
		sc.Tokenizer = f.tokenizer
	}
	if f.endpointType != "" {
		if !slices.Contains(loadgen.Endpoints, f.endpointType) {
			return invalidf("--endpoint-type %q: want %s", f.endpointType, loadgen.OrList(loadgen.Endpoints))
		}
		sc.API = loadgen.Endpoint(f.endpointType)
	}
	if has("streaming") || f.config == "" {
		sc.NoStream = !f.streaming
	}
	if has("streaming") && f.streaming && !sc.Streams() {
		return invalidf("--streaming: endpoint %s does not stream", sc.API)
	}
	if f.apiKey != "" {
		sc.APIKey = loadgen.Secret(f.apiKey)
	}
	for _, h := range f.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return invalidf("--header %q: want \"Name: value\"", h)
		}
		if sc.Headers == nil {
			sc.Headers = map[string]string{}
		}
		sc.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return nil
}

// profileWorkload maps what is sent: extra body fields, ignore_eos, server token counts, the corpus, lengths and turns.
func profileWorkload(sc *scenario.Scenario, f *profileFlags, o *profileOpts, has func(...string) bool) error {
	for _, x := range f.extra {
		k, v, ok := strings.Cut(x, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return invalidf("--extra-inputs %q: want key:value", x)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		var val any = v
		if err := json.Unmarshal([]byte(v), &val); err != nil {
			val = v // a bare string
		}
		if k == "ignore_eos" && val == true {
			sc.IgnoreEOS = true
			continue
		}
		if sc.ExtraBody == nil {
			sc.ExtraBody = map[string]any{}
		}
		sc.ExtraBody[k] = val
	}
	if f.ignoreEOS {
		sc.IgnoreEOS = true
	}
	if f.serverTokens {
		sc.UsageOSL, sc.UsageISL = true, true
	}
	if f.corpus != "" {
		switch {
		case slices.Contains(loadgen.Corpora, f.corpus):
			sc.Corpus = f.corpus
		case f.corpus == "sonnet":
			sc.Corpus = loadgen.CorpusShakespeare // aiperf's name for the same idea
		default:
			return invalidf("--prompt-corpus %q: want %s", f.corpus, loadgen.OrList(loadgen.Corpora))
		}
	}
	// Lengths: a text distribution, or aiperf's mean/stddev/range-ratio.
	var err error
	if sc.ISL, err = lengthSpec("isl", f.islDist, f.islMean, f.islStd, f.rangeRatio, sc.ISL, has("isl-dist", "prompt-input-tokens-mean", "synthetic-input-tokens-mean", "isl")); err != nil {
		return err
	}
	if sc.OSL, err = lengthSpec("osl", f.oslDist, f.oslMean, f.oslStd, f.rangeRatio, sc.OSL, has("osl-dist", "prompt-output-tokens-mean", "output-tokens-mean", "osl")); err != nil {
		return err
	}
	// A stddev without its mean: the input's spreads the default length, as
	// AIPerf's does; the output has no default length here (the server's), so it is
	// refused rather than dropped.
	islMean := has("isl-dist", "prompt-input-tokens-mean", "synthetic-input-tokens-mean", "isl")
	if f.islStd > 0 && !islMean {
		if sc.ISL.Distribution != nil {
			return invalidf("--prompt-input-tokens-stddev %g needs --prompt-input-tokens-mean: the scenario file's isl (%v) has its own spread", f.islStd, sc.ISL)
		}
		d, err := distribution.Parse(fmt.Sprintf("normal:%d,%g", int(sc.InputLength().Distribution.Mean()), f.islStd))
		if err != nil {
			return invalidf("--prompt-input-tokens-stddev %g: %v", f.islStd, err)
		}
		sc.ISL = distribution.Spec{Distribution: d}
	}
	if f.oslStd > 0 && !has("osl-dist", "prompt-output-tokens-mean", "output-tokens-mean", "osl") {
		return invalidf("--prompt-output-tokens-stddev %g needs --prompt-output-tokens-mean: the output length has no default to spread (the server decides it)", f.oslStd)
	}
	if f.rangeRatio > 0 && sc.ISL.Distribution == nil {
		// --random-range-ratio without a mean spreads the default length, as vLLM does
		// (1,024 with the vllm corpus: [716, 1332] at 0.3), instead of being dropped.
		d, err := distribution.Parse(fmt.Sprintf("vllm-range:%d,%g", int(sc.InputLength().Distribution.Mean()), f.rangeRatio))
		if err != nil {
			return invalidf("--random-range-ratio %g: %v", f.rangeRatio, err)
		}
		sc.ISL = distribution.Spec{Distribution: d}
	}
	if has("conversation-turn-mean", "session-turns-mean") {
		if !(f.turnMean >= 1) || f.turnStd < 0 {
			return invalidf("--conversation-turn-mean %g / -stddev %g: want a mean >= 1 and a stddev >= 0", f.turnMean, f.turnStd)
		}
		text := fmt.Sprintf("fixed:%g", f.turnMean)
		if f.turnStd > 0 {
			text = fmt.Sprintf("normal:%g,%g", f.turnMean, f.turnStd)
		}
		d, err := distribution.Parse(text)
		if err != nil {
			return invalidf("--conversation-turn-mean: %v", err)
		}
		sc.Turns = distribution.Spec{Distribution: d}
	} else if has("conversation-turn-stddev", "session-turns-stddev") {
		return invalidf("--conversation-turn-stddev needs --conversation-turn-mean")
	}
	return nil
}

// profileLoad maps how it is sent and when it stops: concurrency, rate, counts, duration, timeouts, seed and arrivals.
func profileLoad(sc *scenario.Scenario, f *profileFlags, o *profileOpts, has func(...string) bool) error {
	for _, c := range []struct {
		name string
		v    float64
	}{{"--concurrency", float64(f.concurrency)}, {"--request-rate", f.rate}, {"--request-count", float64(f.requests)},
		{"--conversation-num", float64(f.conversations)}, {"--warmup-request-count", float64(f.warmup)}, {"--prefill-concurrency", float64(f.prefill)},
		{"--benchmark-duration", f.duration}, {"--request-timeout-seconds", f.timeout}, {"--burstiness", f.burstiness},
		{"--idle-timeout-seconds", f.idleTimeout}, {"--benchmark-grace-period", f.grace}} {
		if c.v < 0 || math.IsNaN(c.v) || math.IsInf(c.v, 0) {
			return invalidf("%s: want a value >= 0, got %v", c.name, c.v)
		}
	}
	if f.concurrency > 0 {
		sc.Concurrency = f.concurrency
	}
	if f.rate > 0 {
		sc.Rate = f.rate
	}
	if f.prefill > 0 {
		sc.PrefillConcurrency = f.prefill
	}
	if has("request-count", "num-requests") && f.requests == 0 {
		return invalidf("--request-count 0: a run needs at least one request (or --benchmark-duration)")
	}
	if has("conversation-num", "num-conversations", "num-sessions") && f.conversations == 0 {
		return invalidf("--conversation-num 0: a run needs at least one conversation")
	}
	if f.requests > 0 {
		sc.Requests = f.requests
	}
	if f.conversations > 0 {
		// The load generator stops on a request count: N conversations of T turns on
		// average are about N·T requests.
		sc.Requests = f.conversations
		if f.turnMean > 1 {
			sc.Requests = int(math.Round(float64(f.conversations) * f.turnMean))
		}
	}
	if f.warmup > 0 {
		sc.WarmupRequests = f.warmup
	}
	if f.duration > 0 {
		sc.Duration = time.Duration(f.duration * float64(time.Second))
	}
	seconds := func(flag string, v float64, dst *time.Duration) {
		if !has(flag) && *dst != 0 {
			return // the scenario file's value stands
		}
		*dst = time.Duration(v * float64(time.Second))
		if v == 0 {
			*dst = -1 // 0 on the command line means none; the field's zero is the default
		}
	}
	if has("request-timeout-seconds") && f.timeout == 0 {
		return invalidf("--request-timeout-seconds 0: want a positive timeout")
	}
	seconds("request-timeout-seconds", f.timeout, &sc.Timeout)
	seconds("idle-timeout-seconds", f.idleTimeout, &sc.IdleTimeout)
	seconds("benchmark-grace-period", f.grace, &sc.GracePeriod)
	if has("random-seed") {
		sc.Seed = f.seed
	}
	if f.arrival != "" {
		if !slices.Contains(loadgen.Arrivals, f.arrival) {
			return invalidf("--arrival %q: want %s", f.arrival, loadgen.OrList(loadgen.Arrivals))
		}
		sc.Arrival = f.arrival
		if sc.Rate == 0 && f.http.rateSeries == "" && len(sc.RateSeries) == 0 && !has("user-centric-rate") && sc.UserCentricRate == 0 {
			return invalidf("--arrival %s needs --request-rate or --request-rate-series", f.arrival)
		}
	}
	if f.burstiness > 0 {
		sc.Burstiness = f.burstiness
	}
	return nil
}

// profileInput maps an input file, its format and the fixed schedule.
func profileInput(sc *scenario.Scenario, f *profileFlags, o *profileOpts, has func(...string) bool) error {
	if f.inputFile != "" {
		if _, err := os.Stat(f.inputFile); err != nil {
			return invalidf("--input-file %s: %v", f.inputFile, unwrapPath(err))
		}
		sc.InputFile = f.inputFile
	}
	if f.inputFormat != "" {
		switch strings.ReplaceAll(f.inputFormat, "-", "_") {
		case "mooncake", "mooncake_trace":
			sc.InputFormat = loadgen.FormatMooncake
		case "payloads", "single_turn", "raw_payload":
			sc.InputFormat = loadgen.FormatPayloads
		case "sharegpt":
			sc.InputFormat = loadgen.FormatShareGPT
		case "recording":
			sc.InputFormat = loadgen.FormatRecording
		case loadgen.FormatAgentTrace:
			sc.InputFormat = loadgen.FormatAgentTrace
		default:
			return invalidf("--custom-dataset-type %q: want %s", f.inputFormat, loadgen.OrList(loadgen.InputFormats))
		}
	}
	if sc.InputFile != "" && scenario.IsClientRecording(sc.InputFile) {
		return invalidf("--input-file %s: a perfgate client recording (client.jsonl) holds what was measured, not the requests sent; replay a mock server's recording (perfgate mock --record-requests FILE) instead", sc.InputFile)
	}
	if sc.InputFile != "" && sc.InputFormat == "" {
		sc.InputFormat = scenario.GuessInputFormat(sc.InputFile)
	}
	if f.fixedSchedule {
		sc.Schedule = true
	}
	return nil
}

// profileExtras maps AIPerf's other flags and the server metrics.
func profileExtras(sc *scenario.Scenario, f *profileFlags, o *profileOpts, has func(...string) bool) error {
	if err := applyAIPerf(sc, f, has); err != nil {
		return err
	}
	if err := applyPrefixFlags(sc, &f.prefix, has); err != nil {
		return err
	}
	if err := applyMedia(sc, &f.media, has); err != nil {
		return err
	}
	if err := applyHTTPFlags(sc, &f.http, has); err != nil {
		return err
	}
	if err := applyServerMetrics(sc, f, has("server-metrics-interval")); err != nil {
		return err
	}
	if err := applyGPUTelemetry(sc, f, has("server-metrics-interval")); err != nil {
		return err
	}
	if err := applyLiveFlags(&f.live, &o.live, has); err != nil {
		return err
	}
	return nil
}

// profileObjectives maps the gate: goodput SLO, assertions, length fits, and the run-mode settings that depend on them.
func profileObjectives(sc *scenario.Scenario, f *profileFlags, o *profileOpts, has func(...string) bool) error {
	if f.goodput != "" {
		slo, err := metric.ParseSLO(f.goodput)
		if err != nil {
			return invalidf("--goodput: %v", err)
		}
		sc.Objectives.SLO = slo
		sc.SLO = slo
	}
	if err := applyAsserts(sc, f.asserts); err != nil {
		return err
	}
	for _, d := range []struct {
		flag, text string
		dst        *distribution.Spec
	}{{"--assert-isl", o.assertISL, &sc.Objectives.ISLFit}, {"--assert-osl", o.assertOSL, &sc.Objectives.OSLFit}} {
		if d.text == "" {
			continue
		}
		dist, err := distribution.Parse(d.text)
		if err != nil {
			return distError(d.flag, d.text, err, "normal:512,64")
		}
		*d.dst = distribution.Spec{Distribution: dist}
	}
	if has("alpha") {
		sc.Objectives.Alpha = o.alpha
	}
	if !(o.alpha > 0 && o.alpha < 1) {
		return invalidf("--alpha: want a level in (0, 1), got %g", o.alpha)
	}
	if o.numRuns < 1 {
		return invalidf("--num-runs: want at least 1, got %d", o.numRuns)
	}
	if !(o.confidence > 0 && o.confidence < 1) {
		return invalidf("--confidence: want a level in (0, 1), got %g", o.confidence)
	}
	// Failed requests always fail the gate (Objectives.MaxErrorRate's zero value):
	// --assert error_rate<=X or the file's max_error_rate raise the limit, and
	// error_rate<=1 opts out.
	o.hasAsserts = objectivesSet(sc.Objectives)
	if sc.Name == "" {
		sc.Name = "profile"
	}
	if (o.searchConc != "" || o.searchRate != "") && !o.hasAsserts {
		return invalidf("--search-* needs assertions to search against, e.g. --assert goodput>=0.95 --goodput \"time_to_first_token:200\"")
	}
	if o.searchRate != "" || o.sweepRate != "" {
		if sc.Schedule {
			return invalidf("--sweep-rate/--search-rate and --fixed-schedule conflict")
		}
		if len(sc.RateSeries) > 0 {
			return invalidf("--sweep-rate/--search-rate and --request-rate-series conflict: a series sets the rate over time")
		}
	}
	return nil
}

// aiperfFlags registers AIPerf's flags whose meaning perfgate already has under
// another name or as a small mapping (applyAIPerf); README's flag table lists them.
func aiperfFlags(fs *flag.FlagSet, f *profileFlags) {
	fs.StringVar(&f.exportPrefix, "profile-export-prefix", "", "[output] name the AIPerf exports PREFIX_aiperf.json, PREFIX_aiperf.csv and PREFIX.jsonl (default profile_export)")
	fs.StringVar(&f.exportPrefix, "profile-export-file", "", "[output] AIPerf's older name of --profile-export-prefix (a .json or .jsonl ending is dropped)")
	fs.StringVar(&f.exportLevel, "export-level", "", "[output] summary (the aggregate exports only) or records (also the per-request JSONL; the default)")
	fs.Float64Var(&f.sliceDuration, "slice-duration", 0, "[output] seconds: write PREFIX_aiperf_timeslices.csv and .json, each metric per time slice of this width (by send time, from the first measured request), and draw report.html's charts over time on the same slices")
	fs.StringVar(&f.urlStrategy, "url-strategy", "", "[target] with several --url: "+loadgen.OrList(loadgen.Routings)+" (default round_robin)")
	fs.Float64Var(&f.cancelRate, "request-cancellation-rate", 0, "[workload] percent (0-100) of requests cancelled after --request-cancellation-delay")
	fs.Float64Var(&f.cancelDelay, "request-cancellation-delay", 0, "[workload] seconds after sending that a --request-cancellation-rate request is cancelled")
	fs.Float64Var(&f.rampDuration, "concurrency-ramp-duration", 0, "[load] seconds over which closed-loop workers start (1 → --concurrency)")
	fs.Float64Var(&f.rampDuration, "request-rate-ramp-duration", 0, "[load] seconds over which the open-loop rate ramps up to --request-rate")
	fs.Float64Var(&f.warmupDuration, "warmup-duration", 0, "[recording] seconds at the start whose requests are warmup (left out of the metrics)")
	for _, n := range []string{"conversation-turn-delay-mean", "session-turn-delay-mean"} {
		fs.Float64Var(&f.turnDelayMean, n, 0, "[workload] mean pause between a turn's response and the next turn, ms")
	}
	for _, n := range []string{"conversation-turn-delay-stddev", "session-turn-delay-stddev"} {
		fs.Float64Var(&f.turnDelayStd, n, 0, "[workload] stddev of the pause between turns, ms")
	}
	fs.IntVar(&f.prefixTokens, "shared-system-prompt-length", 0, "[workload] tokens of a system prompt every request starts with (counted in ISL)")
	registerPrefixFlags(fs, &f.prefix)
	for _, n := range []string{"prompt-input-tokens-block-size", "synthetic-input-tokens-block-size", "isl-block-size"} {
		fs.IntVar(&f.blockTokens, n, 0, "[workload] tokens per mooncake hash block (default 512)")
	}
	fs.IntVar(&f.passages, "rankings-passages-mean", 0, "[workload] passages per rankings/rerank request (default 2)")
	fs.BoolVar(&f.legacyMaxTokens, "use-legacy-max-tokens", false, "[target] send the output cap as max_tokens instead of max_completion_tokens")
}

// applyAIPerf maps the flags aiperfFlags registered onto the scenario.
func applyAIPerf(sc *scenario.Scenario, f *profileFlags, has func(...string) bool) error {
	if f.exportPrefix != "" {
		// aiperf accepts a file name: profile_export.json → profile_export
		sc.Exports.Prefix = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f.exportPrefix), ".jsonl"), ".json")
	}
	if has("slice-duration") {
		if d := f.sliceDuration; d != 0 && !(d >= 0.001 && d <= 1e6) {
			return invalidf("--slice-duration %v: want seconds between 0.001 and 1e6, e.g. 10", d)
		}
		sc.Exports.SliceDuration = f.sliceDuration
	}
	switch f.exportLevel {
	case "":
	case scenario.ExportSummary, scenario.ExportRecords:
		sc.Exports.Level = f.exportLevel
	case "raw":
		return invalidf("--export-level raw: not supported; perfgate's client.jsonl already holds every request's record (chunk times, status, errors)")
	default:
		return invalidf("--export-level %q: want summary or records", f.exportLevel)
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"--request-cancellation-delay", f.cancelDelay}, {"--concurrency-ramp-duration", f.rampDuration}, {"--warmup-duration", f.warmupDuration},
		{"--conversation-turn-delay-mean", f.turnDelayMean}, {"--conversation-turn-delay-stddev", f.turnDelayStd},
		{"--shared-system-prompt-length", float64(f.prefixTokens)}, {"--isl-block-size", float64(f.blockTokens)}, {"--rankings-passages-mean", float64(f.passages)}} {
		if c.v < 0 || math.IsNaN(c.v) || math.IsInf(c.v, 0) {
			return invalidf("%s: want a value >= 0, got %v", c.name, c.v)
		}
	}
	secs := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	if f.urlStrategy != "" {
		if !slices.Contains(loadgen.Routings, f.urlStrategy) {
			return invalidf("--url-strategy %q: want %s", f.urlStrategy, loadgen.OrList(loadgen.Routings))
		}
		sc.Routing = f.urlStrategy
	}
	if has("request-cancellation-rate") {
		if !(f.cancelRate > 0 && f.cancelRate <= 100) {
			return invalidf("--request-cancellation-rate %v: want a percentage in (0, 100]", f.cancelRate)
		}
		sc.CancelFraction = f.cancelRate / 100
		// AIPerf's delay 0 means "cancel as soon as it is sent".
		sc.CancelAfter = max(secs(f.cancelDelay), time.Microsecond)
	} else if has("request-cancellation-delay") {
		return invalidf("--request-cancellation-delay needs --request-cancellation-rate")
	}
	if f.rampDuration > 0 {
		sc.Ramp = secs(f.rampDuration)
	}
	if f.warmupDuration > 0 {
		sc.WarmupDuration = secs(f.warmupDuration)
	}
	if f.turnDelayMean > 0 {
		text := fmt.Sprintf("fixed:%g", f.turnDelayMean/1000)
		if f.turnDelayStd > 0 {
			text = fmt.Sprintf("normal:%g,%g", f.turnDelayMean/1000, f.turnDelayStd/1000)
		}
		d, err := distribution.Parse(text)
		if err != nil {
			return invalidf("--conversation-turn-delay-mean: %v", err)
		}
		sc.TurnDelay = distribution.Spec{Distribution: d}
	} else if f.turnDelayStd > 0 {
		return invalidf("--conversation-turn-delay-stddev %g needs --conversation-turn-delay-mean: there is no default pause to spread", f.turnDelayStd)
	}
	if f.prefixTokens > 0 {
		sc.PrefixTokens = f.prefixTokens
	}
	if f.blockTokens > 0 {
		sc.BlockTokens = f.blockTokens
	}
	if f.passages > 0 {
		sc.Passages = f.passages
	}
	if f.legacyMaxTokens {
		sc.OSLField = loadgen.OSLMaxTokens
	}
	return nil
}

// applyServerMetrics maps --server-metrics and --server-metrics-interval onto the
// scenario, checking each URL before anything runs.
func applyServerMetrics(sc *scenario.Scenario, f *profileFlags, intervalSet bool) error {
	for _, u := range f.serverMetrics {
		one := servermetrics.Config{URLs: []string{u}}
		if err := one.Validate(); err != nil {
			msg := strings.TrimPrefix(err.Error(), servermetrics.ErrInvalidConfig.Error()+": ")
			return invalidf("--server-metrics: %s", msg)
		}
		sc.ServerMetrics.URLs = append(sc.ServerMetrics.URLs, u)
	}
	if intervalSet {
		v := f.serverMetricsInterval
		if !(v > 0) || math.IsInf(v, 0) {
			return invalidf("--server-metrics-interval %v: want a positive number of seconds", v)
		}
		if !sc.ServerMetrics.Enabled() && len(f.gpuTelemetry) == 0 {
			return invalidf("--server-metrics-interval needs --server-metrics or --gpu-telemetry URL")
		}
		if sc.ServerMetrics.Enabled() {
			sc.ServerMetrics.Interval = time.Duration(v * float64(time.Second))
		}
	}
	return nil
}

// applyGPUTelemetry maps --gpu-telemetry onto the scenario, checking each URL before
// anything runs; its scrapes share --server-metrics-interval.
func applyGPUTelemetry(sc *scenario.Scenario, f *profileFlags, intervalSet bool) error {
	for _, v := range f.gpuTelemetry {
		for _, u := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
			one := servermetrics.Config{URLs: []string{u}}
			if err := one.Validate(); err != nil {
				msg := strings.TrimPrefix(err.Error(), servermetrics.ErrInvalidConfig.Error()+": ")
				return invalidf("--gpu-telemetry: %s", msg)
			}
			sc.GPUTelemetry.URLs = append(sc.GPUTelemetry.URLs, u)
		}
	}
	if intervalSet && sc.GPUTelemetry.Enabled() {
		sc.GPUTelemetry.Interval = time.Duration(f.serverMetricsInterval * float64(time.Second))
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// objectivesSet reports whether any objective was declared (the error-rate gate's
// zero value, "no failed request", does not count as declared).
func objectivesSet(o scenario.Objectives) bool {
	//lint:ignore SA1019 the deprecated structured objectives still count as declared until they are removed (v0.3.0)
	deprecated := o.Goodput > 0 || len(o.Bounds) > 0 || o.MinOutputTokenThroughput > 0 || o.MinRequestThroughput > 0 || o.TokenizerMatch
	return deprecated || len(o.Rules) > 0 || o.MaxErrorRate > 0 || o.ISLFit.Distribution != nil || o.OSLFit.Distribution != nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// lengthSpec turns a length's flags into a distribution: the text form wins, else
// aiperf's mean (+ stddev → normal, + range ratio → vLLM range), else the config's.
func lengthSpec(which, text string, mean, std, ratio float64, def distribution.Spec, given bool) (distribution.Spec, error) {
	flagName := "--" + which + "-dist"
	if text == "" {
		if !given {
			return def, nil
		}
		switch {
		case !(mean >= 1):
			return def, invalidf("--prompt-%s-tokens-mean: want a length >= 1, got %g", map[string]string{"isl": "input", "osl": "output"}[which], mean)
		case ratio > 0:
			text = fmt.Sprintf("vllm-range:%g,%g", mean, ratio)
		case std > 0:
			text = fmt.Sprintf("normal:%g,%g", mean, std)
		default:
			text = fmt.Sprintf("fixed:%g", mean)
		}
		flagName = "--prompt-" + map[string]string{"isl": "input", "osl": "output"}[which] + "-tokens-mean/-stddev"
	}
	d, err := distribution.Parse(text)
	if err != nil {
		example := map[string]string{"isl": "normal:512,64", "osl": "fixed:128"}[which]
		if !strings.HasSuffix(flagName, "-dist") {
			example = "" // the text was made from the mean and stddev flags
		}
		return def, distError(flagName, text, err, example)
	}
	if m := d.Mean(); !(m >= 1) || math.IsInf(m, 0) {
		return def, invalidf("%s %q: a token length needs a mean >= 1, this has %g", flagName, text, m)
	}
	return distribution.Spec{Distribution: d}, nil
}

// assertHelp is --assert's help, its metric names from the catalogue.
func assertHelp() string {
	return "assertion (repeatable): METRIC_pNN<=VALUE or METRIC_pNN>=VALUE, a percentile of a per-request metric (" +
		check.MetricNames() + "; latencies as 250ms; docs/metrics.md), e.g. ttft_p99<=250ms, itl_p50<=20ms, latency_p95<=2s; " +
		"goodput>=0.95, error_rate<=0.01, output_token_throughput>=1000, request_throughput>=10, tokenizer_match (or tokenizer_match<=N tokens)"
}

// applyAsserts appends every --assert expression to the scenario's rules, each parsed
// by check.ParseRule (the one rule parser; bare latency numbers are ms, as aiperf's).
func applyAsserts(sc *scenario.Scenario, asserts []string) error {
	for _, a := range asserts {
		if _, err := check.ParseRule(a); err != nil {
			return invalidf("--assert: %v", err)
		}
		sc.Objectives.Rules = append(sc.Objectives.Rules, a)
	}
	return nil
}

// readScenario reads a scenario file (YAML, or JSON) with scenario.ReadFile. Its
// errors are positioned (FILE:LINE:COL: …), one line each, all of them.
func readScenario(path string) (scenario.Scenario, error) {
	sc, err := scenario.ReadFile(path)
	if err != nil {
		var fe *scenario.FileError
		if errors.As(err, &fe) {
			return sc, invalid(err)
		}
		return sc, invalidf("--config %s: %v", path, strings.TrimPrefix(unwrapPath(err).Error(), "scenario: "))
	}
	return sc, nil
}

// preflight is perfrun.Preflight (connect, then /v1/models and the model), its
// failure an invalid-configuration error naming the flag.
func preflight(ctx context.Context, sc scenario.Scenario, wait time.Duration) error {
	check := func() error { return perfrun.Preflight(ctx, sc) }
	if wait > 0 {
		check = func() error { return perfrun.WaitForModel(ctx, sc, wait) }
	}
	if err := check(); err != nil {
		if errors.Is(err, context.Canceled) {
			return &exitError{ExitInterrupted, errors.New("interrupted while waiting for the model")}
		}
		msg := strings.TrimPrefix(strings.TrimPrefix(err.Error(), perfrun.ErrPreflight.Error()+": "), strings.Join(sc.URLs, ", ")+": ")
		if strings.Contains(msg, "cannot connect") {
			msg += " (--mock profiles the in-process mock)"
		}
		return invalidf("--url %s: %s", strings.Join(sc.URLs, ", "), msg)
	}
	return nil
}

// artifactPath returns dir made absolute for printing.
func artifactPath(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
