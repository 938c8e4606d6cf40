package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	perfrun "github.com/perfgate/perfgate/perftest/run"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/serverproc"
)

// serverFlags start and stop the server builds around each run (serverproc): the
// candidate's with --server-cmd, the baseline's with --baseline-server-cmd, which
// makes profile an A/B gate on one machine (A B A B, one server at a time).
type serverFlags struct {
	cmd, baselineCmd string
	ready            string
	readyTimeout     time.Duration
	stopGrace        time.Duration
}

func registerServerFlags(fs *flag.FlagSet, s *serverFlags) {
	fs.StringVar(&s.cmd, "server-cmd", "", "[target] start the server under test with this shell command (sh -c) before each run, and stop it after (SIGTERM, then SIGKILL); it must serve --url. With --baseline-server-cmd: an A/B gate on one GPU")
	fs.StringVar(&s.baselineCmd, "baseline-server-cmd", "", "[objectives] regression gate, A/B on one GPU: start the baseline build with this shell command before each of its runs (serving --baseline-url, else --url) and stop it after; the candidate is --server-cmd's (or the server at --url), alternating A B A B")
	fs.StringVar(&s.ready, "server-ready", serverproc.DefaultReady, "[target] when a started server is ready: a path (or URL) polled with GET until it answers 200")
	fs.DurationVar(&s.readyTimeout, "server-ready-timeout", serverproc.DefaultReadyTimeout, "[target] how long a started server may take to become ready (model servers load for minutes)")
	fs.DurationVar(&s.stopGrace, "server-stop-grace", serverproc.DefaultStopGrace, "[target] how long a started server may take to exit after SIGTERM before SIGKILL")
}

// server returns the server started by cmd, with the probe and timeouts of the flags.
func (s serverFlags) server(cmd string) *serverproc.Server {
	return &serverproc.Server{Cmd: cmd, Ready: s.ready, ReadyTimeout: s.readyTimeout, StopGrace: s.stopGrace}
}

// apply sets the candidate's server (--server-cmd) on sc, and checks the flags.
func (s serverFlags) apply(sc *scenario.Scenario, o profileOpts) error {
	switch {
	case s.readyTimeout <= 0:
		return invalidf("--server-ready-timeout %v: want a positive duration, e.g. 10m", s.readyTimeout)
	case s.stopGrace <= 0:
		return invalidf("--server-stop-grace %v: want a positive duration, e.g. 10s", s.stopGrace)
	case !strings.HasPrefix(s.ready, "/") && !strings.HasPrefix(s.ready, "http://") && !strings.HasPrefix(s.ready, "https://"):
		return invalidf("--server-ready %q: want a path such as /health or /v1/models, or an http(s) URL", s.ready)
	case s.cmd == "" && s.baselineCmd == "" && (s.ready != serverproc.DefaultReady || s.readyTimeout != serverproc.DefaultReadyTimeout || s.stopGrace != serverproc.DefaultStopGrace):
		return invalidf("--server-ready, --server-ready-timeout and --server-stop-grace tune the servers perfgate starts: give --server-cmd or --baseline-server-cmd")
	}
	for _, f := range []struct{ name, cmd string }{{"--server-cmd", s.cmd}, {"--baseline-server-cmd", s.baselineCmd}} {
		switch {
		case f.cmd == "":
		case strings.TrimSpace(f.cmd) == "":
			return invalidf("%s: an empty command", f.name)
		case o.mock:
			return invalidf("%s and --mock conflict: the in-process mock needs no server", f.name)
		case len(sc.URLs) == 0:
			return invalidf("%s needs --url: the URL the server serves, e.g. --url http://127.0.0.1:8000", f.name)
		}
	}
	if s.baselineCmd != "" && o.gate.baseline != "" {
		return invalidf("--baseline-server-cmd and --baseline conflict: an A/B gate runs the baseline build; --baseline DIR compares with saved runs")
	}
	if s.cmd != "" {
		sc.Server = s.server(s.cmd)
	}
	return nil
}

// shareModel names, when no model is, the model of the side whose server is already
// running on both sides, so that an A/B gate with one side started by perfgate asks
// both for the same model (the started side's preflight then checks that it serves
// it). With both sides started, each run names the model its server lists first.
func shareModel(ctx context.Context, a, b *scenario.Scenario) {
	if a.Model != "" || len(a.ModelNames) > 0 || (a.Server == nil) == (b.Server == nil) {
		return
	}
	running := *a
	if a.Server != nil {
		running = *b
	}
	a.Model = perfrun.FirstServedModel(ctx, running)
	b.Model = a.Model
}

// abServers says what an A/B gate with started servers does, for profile's console.
func abServers(w io.Writer, a, b scenario.Scenario, runs int) {
	side := func(label string, sc scenario.Scenario) string {
		at := strings.Join(sc.URLs, ", ")
		if sc.Server == nil {
			return fmt.Sprintf("%s: the server at %s", label, at)
		}
		return fmt.Sprintf("%s: started for each of its runs by %s, serving %s", label, sc.Server, at)
	}
	fmt.Fprintf(w, "perfgate profile: A/B, alternating A B A B, %d runs each to start\n    %s\n    %s\n", runs, side("A (baseline)", a), side("B (candidate)", b))
}
