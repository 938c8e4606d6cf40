package mockserver_test

import (
	"flag"
	"fmt"

	"github.com/perfgate/perfgate/mockserver"
)

// The aiperf-mock-server flags fill a Config, which Serve (or New) runs.
func ExampleConfig_RegisterFlags() {
	var cfg mockserver.Config
	fs := flag.NewFlagSet("mock", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	_ = fs.Parse([]string{"--tokenizer", "cl100k_base", "--ttft", "lognormal:mean=40,stddev=10", "--itl", "8",
		"--error-rate", "2.5", "--random-seed", "7", "--record-requests", "requests.jsonl"})
	fmt.Println(cfg.Tokenizer, cfg.TTFT, cfg.ITL, cfg.Faults.ErrorRate, cfg.Seed, cfg.RecordFile)
	// Output:
	// cl100k_base lognormal:mean=40,stddev=10 fixed:8 0.025 7 requests.jsonl
}
