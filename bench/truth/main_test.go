package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestTinyRun runs the whole benchmark at a tiny size: every client's every request is
// matched to the server's log with the same number of tokens (run fails otherwise), no
// client saw a token before it was emitted beyond the clock's granularity (run fails
// otherwise), and the table has a row per client and quantity, the differences and the
// target line.
func TestTinyRun(t *testing.T) {
	var out strings.Builder
	if err := run([]string{"-requests", "20", "-concurrency", "4", "-tokens", "6", "-ttft", "1ms", "-itl", "500us"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"| client | error | p50 | p90 | p99 | n |",
		"| perfgate | TTFT |", "| perfgate | token |", "| perfgate | ITL |",
		"| perfgate-app | TTFT |", "| minimal | TTFT |", "| minimal | ITL |", "| minimal | reported TTFT |",
		"| perfgate − minimal | TTFT |", "| perfgate-app − minimal | ITL |", "| perfgate − minimal | reported TTFT |",
		"Target: perfgate's TTFT p50 error within 0.1 ms",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the table has no %q:\n%s", want, s)
		}
	}
	// Each client's rows count every request (20 TTFTs and reported TTFTs), every token (120)
	// and every gap (100).
	for _, c := range clientNames {
		for what, n := range map[string]string{"TTFT": "| 20 |", "token": "| 120 |", "ITL": "| 100 |", "reported TTFT": "| 20 |", "server flush": "| 120 |"} {
			want := "| " + c + " | " + what + " |"
			line := lineWith(s, want)
			if !strings.HasSuffix(line, n) {
				t.Errorf("row %q does not count %s: %q", want, n, line)
			}
		}
	}
}

func lineWith(s, prefix string) string {
	for l := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestMatch: a request missing from the server's log, a different token count or a
// different number of requests is an error naming the request; a matched request gives
// its TTFT, token and signed ITL errors.
func TestMatch(t *testing.T) {
	ms := time.Millisecond
	log := map[string]served{"a": {arrived: 2 * ms, emit: []time.Duration{10 * ms, 15 * ms, 20 * ms}, flushed: []time.Duration{10 * ms, 15*ms + ms/4, 20 * ms}}}
	var e errs
	if err := match("c", []seen{{id: "a", sent: ms, tokens: []time.Duration{11 * ms, 15*ms + ms/2, 20*ms + ms/2}}}, log, &e); err != nil {
		t.Fatal(err)
	}
	// Reported: the client's TTFT 11 − 1 = 10 against the server's 10 − 2 = 8.
	if e.requests != 1 || len(e.ttft) != 1 || e.ttft[0] != 1 || len(e.token) != 3 || len(e.itl) != 2 || e.itl[0] != -0.5 || e.itl[1] != 0 ||
		len(e.reported) != 1 || e.reported[0] != 2 || len(e.flush) != 3 || e.flush[1] != 0.25 {
		t.Errorf("errors %+v, want TTFT 1, tokens 1/0.5/0.5, ITL -0.5/0, reported TTFT 2, flush 0/0.25/0", e)
	}
	for _, c := range []struct {
		got  []seen
		want string
	}{
		{[]seen{{id: "b", tokens: []time.Duration{ms, ms, ms}}}, `request "b" is not in the server's log`},
		{[]seen{{id: "a", tokens: []time.Duration{ms}}}, `the client saw 1 tokens, the server sent 3`},
		{nil, "0 requests seen by the client, 1 in the server's log"},
	} {
		if err := match("c", c.got, log, &errs{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("match(%v) = %v, want an error with %q", c.got, err, c.want)
		}
	}
}

// TestCheckEarly: a client time before the server's emission by more than the slack
// fails the run; within it, it does not.
func TestCheckEarly(t *testing.T) {
	o := options{clients: []string{clientMinimal}, slack: 50 * time.Microsecond}
	log := map[string]served{"a": {emit: []time.Duration{time.Millisecond, 2 * time.Millisecond}}}
	for _, c := range []struct {
		early time.Duration
		fail  bool
	}{{40 * time.Microsecond, false}, {60 * time.Microsecond, true}} {
		e := &errs{}
		if err := match(clientMinimal, []seen{{id: "a", tokens: []time.Duration{time.Millisecond - c.early, 2 * time.Millisecond}}}, log, e); err != nil {
			t.Fatal(err)
		}
		err := checkEarly(o, map[string]*errs{clientMinimal: e})
		if (err != nil) != c.fail {
			t.Errorf("a token %v early: checkEarly = %v, want failure %v", c.early, err, c.fail)
		}
	}
}

// TestFlags: bad flags are errors naming the flag.
func TestFlags(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"-concurrency 0", "-concurrency 0"},
		{"-requests 1 -rounds 2", "-requests 1"},
		{"-tokens 1", "-tokens 1"},
		{"-clients perfgate,wrk", `unknown client "wrk"`},
		{"extra", `unexpected argument "extra"`},
	} {
		if _, err := parseFlags(strings.Fields(c.args), io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseFlags(%s) = %v, want an error with %q", c.args, err, c.want)
		}
	}
}
