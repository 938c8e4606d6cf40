package scenario

import "fmt"

// Artifact file names written by [Run] into its artifact directory.
const (
	ClientFile        = "client.jsonl"        // client recording, one record.Client per line
	ServerFile        = "server.jsonl"        // mock server recording (mock only)
	ServerSummaryFile = "server.summary.json" // mock server summary (mock only)
	MetricsFile       = "metrics.json"        // record.Metrics
	ScenarioFile      = "scenario.json"       // the scenario as run (API key removed)
)

// Scenario describes one benchmark run. It is plain data: printable with %+v, readable
// from JSON or YAML, the same type `perfgate profile` fills from a file.
type Scenario struct {
	// Name names the run in messages and artifacts; "" = "scenario".
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
	// Seed seeds every random choice (lengths, prompts, arrivals, the mock's latencies).
	Seed uint64 `json:"seed,omitempty" yaml:"seed,omitempty"`
	// Objectives are the pass/fail rules checked by Outcome.Check.
	Objectives Objectives `json:"objectives,omitzero" yaml:"objectives,omitempty"`
}

// LoadString describes the load mode, e.g. "concurrency=10" or "Poisson{20 req/s}".
func (s Scenario) LoadString() string {
	return fmt.Sprintf("seed=%d", s.Seed)
}
