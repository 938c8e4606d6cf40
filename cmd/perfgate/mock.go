package main

import (
	"context"

	"github.com/perfgate/perfgate/mockserver"
)

// DefaultMockPort is the port `perfgate mock` and `perfgate capture` listen on unless
// --port says otherwise (aiperf-mock-server's default).
const DefaultMockPort = 8000

func cmdMock(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "mock", "[--port 8000] [--ttft 20] [--itl 5] [--record-requests FILE] [flags]")
	// As vLLM: a model it does not serve is a 404 (--any-model serves and lists any).
	cfg := mockserver.Config{Port: DefaultMockPort, StrictModel: true}
	cfg.RegisterFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return invalid(err)
	}
	if err := mockserver.Serve(ctx, cfg, e.stderr); err != nil {
		return runtimef("%v", err)
	}
	return nil
}
