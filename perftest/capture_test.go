package perftest

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/loadgen"
)

func TestCapture(t *testing.T) {
	steps := 0
	c := Capture(t, func(t testing.TB) {
		t.Helper()
		t.Errorf("first %d", 1)
		steps++
		t.Error("second")
		steps++
		t.Fatalf("stop %s", "here")
		steps++ // not reached
	})
	if steps != 2 || !c.Failed() || !c.Stopped() {
		t.Errorf("steps=%d failed=%v stopped=%v, want 2 true true", steps, c.Failed(), c.Stopped())
	}
	if got, want := c.Text(), "first 1\nsecond\nstop here"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	c = Capture(t, func(t testing.TB) { t.Skip("not today"); steps++ })
	if c.Failed() || steps != 2 {
		t.Errorf("Skip: failed=%v steps=%d, want false 2", c.Failed(), steps)
	}
	c = Capture(t, func(t testing.TB) { t.Logf("just a log") })
	if c.Failed() || len(c.Messages()) != 0 {
		t.Errorf("Logf recorded a failure: %v", c.Messages())
	}
}

// TestRunSetupErrorIsFatal checks that Run stops the test with t.Fatalf on a scenario
// it cannot run, and says why.
func TestRunSetupErrorIsFatal(t *testing.T) {
	reached := false
	c := Capture(t, func(t testing.TB) {
		Run(t, Scenario{Name: "bad", Tokenizer: "gpt2", Config: loadgen.Config{Load: loadgen.Load{Concurrency: -2}}})
		reached = true
	})
	if !c.Stopped() || reached {
		t.Fatalf("Run(invalid) did not stop the test: stopped=%v reached=%v", c.Stopped(), reached)
	}
	if msg := c.Text(); !strings.HasPrefix(msg, `perftest: scenario "bad": `) || !strings.Contains(msg, "concurrency -2") {
		t.Errorf("message = %q, want it to name the scenario and the bad field", msg)
	}
}

func TestArtifactDirPerRun(t *testing.T) {
	base := t.TempDir()
	var got []string
	for _, name := range []string{"chat", "chat", "", "a/b", ".."} {
		d, err := artifactDir(base, name)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.TrimPrefix(d, base+"/"))
	}
	want := []string{"chat", "chat-2", "scenario", "a_b", "scenario-2"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("artifact dirs = %q, want %q", got, want)
	}
}
