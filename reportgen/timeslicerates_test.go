package reportgen

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/metric"
)

// TestTimesliceRates: each slice of the known recording carries its request and
// output-token throughput, computed here by hand from the run-level definition over
// the slice's requests (successful requests, and their 4 tokens each, over the first
// one's send → the last one's completion), in the CSV as AIPerf's single values (Stat
// avg) and in the JSON as {unit, avg}.
func TestTimesliceRates(t *testing.T) {
	recs := slicedRun()
	ts, ms, err := SliceMetrics(sliceEach(recs), 2*time.Second, metric.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Request i is sent at 10 + 0.5·i s and done 10·(i+1) + 16 ms later; 5 failed.
	done := func(i int) float64 { return 10 + 0.5*float64(i) + float64(10*(i+1)+16)/1000 }
	type rates struct{ req, tok float64 }
	want := []rates{
		{4 / (done(3) - 10), 16 / (done(3) - 10)},
		{3 / (done(7) - 12), 12 / (done(7) - 12)},
		{4 / (done(11) - 14), 16 / (done(11) - 14)},
	}
	var b strings.Builder
	if err := WriteTimeslicesCSV(&b, ms); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range rows[1:] {
		if r[1] == "Request Throughput" || r[1] == "Output Token Throughput" {
			got[r[0]+"/"+r[1]] = r[2:]
		}
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	for k, w := range want {
		for name, v := range map[string][]string{
			"Request Throughput":      {"requests/sec", "avg", f(w.req)},
			"Output Token Throughput": {"tokens/sec", "avg", f(w.tok)},
		} {
			if g := got[strconv.Itoa(k)+"/"+name]; strings.Join(g, ",") != strings.Join(v, ",") {
				t.Errorf("CSV slice %d %s = %q, want %q", k, name, g, v)
			}
		}
	}
	b.Reset()
	if err := WriteTimeslicesJSON(&b, Run{}, ts, ms); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Timeslices []map[string]json.RawMessage `json:"timeslices"`
	}
	type single struct {
		Unit string  `json:"unit"`
		Avg  float64 `json:"avg"`
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Timeslices) != len(want) {
		t.Fatalf("JSON has %d slices, want %d", len(doc.Timeslices), len(want))
	}
	for k, w := range want {
		var rq, tk single
		_ = json.Unmarshal(doc.Timeslices[k]["request_throughput"], &rq)
		_ = json.Unmarshal(doc.Timeslices[k]["output_token_throughput"], &tk)
		if rq.Unit != "requests/sec" || math.Abs(rq.Avg-w.req) > 1e-9 || tk.Unit != "tokens/sec" || math.Abs(tk.Avg-w.tok) > 1e-9 {
			t.Errorf("JSON slice %d: request throughput %+v, output token throughput %+v; want %g requests/sec, %g tokens/sec", k, rq, tk, w.req, w.tok)
		}
	}
}
