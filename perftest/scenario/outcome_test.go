package scenario

import (
	"testing"

	"github.com/perfgate/perfgate/internal/record"
)

func TestRequestsJoin(t *testing.T) {
	o := &Outcome{
		Client: []record.Client{
			{Index: 0, RequestID: "a", ISL: 10, UsagePromptTokens: 17},          // usage wins
			{Index: 1, RequestID: "b", ISL: 10, UsagePromptTokens: -1},          // joined by id
			{Index: 2, RequestID: "c", ISL: 10, UsagePromptTokens: -1, Turn: 1}, // unknown
		},
		Server: []record.Server{
			{RequestID: "a", ISL: 99},
			{RequestID: "b", ISL: 18},
			{RequestID: "x", ISL: 50},
		},
		TemplateOverhead: []int{7, 12},
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
