package serverproc_test

import (
	"context"
	"fmt"
	"time"

	"github.com/perfgate/perfgate/serverproc"
)

// A server build started for one run: ready, watched while the load runs, stopped.
// (No Output: it needs vllm.)
func ExampleServer_Start() {
	srv := serverproc.Server{
		Name: "B",
		Cmd:  "vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8000",
		Env:  []string{"HF_TOKEN=hf_…"},
		URL:  "http://127.0.0.1:8000",
	}
	p, err := srv.Start("artifacts/run-001") // server-B.stdout.log, server-B.stderr.log
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Stop()
	ctx := context.Background()
	if err := p.WaitReady(ctx); err != nil {
		fmt.Println(err) // "serverproc: server B exited before it was ready: exit status 1, …" and its stderr
		return
	}
	load := time.After(time.Minute) // the run
	select {
	case <-load:
	case <-p.Exited():
		fmt.Println(p.Err()) // "serverproc: server B exited while serving: …"
		return
	}
	if err := p.Stop(); err != nil {
		fmt.Println(err) // "serverproc: server B stopped, but 127.0.0.1:8000 still accepts connections …"
	}
}

// A server prints with its secrets redacted.
func ExampleServer_String() {
	srv := serverproc.Server{Cmd: "vllm serve m --api-key sk-123 --port 8000", Env: []string{"HF_TOKEN=hf_456", "CUDA_VISIBLE_DEVICES=0"}}
	fmt.Println(srv)
	fmt.Println(serverproc.Redact(`curl -H 'Authorization: Bearer sk-123' http://127.0.0.1:8000/v1/models`))
	// Output:
	// vllm serve m --api-key [redacted] --port 8000 (env HF_TOKEN=[redacted] CUDA_VISIBLE_DEVICES=0)
	// curl -H 'Authorization: [redacted]' http://127.0.0.1:8000/v1/models
}
