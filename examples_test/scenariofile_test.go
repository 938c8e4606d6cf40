package examples_test

import (
	"testing"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/perftest"
	"github.com/perfgate/perfgate/perftest/scenario"
)

// TestScenarioFile runs a scenario kept as YAML, with the pass/fail rules it declares,
// so that the test and `perfgate profile testdata/chat.yaml` gate on the same thing.
func TestScenarioFile(t *testing.T) {
	sc, err := scenario.ReadFile("testdata/chat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res := perftest.Run(t, sc)
	res.AssertObjectives(t) // error rate, goodput, TTFT p50, ISL p50
	res.AssertISL(t, distribution.Normal{Mu: 256, Sigma: 32})
	// gpt2 has no chat template: the mock renders ChatML, and so does the client for
	// each request it sends, so the counts agree exactly.
	res.AssertTokenizerMatch(t)
}
