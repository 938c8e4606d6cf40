package main

import (
	"context"

	"github.com/perfgate/perfgate/mockserver"
)

// cmdCapture runs the mock server in capture mode: every request body is written byte
// for byte with a sequence number and answered with a minimal valid completion.
func cmdCapture(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "capture", "--out FILE [--port 8000] [--host 127.0.0.1] [--default-model NAME] [--models A,B]")
	cfg := mockserver.CaptureConfig{Port: DefaultMockPort, Host: "127.0.0.1"}
	fs.StringVar(&cfg.Out, "out", "", "capture file: one JSON line per request, its body byte for byte (Authorization never recorded)")
	fs.IntVar(&cfg.Port, "port", cfg.Port, "port to listen on (0 = a free port)")
	fs.StringVar(&cfg.Host, "host", cfg.Host, "host to bind")
	fs.IntVar(&cfg.BodyLimit, "body-limit", 0, "maximum request body in bytes (default 64 MiB)")
	cfg.RegisterModelFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if cfg.Out == "" {
		return invalidf("--out is required: the file to capture requests into")
	}
	if cfg.Port < 0 || cfg.Port > 65535 {
		return invalidf("--port %d: want 0-65535", cfg.Port)
	}
	if err := mockserver.ServeCapture(ctx, cfg, e.stderr); err != nil {
		return runtimef("%v", err)
	}
	return nil
}
