package mockserver

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// TestBatchingQueues: with room for two sequences, the third and fourth requests get
// their first token only after an earlier one has finished — the queueing that gives
// latency its knee.
func TestBatchingQueues(t *testing.T) {
	s := start(t, Config{Batch: BatchConfig{Enabled: true, Step: 5 * time.Millisecond, MaxBatch: 2}})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"%d"}],"max_tokens":6,"ignore_eos":true,"stream":true}`, i)
			resp, err := http.Post(s.URL()+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	s.Close()
	recs := s.Records()
	if len(recs) != 4 {
		t.Fatalf("%d records", len(recs))
	}
	slices.SortFunc(recs, func(a, b record.Server) int { return int(a.FirstTokenNS - b.FirstTokenNS) })
	firstRecv := recs[0].RecvNS
	for _, r := range recs {
		firstRecv = min(firstRecv, r.RecvNS)
		if r.OSL != 6 {
			t.Errorf("OSL %d, want 6", r.OSL)
		}
	}
	// Steps are scheduled on absolute deadlines, so k steps never take less than k·5 ms.
	// The two queued requests can start only after the first two's prefill step and 5
	// decode steps, and need a prefill step themselves: their first token comes at the
	// end of step 7 or later, >= 35 ms after the first request arrived.
	for _, r := range recs[2:] {
		if d := time.Duration(r.FirstTokenNS - firstRecv); d < 35*time.Millisecond {
			t.Errorf("a queued request got its first token %v after the first arrival; want >= 35ms (after a slot freed)", d)
		}
	}
	if s.sched.steps.Load() < 12 {
		t.Errorf("%d scheduler steps; 2 batches of 6 tokens need at least 12", s.sched.steps.Load())
	}
}

// TestBatchingPrefillChunks: a long prompt is prefilled over several steps of at most
// PrefillBudget tokens, so its first token comes after ceil(ISL/budget) steps.
func TestBatchingPrefillChunks(t *testing.T) {
	s := start(t, Config{Batch: BatchConfig{Enabled: true, Step: time.Millisecond, PrefillBudget: 10}})
	prompt := strings.Repeat("word ", 95) // ~95 tokens → 10 prefill steps
	resp, b := post(t, s.URL()+"/v1/completions", `{"model":"m","prompt":"`+prompt+`","max_tokens":3,"ignore_eos":true}`)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	s.Close()
	isl := s.Records()[0].ISL
	want := uint64((isl+9)/10 + 2) // prefill steps (the last emits token 1) + 2 decode steps
	if got := s.sched.steps.Load(); got != want {
		t.Errorf("steps = %d, want %d for ISL %d with prefill budget 10 and 3 output tokens", got, want, isl)
	}
}

// TestPacerAbsoluteDeadlines: chunk deadlines are receive time + TTFT + k·ITL exactly
// (absolute, so lateness of one wake-up never shifts the next), and no chunk is written
// before its deadline.
func TestPacerAbsoluteDeadlines(t *testing.T) {
	s, err := New(WithConfig(Config{TTFT: fixedMs(2), ITL: fixedMs(0.25)}), WithTokenizer(gpt2(t)))
	if err != nil {
		t.Fatal(err)
	}
	s.abort = make(chan struct{})
	c := &call{recv: time.Now()}
	g := &gen{s: s, samp: s.lat.sampler(nil, &s.inflight, &s.streams)}
	p := &pacer{s: s, c: c, g: g}
	for k := 1; k <= 40; k += 3 { // chunks of 3 tokens
		if !p.wait(k) {
			t.Fatal("wait returned false")
		}
		want := c.recv.Add(2*time.Millisecond + time.Duration(k-1)*250*time.Microsecond)
		if !p.deadline.Equal(want) {
			t.Fatalf("deadline for token %d = +%v, want +%v", k, p.deadline.Sub(c.recv), want.Sub(c.recv))
		}
		if now := time.Now(); now.Before(want) {
			t.Fatalf("token %d released %v before its deadline", k, want.Sub(now))
		}
	}
}
