package run

// Artifact file names written by [Run] into its artifact directory.
const (
	ClientFile   = "client.jsonl"  // client recording, one record.Client per line
	ServerFile   = "server.jsonl"  // mock server recording, one record.Server per line (mock only)
	MetricsFile  = "metrics.json"  // record.Metrics of the client recording
	ScenarioFile = "scenario.json" // the scenario as run (API key redacted)
	VerdictsFile = "verdicts.txt"  // the objectives' verdicts, one block each
	ValidityFile = "validity.json" // the client's self-measurement and the validity verdicts
)
