package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sample() Client {
	return Client{
		Index: 3, RequestID: "r3", URL: "http://127.0.0.1:1/v1/chat/completions", Endpoint: "chat",
		Stream: true, Scheduled: 5 * time.Millisecond, Sent: 10 * time.Millisecond, Done: 60 * time.Millisecond,
		Chunks: []Chunk{
			{T: 20 * time.Millisecond, Choices: true}, // role-only delta
			{T: 30 * time.Millisecond, Tokens: 1, Choices: true},
			{T: 40 * time.Millisecond, Tokens: 2, Choices: true},
			{T: 55 * time.Millisecond, Tokens: 1, Choices: true},
			{T: 60 * time.Millisecond}, // usage chunk
		},
		Status: 200, ISL: 100, ISLExact: true, OSL: 4, ImageTokens: 393, AudioTokens: 25, UsagePromptTokens: 100, UsageCompletionTokens: 4,
	}
}

func TestClientTimes(t *testing.T) {
	c := sample()
	if got, ok := c.TTFT(); !ok || got != 20*time.Millisecond {
		t.Errorf("TTFT() = %v, %v; want 20ms, true", got, ok)
	}
	if got, ok := c.FirstChoice(); !ok || got != 20*time.Millisecond {
		t.Errorf("FirstChoice() = %v, %v; want 20ms, true", got, ok)
	}
	if got := c.ContentGaps(nil); len(got) != 2 || got[0] != 10*time.Millisecond || got[1] != 15*time.Millisecond {
		t.Errorf("ContentGaps() = %v; want [10ms 15ms]", got)
	}
	if got := c.QueueTime(); got != 5*time.Millisecond {
		t.Errorf("QueueTime() = %v; want 5ms", got)
	}
	if got := c.Latency(); got != 50*time.Millisecond {
		t.Errorf("Latency() = %v; want 50ms", got)
	}
	var empty Client
	if _, ok := empty.TTFT(); ok {
		t.Error("TTFT() of a record without chunks reported ok")
	}
	if !c.OK() {
		t.Error("OK() = false for a record without error kind")
	}
}

func TestEncoderRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	a, b := sample(), sample()
	b.Index, b.ErrorKind, b.Error = 4, ErrTimeout, "loadgen: idle timeout"
	for _, c := range []Client{a, b} {
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 2 || enc.Count() != 2 {
		t.Fatalf("wrote %d lines (Count %d); want 2", n, enc.Count())
	}
	got, err := ReadClient(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].ErrorKind != ErrTimeout || len(got[0].Chunks) != 5 || got[0].Chunks[2].Tokens != 2 {
		t.Errorf("ReadClient() = %+v; want the two records back", got)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestEncoderError(t *testing.T) {
	enc := NewEncoder(failWriter{})
	_ = enc.Encode(sample())
	if err := enc.Flush(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Flush() = %v; want the write error", err)
	}
	if err := enc.Encode(sample()); err == nil {
		t.Error("Encode after a failed flush = nil; want the sticky error")
	}
}

func TestReadClientBadLine(t *testing.T) {
	_, err := ReadClient(strings.NewReader("{\"index\":1}\n\nnot json\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("ReadClient(bad) = %v; want an error naming line 3", err)
	}
}

func TestStatQuantile(t *testing.T) {
	s := Stat{Unit: "ms", Min: 1, P50: 5, P99: 9, Max: 10}
	for _, tc := range []struct {
		p    float64
		want float64
		ok   bool
	}{{0, 1, true}, {0.5, 5, true}, {0.99, 9, true}, {1, 10, true}, {0.42, 0, false}} {
		if got, ok := s.Quantile(tc.p); got != tc.want || ok != tc.ok {
			t.Errorf("Quantile(%v) = %v, %v; want %v, %v", tc.p, got, ok, tc.want, tc.ok)
		}
	}
	m := Metrics{Stats: map[string]Stat{MetricTTFT: s}, Scalars: map[string]Scalar{MetricRequestThroughput: {Unit: "req/s", Value: 3}}}
	if !strings.Contains(m.String(), "time_to_first_token") || m.Value(MetricRequestThroughput) != 3 {
		t.Errorf("Metrics.String() = %q", m.String())
	}
}

// AppendJSON must equal encoding/json with HTML escaping off (Encoder's setting).
func TestClientAppendJSONMatchesEncodingJSON(t *testing.T) {
	full := sample()
	full.Conversation, full.Model, full.Warmup, full.FirstByte = "c1", "m\"odel\n\u2028", true, 12
	full.Class = "batch\"\n"
	full.ErrorKind, full.Error, full.RequestedISL, full.RequestedOSL = ErrMalformed, "bad <html> & \x01 \xff", 100, 8
	full.ReasoningTokens, full.FinishReason, full.Clock = 2, "length", ClockKernel
	full.FirstOutput, full.UsageReasoningTokens = 70*time.Millisecond, 2
	full.FirstToolCall, full.ToolCalls, full.ToolCallTokens = 65*time.Millisecond, 1, 3
	full.AudioDuration, full.Images = 4500*time.Millisecond, 2
	full.CachedTokens = Some(32)
	full.Server = fullServerData()
	full.Chunks = append(full.Chunks, Chunk{T: 61 * time.Millisecond, Tokens: 1, Choices: true, Batched: true})
	full.ISLTemplate, full.TokenizationMode, full.Turn, full.Prefix = 40, "chat_template", 2, 7
	full.Job, full.ThinkTime, full.ToolWait = "job-3", 250*time.Millisecond, 40*time.Millisecond
	full.RunStartUnixNano, full.ResponseBytes = 1_767_000_000_000_000_000, 512
	full.Blocked, full.DNSLookup, full.Connecting, full.TLSHandshaking = 1000, 2000, 3000, 1500
	full.Written, full.ConnReused = 11*time.Millisecond, true
	// Every field set, so a field AppendJSON forgets shows up as a difference.
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the full sample leaves Client.%s zero; set it", v.Type().Field(i).Name)
		}
	}
	for i, c := range []Client{{}, sample(), full} {
		var wb bytes.Buffer
		je := json.NewEncoder(&wb)
		je.SetEscapeHTML(false) // as Encoder's fallback path
		if err := je.Encode(c); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(wb.String(), "\n")
		if got := c.AppendJSON(nil); string(got) != want {
			t.Errorf("record %d: AppendJSON =\n%s\nwant (encoding/json)\n%s", i, got, want)
		}
	}
}

func BenchmarkClientAppendJSON(b *testing.B) {
	c := sample()
	var buf []byte
	for b.Loop() {
		buf = c.AppendJSON(buf[:0])
	}
}

// repeatReader yields n copies of byte c without holding them.
type repeatReader struct {
	c byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = r.c
	}
	r.n -= k
	return k, nil
}

