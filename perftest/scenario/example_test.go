package scenario_test

import (
	"fmt"

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
