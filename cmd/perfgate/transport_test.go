package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTransportFlagsInvalid: --transport names one of loadgen.Transports and
// --event-loops a positive count; anything else is invalid configuration, refused
// before any request, as a scenario file's transport and event_loops are.
func TestTransportFlagsInvalid(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--transport", "epoll"}, `--transport "epoll": want auto or goroutines`},
		{[]string{"--event-loops", "0"}, "--event-loops 0: want at least 1"},
		{[]string{"--event-loops", "-2"}, "--event-loops -2: want at least 1"},
	} {
		code, _, errOut := cli(t, append([]string{"profile", "--mock", "-q", "--request-count", "5", "--artifact-dir", filepath.Join(t.TempDir(), "run")}, tc.args...)...)
		if code != ExitInvalidConfig || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d saying %q", tc.args, code, errOut, ExitInvalidConfig, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "sc.yaml")
	if err := os.WriteFile(path, []byte("requests: 5\ntransport: epoll\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := cli(t, "profile", "--mock", "-q", "--config", path, "--artifact-dir", filepath.Join(t.TempDir(), "run"))
	if code != ExitInvalidConfig || !strings.Contains(errOut, `transport "epoll": want auto or goroutines`) {
		t.Errorf("scenario file: exit %d, stderr %q; want %d naming the transport", code, errOut, ExitInvalidConfig)
	}
}
