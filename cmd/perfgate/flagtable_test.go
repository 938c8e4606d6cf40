package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
)

// flagValues are the non-default values TestEveryProfileFlagCounts gives the flags
// whose type alone does not say what a valid value is.
var flagValues = map[string]string{
	"connection-reuse-strategy": "sticky-user-sessions", "session-header": "X-Session-Id",
	"H": "X-Test: 1", "header": "X-Test: 1", "api-key": "sk-test",
	"arrival": "gamma", "arrival-pattern": "gamma", "request-rate-mode": "gamma",
	"artifact-dir": "elsewhere", "output-artifact-dir": "elsewhere", "summary-md": "summary.md",
	"ui-type": "none", "ui": "simple",
	"assert": "ttft_p50<=1s", "assert-isl": "normal:128,10", "assert-osl": "fixed:16",
	"baseline": "base-dir", "baseline-url": "http://127.0.0.1:1/base", "branch": "main", "build": "b1", "commit": "abc123",
	"cache-reset-url":    "http://127.0.0.1:1/reset_prefix_cache",
	"check-client-bound": "warn", "check-client-bound-gross": "warn", "prefix-popularity": "zipf:1.1", "prefix-buckets": "8x2:1", "abort-on": "error_rate>0.5", "check-client-limits": "warn", "check-steady-state": "fail", "check-tail-samples": "warn", "check-warm-cache": "off", "check-client-distorted": "fail",
	"coordinator": "127.0.0.1:1", "coordinator-listen": "127.0.0.1:0",
	"custom-dataset-type": "mooncake", "input-format": "mooncake", "input-file": "TESTDATA",
	"endpoint-type": "completions", "export-level": "summary", "extra-inputs": "temperature:0.5",
	"gate-fail": "inconclusive", "goodput": "time_to_first_token:200", "history": "hist-dir", "ignore-workload": "seed",
	"isl-dist": "fixed:64", "osl-dist": "fixed:8", "m": "other", "model": "other", "model-names": "other",
	"model-selection-strategy": "random", "model-weights": "3,1", "tool-choice": "required", "tools-file": "tools.json",
	"margin": "0.1", "prior-cv": "0.03", "session-cv": "0.02", "name": "named", "profile-export-file": "x.json", "profile-export-prefix": "x",
	"prompt-corpus": "vllm", "random-corpus-style": "vllm", "search-concurrency": "1:8", "search-rate": "1:8",
	"server-metrics": "/metrics", "gpu-telemetry": "http://127.0.0.1:1/metrics", "out": "prometheus-rw=http://127.0.0.1:1/api/v1/write", "server-cmd": "srv", "baseline-server-cmd": "srv", "server-ready": "/v1/models", "start-at": "2030-01-01T00:00:00Z", "sweep-concurrency": "1,2", "sweep-rate": "1,2",
	"tokenizer": "cl100k_base", "topology": "a,b", "u": "http://127.0.0.1:2", "url": "http://127.0.0.1:2",
	"url-strategy": "least_outstanding", "config": "CONFIG",
	// Numbers whose type's generic non-default is not valid for them.
	"confidence": "0.9", "alpha": "0.05", "max-client-cpu": "0.5", "max-cache-hit-rate": "0.5", "max-client-overhead-ms": "3",
	"request-cancellation-rate": "10", "shard-index": "1",
	"image-format": "jpeg", "image-dir": "IMAGEDIR", "audio-dir": "IMAGEDIR", "audio-format": "mp3", "audio-sample-rates": "44.1", "audio-depths": "16",
	"audio-num-channels":  "2",
	"request-rate-series": `[{"time_s":0,"qps":5},{"time_s":10,"qps":9}]`, "tls-ca": "CERT", "transport": "goroutines",
}

// TestEveryProfileFlagCounts gives every profile flag alone a non-default value and
// checks that it changes the scenario (scenario.json), or the run's options, or is
// refused with a reason: no flag can be silently ignored.
func TestEveryProfileFlagCounts(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.jsonl")
	if err := os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [1]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cert, _ := testutil.TLSCert(t)
	cfgFile := filepath.Join(dir, "sc.yaml")
	if err := os.WriteFile(cfgFile, []byte("name: from-file\nconcurrency: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(args ...string) (sc, opts string, err error) {
		var f profileFlags
		var o profileOpts
		fs := flag.NewFlagSet("profile", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		registerProfileFlags(fs, &f, &o)
		if err := fs.Parse(append([]string{"--url", "http://127.0.0.1:1"}, args...)); err != nil {
			return "", "", err
		}
		s, err := buildScenario(fs, &f, &o)
		if err == nil {
			err = applyShardFlags(&s, &o)
		}
		b, _ := json.Marshal(s)
		return string(b), fmt.Sprintf("%+v %+v", o, f.apiKey != ""), err
	}
	baseSc, baseOpts, err := build()
	if err != nil {
		t.Fatalf("no flags: %v", err)
	}
	var f profileFlags
	var o profileOpts
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	registerProfileFlags(fs, &f, &o)
	n := 0
	fs.VisitAll(func(fl *flag.Flag) {
		if fl.Name == "help-all" {
			return
		}
		val, ok := flagValues[fl.Name]
		switch {
		case ok:
			val = strings.NewReplacer("TESTDATA", trace, "CONFIG", cfgFile, "CERT", cert, "IMAGEDIR", dir).Replace(val)
		case isBool(fl):
			val = strconv.FormatBool(fl.DefValue != "true")
		default:
			if d, err := time.ParseDuration(fl.DefValue); err == nil && strings.ContainsAny(fl.DefValue, "smh") {
				val = (2*d + time.Second).String()
			} else if x, err := strconv.ParseFloat(fl.DefValue, 64); err == nil {
				val = strconv.FormatFloat(x*2+3, 'f', -1, 64)
			} else {
				t.Errorf("--%s (%T, default %q): add a non-default value to flagValues", fl.Name, fl.Value, fl.DefValue)
				return
			}
		}
		n++
		sc, opts, err := build("--" + fl.Name + "=" + val)
		switch {
		case err != nil:
			if strings.TrimSpace(err.Error()) == "" {
				t.Errorf("--%s=%s is refused without a reason", fl.Name, val)
			}
		case sc == baseSc && opts == baseOpts:
			t.Errorf("--%s=%s changes neither scenario.json nor the run's options, and is not refused: silently ignored", fl.Name, val)
		}
	})
	if n < 100 {
		t.Errorf("%d flags tried; the flag set has more", n)
	}
}

func isBool(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
