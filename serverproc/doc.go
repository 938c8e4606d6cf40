// Package serverproc runs an inference server as a child process for the length of one
// benchmark run. It starts the server in its own process group with its output captured
// in log files, waits until it answers a readiness probe, watches it while the load
// runs, and stops it (SIGTERM to the group, SIGKILL after a grace) making sure its port
// is released. It is how an A/B regression gate compares two server builds on one GPU,
// where only one of them can run at a time.
//
//	p, err := serverproc.Server{Name: "B", Cmd: "vllm serve m --port 8000", URL: "http://127.0.0.1:8000"}.Start(dir)
//	err = p.WaitReady(ctx)  // GET /health until 200, or an error naming "B" and quoting its stderr
//	select { case <-p.Exited(): err = p.Err() /* crashed mid-run */ ; case <-runDone: }
//	err = p.Stop()          // SIGTERM, SIGKILL after StopGrace, then the port must refuse connections
//
// Every error names the server ([Server.Name]: the build), says what happened (exited
// before it was ready, exited while serving and with which status, not ready within
// the timeout, port still held) and quotes the last lines of its stderr. Commands and
// environments are printed and written only redacted ([Redact], [Server.String]): the
// values of environment variables whose names look secret and of --api-key style
// flags, and Authorization headers.
//
// The package imports only the standard library. Process groups, SIGTERM and the port
// checks are Unix's; elsewhere Stop kills the process itself. It does not restart a
// server, share one between runs, or manage containers.
package serverproc
