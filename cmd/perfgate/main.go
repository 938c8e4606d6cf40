// Command perfgate is the command-line face of the perfgate library. It runs one-off
// profiles of an OpenAI-compatible server (flags compatible with `aiperf profile`), the
// mock server, recording comparisons, token counting, and a self-contained demo.
//
//	perfgate profile --url http://127.0.0.1:8000 --model-names my-model --streaming \
//	    --concurrency 8 --request-count 500 --isl-dist normal:512,64 --assert 'ttft_p99<=250ms'
//	perfgate mock --port 8000
//	perfgate compare --a run1/server.jsonl --b run2/server.jsonl --out compare.html
//	perfgate demo
//
// Exit codes (k6's convention): 0 every assertion passed, 99 an assertion failed, 2 the
// configuration is invalid (bad flag, file, distribution, or a URL that refuses
// connections), 1 the run could not be carried out, 130 interrupted, 3 a regression
// gate inconclusive at its cap of runs (with --fail-inconclusive).
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

func main() { os.Exit(mainCode()) }

// mainCode is the whole of main but the exit, so a test that re-executes this binary
// can act before the process ends (see TestMain).
func mainCode() int {
	if os.Getenv(supervisedEnv) == "" && supervised(os.Args[1:]) {
		if code, ok := supervise(os.Args[1:]); ok {
			return code
		}
	} else if f, err := os.OpenFile(os.Getenv(crashFileEnv), os.O_WRONLY|os.O_APPEND, 0); err == nil {
		_ = debug.SetCrashOutput(f, debug.CrashOptions{}) // a panic's stack, for the supervisor
		f.Close()
	}
	if os.Getenv(panicTestEnv) != "" {
		go func() { panic("perfgate: " + panicTestEnv + " is set") }()
		select {}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal cancels the run, which then writes its exports; a second
		// one gets the default action and ends the process at once (exit 130 through
		// the supervisor), keeping the records already on disk.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	return code
}
