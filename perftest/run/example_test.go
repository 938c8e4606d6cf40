package run_test

import (
	"context"
	"fmt"
	"os"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
)

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
	out, err := run.Run(context.Background(), sc, dir)
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
