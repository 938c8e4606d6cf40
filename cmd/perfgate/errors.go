package main

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes, as k6 separates them: a failed assertion is not a broken run.
const (
	// ExitOK: the command succeeded and every assertion passed.
	ExitOK = 0
	// ExitRuntime: the run could not be carried out (I/O error, server vanished mid-run).
	ExitRuntime = 1
	// ExitInvalidConfig: bad flags or configuration, unreadable input files, impossible
	// distributions, conflicting modes, or a URL that refuses connections. Nothing ran.
	ExitInvalidConfig = 2
	// ExitAssertFailed: the run completed but at least one assertion failed (k6's 99).
	ExitAssertFailed = 99
	// ExitInterrupted: stopped by SIGINT/SIGTERM before completion.
	ExitInterrupted = 130
	// ExitInconclusive: a regression gate could not tell, at its cap of runs, whether the
	// current build regressed (and the gate is set to fail on that). Not a breach (99):
	// more runs, or a larger margin, can decide it.
	ExitInconclusive = 3
)

// exitError is an error that carries its exit code (k6's errext pattern); only main exits.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// invalidf returns an invalid-configuration error (exit code 2).
func invalidf(format string, a ...any) error {
	return &exitError{ExitInvalidConfig, fmt.Errorf(format, a...)}
}

// invalid wraps err as an invalid-configuration error.
func invalid(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{ExitInvalidConfig, err}
}

// runtimef returns a runtime error (exit code 1).
func runtimef(format string, a ...any) error {
	return &exitError{ExitRuntime, fmt.Errorf(format, a...)}
}

// assertFailed is returned when assertions fail; the verdicts were printed already.
var errAssertFailed = &exitError{ExitAssertFailed, errors.New("assertions failed")}

// exitCode maps an error onto the process exit code.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	return ExitRuntime
}
