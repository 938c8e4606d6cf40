package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/scenario"
	"github.com/perfgate/perfgate/serverproc"
)

// serverNamed returns s with its Server, if unnamed, named name: the side of an A/B
// gate ("A", "B") its errors and log files then say.
func serverNamed(s scenario.Scenario, name string) scenario.Scenario {
	if s.Server != nil && s.Server.Name == "" {
		srv := *s.Server
		srv.Name = name
		s.Server = &srv
	}
	return s
}

// serverRun is the server process one run started (Scenario.Server), watched for the
// length of the run.
type serverRun struct {
	p      *serverproc.Process
	cancel context.CancelCauseFunc
}

// startServer starts sc.Server with its logs in dir, waits until it is ready, checks
// it as Preflight checks a running server, and names the model it serves when the
// scenario names none (in sc and cfg). The context returned is the run's: cancelled,
// with the server's error as its cause, if the server exits during the run.
func startServer(ctx context.Context, sc *scenario.Scenario, cfg *loadgen.Config, dir string) (context.Context, *serverRun, error) {
	srv := *sc.Server
	if srv.URL == "" {
		srv.URL = sc.URLs[0]
	}
	p, err := srv.Start(dir)
	if err != nil {
		return ctx, nil, err
	}
	if err := p.WaitReady(ctx); err != nil {
		_ = p.Stop()
		return ctx, nil, err
	}
	running := *sc
	running.Server = nil
	if err := Preflight(ctx, running); err != nil {
		_ = p.Stop()
		return ctx, nil, fmt.Errorf("server %s is ready, but %w", p.Name(), err)
	}
	if sc.Model == "" && len(sc.ModelNames) == 0 {
		sc.Model = FirstServedModel(ctx, running) // as a profile against a running server picks it
		cfg.Model = sc.Model
	}
	run, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-p.Exited():
			if err := p.Err(); err != nil {
				cancel(err)
			}
		case <-run.Done():
		}
	}()
	return run, &serverRun{p: p, cancel: cancel}, nil
}

// after stops the server once the run is over and returns the run's error with the
// server's: that it exited during the run (which explains the run's cancellation and
// failed requests, so it replaces a cancellation), or that it kept its port.
func (r *serverRun) after(runErr error) error {
	err := r.finish()
	switch {
	case err == nil:
		return runErr
	case runErr == nil || errors.Is(runErr, context.Canceled):
		return err
	}
	return errors.Join(err, runErr)
}

// finish stops the server (once; later calls repeat the answer) and returns what went
// wrong with it: its exit during the run, a port it kept.
func (r *serverRun) finish() error {
	err := r.p.Stop()
	exited := r.p.Err() // after Stop: a server that exited just before it is found there
	r.cancel(nil)
	return errors.Join(exited, err)
}
