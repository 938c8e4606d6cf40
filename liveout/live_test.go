package liveout

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

// rec is a successful streamed chat request: TTFT 20 ms, latency 100 ms, 10 output
// tokens (ITL 80/9 ms), 50 input tokens.
func rec(model string) record.Client {
	return record.Client{Endpoint: "chat", Model: model, Stream: true, Sent: time.Second, Done: time.Second + 100*time.Millisecond,
		Chunks: []record.Chunk{{T: time.Second + 20*time.Millisecond, Tokens: 1}, {T: time.Second + 100*time.Millisecond, Tokens: 9}},
		ISL:    50, OSL: 10, Status: 200}
}

func TestParseOutput(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"prometheus-rw=http://127.0.0.1:9090/api/v1/write", ""},
		{"otlp=https://collector:4318/v1/metrics?token=abc", ""},
		{"influxdb=http://u:s3cret@h:8086/write?token=t0ken", `unknown kind "influxdb" in "influxdb=http://h:8086/write?token=redacted": want prometheus-rw or otlp`},
		{"http://h:9090/api/v1/write", "want KIND=URL"},
		{"prometheus-rw=ftp://h/x", "want an http(s) URL, e.g. http://127.0.0.1:9090/api/v1/write"},
		{"otlp=http:///v1/metrics", "no host"},
	} {
		o, err := ParseOutput(c.in)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("ParseOutput(%q) = %v", c.in, err)
		case c.want != "" && (err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("ParseOutput(%q) = %v, %v; want an error with %q", c.in, o, err, c.want)
		case err != nil && (strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "t0ken")):
			t.Errorf("ParseOutput(%q)'s error shows a secret: %v", c.in, err)
		}
	}
	if got := MustParseOutput("otlp=https://u:pw@c:4318/v1/metrics?token=abc").String(); got != "otlp=https://c:4318/v1/metrics?token=redacted" {
		t.Errorf("String() = %q", got)
	}
}

// TestRefusedReceiver: a receiver that answers the first push with a 4xx is an error
// before the run, naming the output (redacted) and the status; one that answers 5xx
// is a warning, and Start succeeds.
func TestRefusedReceiver(t *testing.T) {
	for _, kind := range Kinds {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "remote write receiver needs to be enabled with --web.enable-remote-write-receiver", http.StatusNotFound)
		}))
		_, err := Start(t.Context(), Config{Outputs: []Output{{kind, srv.URL + "/api/v1/write?token=s3cret"}}, Interval: time.Second}, nil)
		srv.Close()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "refused the first push (HTTP 404)") || !strings.Contains(err.Error(), "token=redacted") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: a 404 receiver: %v; want ErrInvalid naming HTTP 404 and the redacted URL", kind, err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	var warned []string
	l, err := Start(t.Context(), Config{Outputs: []Output{{PrometheusRW, srv.URL + "/api/v1/write"}}, Interval: time.Second}, func(s string) { warned = append(warned, s) })
	if err != nil {
		t.Fatalf("a 503 receiver: %v; want a warning, not an error", err)
	}
	st := l.Stop(t.Context())
	if len(warned) != 1 || !strings.Contains(warned[0], "push failed") || len(st.Warnings) != 1 || st.Outputs[0].Failed != st.Outputs[0].Pushes {
		t.Errorf("a 503 receiver: warned %q, stats %+v; want one warning line and every push failed", warned, st)
	}
}

// TestBlockingReceiver: a receiver that never answers slows nothing: 100,000 records
// go through Record (each aggregated or counted as dropped, none lost from the count),
// pushes time out and are counted, one warning line says so, and Stop returns.
func TestBlockingReceiver(t *testing.T) {
	release := make(chan struct{})
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	var mu sync.Mutex
	var warned []string
	l, err := Start(t.Context(), Config{Outputs: []Output{{PrometheusRW, srv.URL + "/api/v1/write"}, {OTLP, srv.URL + "/v1/metrics"}},
		Interval: 20 * time.Millisecond, Buffer: 256}, func(s string) { mu.Lock(); warned = append(warned, s); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	const n = 100_000
	r := rec("m")
	for range n {
		l.Record(r)
	}
	st := l.Stop(t.Context())
	l.st.mu.Lock()
	aggregated := l.st.events
	l.st.mu.Unlock()
	if st.Records != n || aggregated+st.Dropped != n {
		t.Errorf("records %d, aggregated %d + dropped %d; want %d, adding up", st.Records, aggregated, st.Dropped, n)
	}
	for _, o := range st.Outputs {
		if o.Pushes < 2 || o.Failed != o.Pushes {
			t.Errorf("%s: %+v; want the first and the last push at least, every one failed", o.Output, o)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(strings.Join(warned, "\n"), "push failed"); n != 2 || hits.Load() < 2 {
		t.Errorf("warnings %q (receiver hit %d times); want one push-failed line per output", warned, hits.Load())
	}
	if st.Dropped > 0 && !strings.Contains(strings.Join(st.Warnings, "\n"), "finished requests dropped") {
		t.Errorf("%d records dropped but no warning says so: %q", st.Dropped, st.Warnings)
	}
}

// TestSecretsStayOut: a receiver URL's user information goes as basic authentication
// and its query to the receiver, and neither reaches a warning or the stats, even when
// the push fails.
func TestSecretsStayOut(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		got.Store(u + ":" + p + "?" + r.URL.RawQuery)
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer srv.Close()
	for _, kind := range Kinds {
		raw := strings.Replace(srv.URL, "http://", "http://alice:pa55word@", 1) + "/write?token=t0ken-value"
		l, err := Start(t.Context(), Config{Outputs: []Output{{kind, raw}}, Interval: time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		st := l.Stop(context.Background())
		if g, _ := got.Load().(string); g != "alice:pa55word?token=t0ken-value" {
			t.Errorf("%s: the receiver got %q; want the credentials and the token", kind, g)
		}
		all := strings.Join(st.Warnings, "\n") + st.Outputs[0].Output
		if len(st.Warnings) == 0 || strings.Contains(all, "pa55word") || strings.Contains(all, "t0ken-value") || strings.Contains(all, "alice") {
			t.Errorf("%s: warnings and stats show a secret, or say nothing: %q", kind, all)
		}
	}
}
