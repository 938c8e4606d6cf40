package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"
)

// TestAbortFile: abort: in a scenario file is read, and each bad value is reported at
// its FILE:LINE.
func TestAbortFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("requests: 10\nabort:\n  rules: [\"error_rate>0.2\", \"ttft_p99>2s\"]\n  delay: 10s\n  window: 5s\n  min_requests: 50\n  failed_request_threshold: 0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	want := Abort{Rules: []string{"error_rate>0.2", "ttft_p99>2s"}, Delay: 10 * time.Second, Window: 5 * time.Second, MinRequests: 50, FailedRequestThreshold: 0.1}
	if fmt.Sprint(sc.Abort) != fmt.Sprint(want) {
		t.Errorf("read %+v, want %+v", sc.Abort, want)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("requests: 10\nabort:\n  rules:\n    - error_rate>0.2\n    - nonesuch_p99>1s\n  delay: -1s\n  failed_request_threshold: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(bad)
	for _, w := range []string{
		bad + `:5:7: abort.rules[1]: check: rule "nonesuch_p99>1s", column 1: unknown metric "nonesuch"`,
		bad + ":6:10: abort.delay: -1s: want a duration >= 0",
		bad + ":7:29: abort.failed_request_threshold: 2: want a fraction in (0, 1)",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("want %q in:\n%v", w, err)
		}
	}
}

// TestOverSaturationRuleInput: "over_saturation" is a rule of its own, beside the
// conditions (which ParseRules leaves it out of), and its tuning is validated with
// each bad field named.
func TestOverSaturationRuleInput(t *testing.T) {
	a := Abort{Rules: []string{" over_saturation ", "error_rate>0.2"}}
	rs, err := a.ParseRules()
	if err != nil || len(rs) != 1 || !a.DetectsSaturation() {
		t.Errorf("rules %v, %v; detects %v", rs, err, a.DetectsSaturation())
	}
	if (Abort{Rules: []string{"error_rate>0.2"}}).DetectsSaturation() {
		t.Error("no over_saturation rule, but the detector is on")
	}
	var got []string
	Abort{Rules: []string{OverSaturationRule}, OverSaturation: loadgen.OverSaturation{Confidence: 2, MinPoints: 1}}.validate(func(f string, args ...any) {
		got = append(got, fmt.Sprintf(f, args...))
	})
	if len(got) != 2 || !strings.HasPrefix(got[0], "abort.over_saturation.confidence 2: ") || !strings.HasPrefix(got[1], "abort.over_saturation.min_points 1: ") {
		t.Errorf("validate: %q", got)
	}
}
