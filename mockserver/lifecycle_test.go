package mockserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/record"
)

// TestGracefulClose closes the server while streams are in flight: they finish within
// the grace period, every answered request is recorded, and the summary is written.
func TestGracefulClose(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	s := start(t, Config{RecordFile: file, TTFT: fixedMs(5), ITL: fixedMs(2), GracePeriod: 20 * time.Second})
	const n = 20
	var wg sync.WaitGroup
	started := make(chan struct{}, n)
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"%d"}],"max_tokens":60,"ignore_eos":true,"stream":true}`, i)
			resp, err := http.Post(s.URL()+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			if _, err := br.ReadString('\n'); err != nil { // first chunk arrived
				errs <- err
				return
			}
			started <- struct{}{}
			b, err := io.ReadAll(br)
			if err != nil || !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
				errs <- fmt.Errorf("stream %d did not complete: %v", i, err)
			}
		})
	}
	for range n {
		<-started
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := record.Read[record.Server](f)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n {
		t.Errorf("recorded %d lines, want %d (requests answered)", len(recs), n)
	}
	for _, r := range recs {
		if r.OSL != 60 || r.ClientGone || r.Fault != "" {
			t.Errorf("record %s: OSL %d gone %v fault %q; want a complete stream", r.RequestID, r.OSL, r.ClientGone, r.Fault)
		}
	}
	b, err := os.ReadFile(file + ".summary.json")
	if err != nil {
		t.Fatal(err)
	}
	var sum record.ServerSummary
	if err := json.Unmarshal(b, &sum); err != nil || sum.TotalRequests != n || sum.PerEndpoint["/v1/chat/completions"].StreamedCount != n {
		t.Errorf("summary: %v; total %d", err, sum.TotalRequests)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCloseCutsAfterGrace: streams longer than the grace period are cut, and still
// recorded.
func TestCloseCutsAfterGrace(t *testing.T) {
	s := start(t, Config{TTFT: fixedMs(1), ITL: fixedMs(50), GracePeriod: 100 * time.Millisecond})
	resp, err := http.Post(s.URL()+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":1000,"ignore_eos":true,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	recs := s.Records()
	if len(recs) != 1 || recs[0].OSL >= 1000 || recs[0].Fault != "shutdown" {
		t.Errorf("records = %+v; want one cut stream with fault shutdown", recs)
	}
}

// TestClientDisconnectFreesStream: a client that goes away mid-stream (even during a
// long wait) is noticed, its stream ends and is recorded as client_gone.
func TestClientDisconnectFreesStream(t *testing.T) {
	s := start(t, Config{TTFT: fixedMs(1), ITL: fixedMs(2000)})
	conn, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	body := `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":100,"ignore_eos":true,"stream":true}`
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	br := bufio.NewReader(conn)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"content"`) {
			break // the first token arrived; the next is 2 s away
		}
	}
	if got := s.streams.Load(); got != 1 {
		t.Fatalf("open streams = %d, want 1", got)
	}
	conn.Close()
	// The stream must end long before its next token is due.
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	for s.streams.Load() != 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("stream still open %v after the client left", 1500*time.Millisecond)
		case <-time.After(10 * time.Millisecond):
		}
	}
	s.Close()
	recs := s.Records()
	if len(recs) != 1 || !recs[0].ClientGone || recs[0].OSL != 1 {
		t.Errorf("record = %+v; want client_gone after 1 token", recs)
	}
}

func fixedMs(ms float64) distribution.Spec {
	return distribution.Spec{Distribution: distribution.Fixed{Value: ms}}
}

func TestFaults(t *testing.T) {
	s := start(t, Config{Fast: true, Seed: 11, Faults: Faults{ErrorRate: 0.3, ErrorStatuses: []int{429, 500, 503}, RetryAfterSeconds: 7,
		DisconnectRate: 0.2, MalformedChunkRate: 0.2, SlowFirstByteRate: 0.2, SlowFirstByte: time.Millisecond}})
	statuses := map[int]int{}
	malformed, cut := 0, 0
	for i := range 80 {
		body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"%d"}],"max_tokens":20,"ignore_eos":true,"stream":true}`, i)
		resp, err := http.Post(s.URL()+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			// An injected disconnect can beat the response headers to the wire on a
			// starved machine: the client still saw its connection cut.
			cut++
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		statuses[resp.StatusCode]++
		switch {
		case resp.StatusCode == 429 || resp.StatusCode == 503:
			if resp.Header.Get("Retry-After") != "7" {
				t.Errorf("%d without Retry-After: 7", resp.StatusCode)
			}
			errorBody(t, b)
		case resp.StatusCode == 500:
			errorBody(t, b)
		case err != nil || !strings.HasSuffix(string(b), "[DONE]\n\n"):
			cut++
		}
		if strings.Contains(string(b), `{"content":`+"\n") {
			malformed++
		}
	}
	s.Close()
	sum := s.Summary()
	if statuses[429] == 0 || statuses[500] == 0 || statuses[503] == 0 || statuses[200] == 0 {
		t.Errorf("statuses = %v; want 429, 500, 503 and 200", statuses)
	}
	if sum.Faults["error_429"] != statuses[429] || sum.Faults["error_500"] != statuses[500] || sum.Faults["error_503"] != statuses[503] {
		t.Errorf("summary faults %v vs statuses %v", sum.Faults, statuses)
	}
	if sum.Faults["disconnect"] == 0 || sum.Faults["disconnect"] != cut {
		t.Errorf("disconnects: summary %d, clients saw %d cut streams", sum.Faults["disconnect"], cut)
	}
	if malformed == 0 {
		t.Errorf("no malformed chunk seen in 80 streams at rate 0.2")
	}
	// Reproducible: the same seed gives the same fault sequence.
	s2 := start(t, s.Config())
	for i := range 80 {
		body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"%d"}],"max_tokens":20,"ignore_eos":true,"stream":true}`, i)
		resp, err := http.Post(s2.URL()+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	s2.Close()
	if a, b := fmt.Sprint(sum.Faults), fmt.Sprint(s2.Summary().Faults); a != b {
		t.Errorf("same seed, different faults: %s vs %s", a, b)
	}
}

func TestReadinessDelays(t *testing.T) {
	s := start(t, Config{Fast: true, Faults: Faults{ModelsReadyDelay: time.Second, InferenceReadyDelay: 1200 * time.Millisecond}})
	if st, _ := get(t, s.URL()+"/health"); st != 503 {
		t.Errorf("/health right after start = %d, want 503", st)
	}
	if st, _ := get(t, s.URL()+"/v1/models"); st != 503 {
		t.Errorf("/v1/models right after start = %d, want 503", st)
	}
	resp, _ := post(t, s.URL()+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":2}`)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("inference right after start = %d, want 503 with Retry-After", resp.StatusCode)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, _ := get(t, s.URL()+"/health"); st == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never became healthy")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if resp, b := post(t, s.URL()+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":2}`); resp.StatusCode != 200 {
		t.Errorf("inference once healthy = %d %s", resp.StatusCode, b)
	}
	s.Close()
	if f := s.Summary().Faults["not_ready"]; f != 1 {
		t.Errorf("faults[not_ready] = %d, want 1", f)
	}
}

// TestRecordingBackPressure: with a one-slot record queue and many concurrent
// requests, handlers wait for the writer instead of dropping records.
func TestRecordingBackPressure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	s := start(t, Config{Fast: true, RecordQueue: 1, RecordFile: file})
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			post(t, s.URL()+"/v1/completions", fmt.Sprintf(`{"model":"m","prompt":"p %d","max_tokens":3,"stream":%v}`, i, i%2 == 0))
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b), "\n"); lines != n || len(s.Records()) != n || s.Summary().TotalRequests != n {
		t.Errorf("lines %d, records %d, summary %d; want %d each", lines, len(s.Records()), s.Summary().TotalRequests, n)
	}
}
