package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/record"
)

func rec(ok bool, ttftMs int, warmup bool) record.Client {
	r := record.Client{Stream: true, Sent: time.Second, Warmup: warmup, Chunks: []record.Chunk{{T: time.Second + time.Duration(ttftMs)*time.Millisecond, Tokens: 1}}}
	if !ok {
		r.ErrorKind, r.Chunks = record.ErrHTTPStatus, nil
	}
	return r
}

func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, false, 10, "demo")
	p.start = time.Now()
	p.sink(rec(true, 0, true)) // warmup: counted apart
	for i := 1; i <= 100; i++ {
		p.sink(rec(true, i, false))
	}
	p.sink(rec(false, 0, false))
	l := p.line()
	for _, want := range []string{"demo 101/10 requests", "errors 1", "warmup 1", "TTFT p50 50.5 ms", "p99 99.0 ms"} {
		if !strings.Contains(l, want) {
			t.Errorf("progress line %q lacks %q", l, want)
		}
	}
}

// TestProgressTerminal: on a terminal the line is redrawn in place (carriage return,
// padded over a longer previous line) and ended with a newline; elsewhere each print is
// its own line.
func TestProgressTerminal(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, true, 0, "x")
	p.start = time.Now()
	p.lastLen = 500
	p.print(false)
	p.print(true)
	out := b.String()
	if strings.Count(out, "\r") != 2 || !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("terminal output %q: want two carriage-return redraws and one final newline", out)
	}
	if !strings.Contains(out, strings.Repeat(" ", 100)) {
		t.Error("a shorter line does not blank the rest of the longer one")
	}
	b.Reset()
	q := newProgress(&b, false, 0, "x")
	q.start = time.Now()
	q.print(false)
	q.print(true)
	if got := b.String(); strings.Contains(got, "\r") || strings.Count(got, "\n") != 2 {
		t.Errorf("plain output %q: want two whole lines", got)
	}
	b.Reset()
	w := newProgress(&b, true, 0, strings.Repeat("long label ", 20))
	w.width = 40
	w.start = time.Now()
	w.print(true)
	if l := strings.TrimSpace(b.String()); len(l) > 39 {
		t.Errorf("terminal line is %d columns, want < 40: %q", len(l), l)
	}
}