// A record line longer than bufio.Scanner's old 64 MiB limit (a ~1.6M-token
// response) reads back whole, and so do the lines around it.
func TestReadClientLongLine(t *testing.T) {
	const size = 65<<20 + 17
	in := io.MultiReader(
		strings.NewReader("{\"index\":0,\"request_id\":\"a\"}\n"),
		strings.NewReader("{\"index\":1,\"request_id\":\"big\",\"error\":\""),
		&repeatReader{c: 'x', n: size},
		strings.NewReader("\"}\n{\"index\":2,\"request_id\":\"c\"}"), // no final newline
	)
	recs, err := ReadClient(in)
	if err != nil {
		t.Fatalf("ReadClient(long line) = %v", err)
	}
	if len(recs) != 3 {
		t.Fatalf("ReadClient(long line) = %d records; want 3", len(recs))
	}
	if got := len(recs[1].Error); got != size || recs[1].RequestID != "big" || recs[2].Index != 2 {
		t.Errorf("records = %q/%d bytes of error/%d; want big/%d/2", recs[1].RequestID, got, recs[2].Index, size)
	}
}

// A bad line after a long one is named by its line number.
func TestEachLineNumbersAfterLongLine(t *testing.T) {
	in := io.MultiReader(strings.NewReader("{\"error\":\""), &repeatReader{c: 'y', n: 200 << 10},
		strings.NewReader("\"}\n\n{oops\n"))
	err := Each(in, func(Client) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("Each(bad line 3) = %v; want an error naming line 3", err)
	}
}

// A recording cut mid-line (a killed writer) gives back every complete line and an
// error wrapping ErrTruncated; a bad line with its newline is an ordinary error.
func TestReadClientTruncated(t *testing.T) {
	recs, err := ReadClient(strings.NewReader("{\"index\":0}\n{\"index\":1}\n{\"index\":2,\"requ"))
	if !errors.Is(err, ErrTruncated) || len(recs) != 2 || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("ReadClient(cut) = %d records, %v; want 2 and ErrTruncated at line 3", len(recs), err)
	}
	_, err = ReadClient(strings.NewReader("{\"index\":0}\n{\"index\":2,\"requ\n"))
	if err == nil || errors.Is(err, ErrTruncated) {
		t.Errorf("ReadClient(bad line) = %v; want an error that is not ErrTruncated", err)
	}
}

// TestClientPhases: the six phases follow each other and sum to the time from the
// start of the connection step to Done; a record without Written has none; a first
// byte stamped before the noted end of the write moves that end back.
func TestClientPhases(t *testing.T) {
	c := sample() // Sent 10ms, Done 60ms
	if _, ok := c.Phases(); ok {
		t.Errorf("Phases() of a record without Written = _, true; want false")
	}
	c.Blocked, c.DNSLookup, c.Connecting, c.TLSHandshaking = 100*time.Microsecond, time.Millisecond, 3*time.Millisecond, 2*time.Millisecond
	c.Written, c.FirstByte = 12*time.Millisecond, 18*time.Millisecond
	p, ok := c.Phases()
	want := Phases{Blocked: 100 * time.Microsecond, DNSLookup: time.Millisecond, Connecting: 3 * time.Millisecond, TLSHandshaking: 2 * time.Millisecond,
		Sending: 2 * time.Millisecond, Waiting: 6 * time.Millisecond, Receiving: 42 * time.Millisecond}
	if !ok || p != want {
		t.Fatalf("Phases() = %+v, %v; want %+v, true", p, ok, want)
	}
	if got, want := p.Total(), c.Done-(c.Sent-p.Overhead()); got != want {
		t.Errorf("Total() = %v; want Done − start of the connection step = %v", got, want)
	}
	if p.Duration() != c.Latency() {
		t.Errorf("Duration() = %v; want Latency() %v", p.Duration(), c.Latency())
	}
	c.Written = 20 * time.Millisecond // noted after the (kernel-stamped) first byte
	if p, _ := c.Phases(); p.Sending != 8*time.Millisecond || p.Waiting != 0 {
		t.Errorf("write noted after the first byte: Sending, Waiting = %v, %v; want 8ms, 0", p.Sending, p.Waiting)
	}
}
