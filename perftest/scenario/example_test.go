package scenario_test

import (
	"context"
	"fmt"
	"os"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// Parse reads a scenario as a file gives it: JSON field names, durations as text,
// distributions as specs, objectives as rules.
func ExampleParse() {
	sc, err := scenario.Parse([]byte(`{
		"name": "chat",
		"isl": "normal:512,64",
		"osl": "fixed:128",
		"concurrency": 16,
		"requests": 400,
		"timeout": "30s",
		"objectives": {"rules": ["ttft_p99 <= 250ms", "tokenizer_match"]}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sc.Name, sc.ISL, sc.OSL, sc.Concurrency, sc.Requests, sc.Timeout)
	fmt.Println(sc.Objectives.Rules)
	// Output:
	// chat normal:512,64 fixed:128 16 400 30s
	// [ttft_p99 <= 250ms tokenizer_match]
}

// A bad file is refused before anything runs, every problem at its line and column.
func ExampleParse_errors() {
	_, err := scenario.Parse([]byte(`{
  "concurency": 16,
  "timeout": 30
}`))
	fmt.Println(err)
	// Output:
	// input:2:3: unknown field "concurency" (did you mean "concurrency"?)
	// input:3:14: timeout: 30: want Go duration text such as "250ms" or "30s" (a bare number has no unit)
}

// Run runs a scenario outside go test, as `perfgate profile` does: here against the
// in-process mock server (no URLs), into an artifact directory, then gates the outcome.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "example-run")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	sc := scenario.Scenario{
		Name: "example",
		Config: loadgen.Config{
			Workload: loadgen.Workload{ISL: distribution.MustSpec("fixed:32"), OSL: distribution.MustSpec("fixed:8"), Seed: 1},
			Load:     loadgen.Load{Concurrency: 4},
			Stop:     loadgen.Stop{Requests: 40},
		},
	}
	out, err := scenario.Run(context.Background(), sc, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	recs, err := out.Records()
	if err != nil {
		fmt.Println(err)
		return
	}
	failed := 0
	for _, r := range recs {
		if r.Error != "" {
			failed++
		}
	}
	fmt.Printf("%d requests recorded, %d failed\n", len(recs), failed)
	for _, v := range out.Verdicts(check.KindHealth) {
		fmt.Println(v.Check, v.Pass)
	}
	// Output:
	// 40 requests recorded, 0 failed
	// completed true
	// error-rate true
}
