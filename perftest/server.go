package perftest

import "github.com/perfgate/perfgate/serverproc"

// Server is a server build that a scenario's runs start and stop themselves: set it as
// Scenario.Server and each run ([Run], [RunRuns], each side's runs of
// [AssertABNoRegression]) starts it, waits until it is ready, runs against the
// scenario's URLs, and stops it, so two builds can be compared on one GPU where only
// one can run at a time:
//
//	a := sc // sc.URLs = []string{"http://127.0.0.1:8000"}
//	a.Server = &perftest.Server{Cmd: "vllm serve m --port 8000", Env: []string{"VLLM_USE_V1=0"}}
//	b := sc
//	b.Server = &perftest.Server{Cmd: "/opt/new/bin/vllm serve m --port 8000"}
//	perftest.AssertABNoRegression(t, a, b, perftest.Gate{}) // A B A B, a fresh server each run
//
// Its fields, defaults and errors are [serverproc.Server]'s: Cmd (sh -c) or Args, Env,
// Dir, URL ("" = the scenario's first), Ready ("" = serverproc.DefaultReady, /health),
// ReadyTimeout (10 min), StopGrace (10 s). A server that exits before it is ready or
// during a run, is not ready in time, or keeps its port after it stops fails the test
// (t.Fatalf) with an error naming it ("A", "B" in an A/B gate unless named) and quoting
// its stderr; its logs are in each run's artifact directory
// (server-NAME.stdout.log, server-NAME.stderr.log), its secrets redacted from
// everything perfgate writes.
type Server = serverproc.Server
