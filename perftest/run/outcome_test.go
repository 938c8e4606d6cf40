package run

import (
	"fmt"
	"testing"

	"github.com/perfgate/perfgate/loadgen"
	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/perftest/scenario"

	"github.com/perfgate/perfgate/record"
)

func TestRequestsJoin(t *testing.T) {
	o := &Outcome{
		Client: []record.Client{
			{Index: 0, RequestID: "a", ISL: 10, ISLTemplate: 17, UsagePromptTokens: 17},                                        // usage wins
			{Index: 1, RequestID: "b", ISL: 10, UsagePromptTokens: -1},                                                         // joined by id
			{Index: 2, RequestID: "c", ISL: 10, ISLTemplate: 22, UsagePromptTokens: -1, Turn: 1, ErrorKind: record.ErrConnect}, // never reached the server
		},
		Server: []record.Server{
			{RequestID: "a", ISL: 99},
			{RequestID: "b", ISL: 18},
			{RequestID: "x", ISL: 50},
		},
	}
	rs := o.Requests()
	got := []int{rs[0].ServerISL, rs[1].ServerISL, rs[2].ServerISL, rs[0].Overhead, rs[2].Overhead}
	want := []int{17, 18, -1, 7, 12}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("server ISLs and overheads = %v, want %v", got, want)
		}
	}
}

// TestLengthsWarmupAndTemplate checks the server-side lengths when the server numbered
// the requests itself (ids shifted by one): warm-up is left out, and each request's
// chat template overhead is taken off its server count (usage.prompt_tokens).
func TestLengthsWarmupAndTemplate(t *testing.T) {
	o := &Outcome{}
	for i := range 6 {
		o.Client = append(o.Client, record.Client{Index: i, RequestID: fmt.Sprintf("req-%d", i), Warmup: i < 2, ISL: 100 + i, OSL: 7,
			ISLTemplate: 105 + i + i%2, UsagePromptTokens: 105 + i + i%2})
		o.Server = append(o.Server, record.Server{Seq: uint64(i + 1), RequestID: fmt.Sprintf("req-%d", i+1), ISL: 105 + i, OSL: 7,
			Status: 200, TokenizationMode: record.ModeChatTemplate})
	}
	src, isl := o.Lengths(check.ISL)
	if fmt.Sprint(isl) != "[102 103 104 105]" || src != "server count less each request's chat template" {
		t.Errorf("Lengths(ISL) = %q, %v; want the last 4 requests less their overheads", src, isl)
	}
	if got := o.summary().templateOverheads(); fmt.Sprint(got) != "[6]" {
		t.Errorf("templateOverheads = %v, want [6] (median of 5, 6, 5, 6)", got)
	}
	old := append([]record.Client(nil), o.Client...)
	o.Client[5].ISLTemplate = 0 // recorded before the field existed: left whole
	if src, isl := o.Lengths(check.ISL); fmt.Sprint(isl) != "[102 103 104 111]" || src != "server count less each request's chat template (unknown for 1 requests, left whole)" {
		t.Errorf("with one overhead unknown: Lengths(ISL) = %q, %v", src, isl)
	}
	o.Client = old
	if _, osl := o.Lengths(check.OSL); len(osl) != 4 {
		t.Errorf("Lengths(OSL) has %d values, want 4", len(osl))
	}
	o.Server = nil
	if src, isl := o.Lengths(check.ISL); src != "client count" || fmt.Sprint(isl) != "[102 103 104 105]" {
		t.Errorf("without a server recording: Lengths(ISL) = %q, %v", src, isl)
	}
}

// records reads an outcome's recordings back, failing the test on an error.
func records(t testing.TB, o *Outcome) ([]record.Client, []record.Server) {
	t.Helper()
	cs, err := o.Records()
	if err != nil {
		t.Fatal(err)
	}
	ss, err := o.ServerRecords()
	if err != nil {
		t.Fatal(err)
	}
	return cs, ss
}

// TestVerdictsOneList: Verdicts is the run's one list of verdicts: the kinds asked for,
// in that order, each marked with its kind; no kind is the objectives as before; the
// deprecated Health and Validity are its views.
func TestVerdictsOneList(t *testing.T) {
	o := &Outcome{Scenario: scenario.Scenario{Objectives: scenario.Objectives{Rules: []string{"error_rate<=0", "osl_p50>=5", "isl_p99<=100"}}},
		Self: &loadgen.Self{}}
	for i := range 20 {
		c := record.Client{Index: i, RequestID: fmt.Sprintf("req-%d", i), ISL: 8, OSL: 4}
		if i == 3 {
			c.ErrorKind = record.ErrConnect
		}
		o.Client = append(o.Client, c)
	}
	kinds := func(vs []check.Verdict) (out []string) {
		for _, v := range vs {
			out = append(out, string(v.Kind)+":"+v.Check)
		}
		return out
	}
	objectives := kinds(o.Verdicts())
	if len(objectives) != 3 || objectives[0] != "objective:error-rate" || kinds(o.Verdicts(check.KindObjective))[1] != objectives[1] {
		t.Errorf("Verdicts() = %v, want the three objectives, of kind objective", objectives)
	}
	all := o.Verdicts(check.KindHealth, check.KindValidity, check.KindObjective)
	health, validity := o.Health(), o.Validity()
	if len(all) != len(health)+len(validity)+len(objectives) || len(health) != 2 || len(validity) == 0 {
		t.Fatalf("Verdicts(all kinds) = %v; want health %v, validity %v, objectives %v", kinds(all), kinds(health), kinds(validity), objectives)
	}
	for i, v := range all {
		want := check.KindObjective
		switch {
		case i < len(health):
			want = check.KindHealth
		case i < len(health)+len(validity):
			want = check.KindValidity
		}
		if v.Kind != want {
			t.Errorf("Verdicts(all kinds)[%d] = %s, want kind %s: %v", i, v.Kind+":"+check.Kind(v.Check), want, kinds(all))
		}
	}
	if h := kinds(health); h[0] != "health:completed" || h[1] != "health:error-rate" || all[1].Pass || all[1].Summary != health[1].Summary {
		t.Errorf("Health() = %v (error rate pass %v), want completed and a failing error rate, as Verdicts(check.KindHealth)", h, all[1].Pass)
	}
}
