package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/record"
)

// TestClassRecordsRoundTrip: a record's class is written and read back, and a record
// without one is written as before (no "class" key), so a run of one class records
// what it did.
func TestClassRecordsRoundTrip(t *testing.T) {
	for _, class := range []string{"", "batch"} {
		r := record.Client{Index: 3, RequestID: "req-3", Class: class, Done: time.Millisecond}
		b := r.AppendJSON(nil)
		if got := strings.Contains(string(b), `"class"`); got != (class != "") {
			t.Errorf("class %q: line %s", class, b)
		}
		var back record.Client
		if err := record.DecodeClient(b, &back); err != nil || back.Class != class {
			t.Errorf("class %q read back as %q (%v)", class, back.Class, err)
		}
	}
}

// TestClassTailSamples: a quantile claim on a class counts that class's requests
// before the run: p99 of a class of 50 requests is refused, naming the class, while
// the same claim on a class of 1,000 and a p50 on the small one are not.
func TestClassTailSamples(t *testing.T) {
	sc := Scenario{Classes: []Class{
		{Name: "small", Requests: 50, Load: loadgen.Load{Concurrency: 1}},
		{Name: "big", Requests: 1000, Load: loadgen.Load{Rate: 10}},
	}}
	sc.Objectives.Rules = []string{"ttft_p99{class=small}<=1s", "ttft_p99{class=big}<=1s", "ttft_p50{class=small}<=1s", "ttft_p99<=1s"}
	err := sc.Validate()
	if err == nil || !strings.Contains(err.Error(), "ttft_p99{class=small}<=1s needs at least") || !strings.Contains(err.Error(), "the run has 50 of class small") {
		t.Fatalf("Validate: %v, want the small class's p99 refused", err)
	}
	if strings.Contains(err.Error(), "{class=big}") || strings.Contains(err.Error(), "ttft_p50") || strings.Contains(err.Error(), "ttft_p99<=1s needs") {
		t.Errorf("Validate refused a claim its requests support:\n%v", err)
	}
}

// TestClassSeed: each class draws its own seed from the run's.
func TestClassSeed(t *testing.T) {
	if classSeed(7, "a") == classSeed(7, "b") {
		t.Error("two classes drew one seed")
	}
}
