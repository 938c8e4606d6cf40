package metric

import (
	"reflect"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// TestAccumulatorByModel: with ByModel, each model's section is exactly the metrics
// of its records alone, and the whole run's are unchanged; without it there is none.
func TestAccumulatorByModel(t *testing.T) {
	var recs []record.Client
	models := []string{"base", "lora-a", "lora-b"}
	for i := range 90 {
		r := record.Client{Index: i, Model: models[i%3], Stream: true, Sent: time.Duration(i) * time.Millisecond,
			ISL: 10 + i, OSL: 3, Status: 200, UsageCompletionTokens: -1, UsagePromptTokens: -1}
		ttft := time.Duration(5+10*(i%3)) * time.Millisecond // each model its own TTFT
		r.Chunks = []record.Chunk{{T: r.Sent + ttft, Tokens: 1}, {T: r.Sent + ttft + time.Millisecond, Tokens: 2}}
		r.Done = r.Sent + ttft + 2*time.Millisecond
		if i%10 == 9 {
			r.ErrorKind, r.Status = record.ErrHTTPStatus, 500
		}
		recs = append(recs, r)
	}
	all := Compute(recs, Options{ByModel: true}, nil)
	if plain := Compute(recs, Options{}, nil); plain.Models != nil || plain.String() != all.String() {
		t.Errorf("the run's metrics change with ByModel, or a one-way run has models:\n%s\n%s", plain, all)
	}
	if len(all.Models) != 3 {
		t.Fatalf("%d model sections; want 3", len(all.Models))
	}
	for k, m := range models {
		var mine []record.Client
		for _, r := range recs {
			if r.Model == m {
				mine = append(mine, r)
			}
		}
		want := Compute(mine, Options{}, nil)
		got := all.Models[m]
		if !reflect.DeepEqual(got, want) {
			t.Errorf("model %s:\n%s\nwant\n%s", m, got, want)
		}
		if ttft := got.Stats[record.MetricTTFT].P50; ttft != float64(5+10*k) {
			t.Errorf("model %s: TTFT p50 %v ms; want %d", m, ttft, 5+10*k)
		}
	}
}
