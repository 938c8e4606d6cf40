package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// profile preflights through run.Preflight: a model the server does not list is an
// invalid configuration (exit 2) before any request, naming the models it serves.
func TestProfileModelNotServed(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			_, _ = w.Write([]byte(`{"data":[{"id":"llama"}]}`))
			return
		}
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/models/") {
			http.NotFound(w, r) // the preflight asks for the model it does not see listed
			return
		}
		sent.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	code, _, stderr := cli(t, "profile", "--url", srv.URL, "--model", "lama", "--request-count", "3", "--artifact-dir", filepath.Join(t.TempDir(), "a"))
	want := `--url ` + srv.URL + `: model "lama" is not served; served: llama (GET ` + srv.URL + `/v1/models)`
	if code != ExitInvalidConfig || !strings.Contains(stderr, want) || sent.Load() != 0 {
		t.Errorf("exit %d after %d requests, stderr %q; want %d and %q", code, sent.Load(), stderr, ExitInvalidConfig, want)
	}
}
