package scenario

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/perftest/validity"
)

// smallScenario is a valid mocked scenario of n requests.
func smallScenario(n int) Scenario {
	return Scenario{
		Mock: mockserver.Config{Fast: true},
		Config: loadgen.Config{
			Workload: loadgen.Workload{Seed: 1, ISL: distribution.MustSpec("fixed:16"), OSL: distribution.MustSpec("fixed:4")},
			Load:     loadgen.Load{Concurrency: 4},
			Stop:     loadgen.Stop{Requests: n},
		},
		Objectives: Objectives{Rules: []string{"error_rate<=1"}},
	}
}

// TestAbortValidate: bad abort settings are refused naming the field.
func TestAbortValidate(t *testing.T) {
	for _, tc := range []struct {
		a    Abort
		want string
	}{
		{Abort{Rules: []string{"nonesuch_p99>1s"}}, `abort.rules[0]: check: rule "nonesuch_p99>1s", column 1: unknown metric "nonesuch"`},
		{Abort{Rules: []string{"error_rate<=0.2"}}, "want > or <"},
		{Abort{Rules: []string{"goodput<0.9"}}, `"goodput" is not an abort condition`},
		{Abort{Delay: -time.Second}, "abort.delay -1s: want a duration >= 0"},
		{Abort{FailedRequestThreshold: 1.5}, "abort.failed_request_threshold 1.5: want a fraction in (0, 1)"},
		{Abort{FailedRequestThreshold: -0.1}, "abort.failed_request_threshold -0.1"},
		{Abort{MinRequests: -1}, "abort.min_requests -1"},
	} {
		sc := smallScenario(10)
		sc.Abort = tc.a
		if err := sc.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.a, err, tc.want)
		}
	}
	sc := smallScenario(10)
	sc.Abort = Abort{Rules: []string{"error_rate>0.2", "itl_p99{model=m}>50ms"}, Delay: time.Second, FailedRequestThreshold: 0.1}
	if err := sc.Validate(); err != nil {
		t.Errorf("valid abort refused: %v", err)
	}
}

// TestValidityConfig: bad validity settings are refused naming the field, and the
// file's keys reach the configuration.
func TestValidityConfig(t *testing.T) {
	sc := smallScenario(10)
	if err := sc.Validate(); err != nil {
		t.Fatalf("the valid scenario is refused: %v", err)
	}
	sc.Validity = validity.Config{Steady: "sometimes", MaxClientCPU: 2, MaxDrift: math.NaN(), ResetURL: "ftp://x"}
	err := sc.Validate()
	for _, want := range []string{`validity.steady "sometimes"`, "validity.max_client_cpu 2", "validity.max_drift NaN", `validity.reset_url "ftp://x"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v; want %q", err, want)
		}
	}
	path := filepath.Join(t.TempDir(), "v.yaml")
	if err := os.WriteFile(path, []byte("validity:\n  client_bound: warn\n  max_send_lag: 5ms\n  cache_bust: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil || got.Validity.ClientBound != validity.ModeWarn || got.Validity.MaxSendLag != 5*time.Millisecond || !got.Validity.CacheBust {
		t.Errorf("ReadFile: %+v, %v", got.Validity, err)
	}
}
