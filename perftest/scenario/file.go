package scenario

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/loadgen"
)

// ReadFile reads a scenario from a JSON file, or from YAML when the name ends in .yaml
// or .yml. Both use the JSON field names ("concurrency", "isl", "mock": {"ttft_ms": …});
// durations are Go duration text such as "30s" (a bare number is an error: it has no
// unit), distributions their text form ("normal:128,20"), rules check.ParseRule's
// text. The file is checked before it is decoded, and every problem is reported at
// once (errors.Join), each as FILE:LINE:COL and wrapping [ErrInvalidScenario]:
//
//	chat.yaml:4:1: unknown field "concurency" (did you mean "concurrency"?)
//	chat.yaml:7:11: duration: 30: want Go duration text such as "250ms" or "30s" (a bare number has no unit)
//	chat.yaml:9:8: arrival "posson": want poisson, constant or gamma
//
// The mock's latencies are the exception to duration text: mock.ttft_ms and
// mock.itl_ms are distributions of milliseconds ("fixed:20"), as mockserver.Config
// documents, and its other *_ms fields numbers of milliseconds.
func ReadFile(path string) (Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, fmt.Errorf("scenario: %w", err)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return DecodeFile(path, b, true)
	}
	return DecodeFile(path, b, false)
}

// Parse reads a scenario from JSON, as [ReadFile] reads a file (errors are positioned
// as "input:LINE:COL").
func Parse(data []byte) (Scenario, error) { return DecodeFile("input", data, false) }

// Validate reports every problem of s at once (errors.Join), each wrapping
// [ErrInvalidScenario]: the load generator's and the mock's configuration, and the
// objectives. It sends nothing and loads no tokenizer.
func (s Scenario) Validate() error {
	s = s.WithDefaults()
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidScenario}, a...)...))
	}
	cfg := s.Config
	if s.Mocked() {
		cfg.URLs = []string{"http://127.0.0.1:1"} // where the mock will listen
		if err := s.Mock.Validate(); err != nil {
			bad("mock: %v", err)
		}
	}
	if len(s.Classes) == 0 {
		if err := cfg.Validate(); err != nil {
			bad("%v", err)
		}
	}
	for i := range s.Classes {
		cc := s.ClassConfig(i, cfg)
		if err := cc.Validate(); err != nil {
			bad("%s: %v", ClassAt(i, s.Classes[i].Name), err)
		}
	}
	for _, p := range s.classProblems() {
		bad("%s", p)
	}
	for _, p := range s.scopeProblems() {
		bad("%s", p)
	}
	if err := s.ServerMetrics.Validate(); err != nil {
		bad("server_metrics: %v", err)
	}
	if err := s.GPUTelemetry.Validate(); err != nil {
		bad("gpu_telemetry: %v", err)
	}
	if err := s.validateServer(); err != nil {
		bad("%v", err)
	}
	if err := s.Regression.Validate(); err != nil {
		errs = append(errs, err)
	}
	if l := s.Exports.Level; l != "" && !slices.Contains(ExportLevels, l) {
		bad("exports.level %q: want %s", l, loadgen.OrList(ExportLevels))
	}
	if d := s.Exports.SliceDuration; d != 0 && !(d >= 0.001 && d <= 1e6) {
		bad("exports.slice_duration %v: want seconds between 0.001 and 1e6, e.g. 10", d)
	}
	if p := s.Exports.Prefix; strings.ContainsAny(p, `/\`) || p == "." || p == ".." {
		bad("exports.prefix %q: want a file name prefix, not a path", p)
	}
	s.Validity.Validate(bad)
	s.Abort.validate(bad)
	for _, p := range s.tailProblems() {
		bad("%s", p)
	}
	if rs, err := s.Objectives.ParseRules(); err == nil && len(s.RunModels()) > 0 {
		for _, r := range rs {
			if m := r.Model(); m != "" && !slices.Contains(s.RunModels(), m) {
				bad("objectives: %s is scoped to model %q, which the run does not send to (models: %s)", r, m, strings.Join(s.RunModels(), ", "))
			}
		}
	}
	o := s.Objectives
	if err := o.SLO.Err(); err != nil {
		for _, e := range strings.Split(err.Error(), "\n") {
			bad("objectives.%s", e)
		}
	}
	if !(o.Goodput >= 0 && o.Goodput <= 1) {
		bad("objectives.goodput %v: want a fraction in [0, 1]", o.Goodput)
	}
	if !(o.Confidence >= 0 && o.Confidence < 1) {
		bad("objectives.confidence %v: want a fraction in (0, 1)", o.Confidence)
	}
	if math.IsNaN(o.MaxErrorRate) || o.MaxErrorRate > 1 {
		bad("objectives.max_error_rate %v: want a fraction <= 1", o.MaxErrorRate)
	}
	if !(o.Alpha >= 0 && o.Alpha < 1) {
		bad("objectives.alpha %v: want a level in (0, 1)", o.Alpha)
	}
	if o.TokenizerTolerance < 0 {
		bad("objectives.tokenizer_tolerance %d: want a number of tokens >= 0", o.TokenizerTolerance)
	}
	if _, err := o.ParseRules(); err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			bad("%v", e)
		}
	}
	for i, b := range o.Bounds {
		if err := b.Err(); err != nil {
			for _, e := range strings.Split(err.Error(), "\n") {
				bad("objectives.bounds[%d]: %s", i, e)
			}
		}
	}
	return errors.Join(errs...)
}

// GuessInputFormat returns the loadgen input format of the file at path from its first
// line: loadgen.FormatMooncake for a mooncake trace (hash_ids or input_length),
// loadgen.FormatRecording for a mock server recording (tokenization_mode),
// loadgen.FormatShareGPT for ShareGPT conversations, else loadgen.FormatPayloads (also
// when the file cannot be read: the load generator then reports the file).
func GuessInputFormat(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return loadgen.FormatPayloads
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	switch {
	case isClientRecord(line):
		return loadgen.FormatPayloads // no format replays it: see IsClientRecording
	case strings.Contains(line, `"hash_ids"`) || strings.Contains(line, `"input_length"`):
		return loadgen.FormatMooncake
	case strings.Contains(line, `"tokenization_mode"`):
		return loadgen.FormatRecording
	case strings.Contains(line, `"conversations"`):
		return loadgen.FormatShareGPT
	}
	return loadgen.FormatPayloads
}

// isClientRecord reports whether a recording's first line is a perfgate client record
// (client.jsonl): every client record carries run_start_unix_ns, which no server
// record has. Chat client records carry tokenization_mode too, so that field alone
// does not tell a server recording.
func isClientRecord(line string) bool {
	return strings.Contains(line, `"run_start_unix_ns"`)
}

// IsClientRecording reports whether the file at path is a perfgate client recording
// (client.jsonl), which holds what was measured but not the request bodies: no input
// format replays it (a mock server's recording, --record-requests, does).
func IsClientRecording(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	return isClientRecord(line)
}
