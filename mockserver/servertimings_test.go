package mockserver

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/internal/openai"
	"github.com/perfgate/perfgate/record"
)

// TestServerTimings: with Config.ServerTimings each server's object rides the final
// usage chunk of a stream and the whole answer, chat and completions, with the times
// the mock measured: a TTFT of at least the configured 3 ms (the mock waits that long
// from the request's arrival before its first token), a last token at least 3 ITLs of
// 1 ms after that, and no queue without the batching scheduler. A stream without
// usage, and the default, carry none.
func TestServerTimings(t *testing.T) {
	for _, src := range record.ServerSources {
		t.Run(src, func(t *testing.T) {
			s := start(t, Config{TTFT: distribution.MustSpec("fixed:3"), ITL: distribution.MustSpec("fixed:1"), ServerTimings: src})
			for _, tc := range []struct{ path, body string }{
				{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`},
				{"/v1/completions", `{"model":"m","prompt":"hi","max_tokens":4,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`},
				{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"ignore_eos":true}`},
				{"/v1/completions", `{"model":"m","prompt":"hi","max_tokens":4,"ignore_eos":true}`},
			} {
				resp, b := post(t, s.URL()+tc.path, tc.body)
				if resp.StatusCode != 200 {
					t.Fatalf("%s: status %d: %s", tc.path, resp.StatusCode, b)
				}
				sd := lastServerData(t, b)
				stream := strings.Contains(tc.body, `"stream":true`)
				if sd == nil || sd.Source != src || !sd.TTFT.Known || !sd.Decode.Known {
					t.Fatalf("%s (stream %v): server data %+v in %s; want %s's with a TTFT and a decode", tc.path, stream, sd, b, src)
				}
				// SGLang's stamps are float64 Unix seconds, good to about 0.25 µs.
				if sd.TTFT.D < 3*time.Millisecond-time.Microsecond {
					t.Errorf("%s (stream %v): server TTFT %v < the configured 3ms", tc.path, stream, sd.TTFT.D)
				}
				// The last token is due 3 ITLs after the first's deadline (a first token
				// written late leaves less than that between the two: deadlines are absolute).
				if stream && (!sd.E2E.Known || sd.E2E.D < 6*time.Millisecond-time.Microsecond) {
					t.Errorf("%s: server request latency %v < 3ms + 3 ITLs of 1ms", tc.path, sd.E2E)
				}
				if sd.Queue.Known && sd.Queue.D != 0 {
					t.Errorf("%s: queue %v without a batching scheduler, want 0", tc.path, sd.Queue.D)
				}
			}
			// A stream that did not ask for usage has no usage chunk, so no server data.
			_, b := post(t, s.URL()+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":2,"stream":true}`)
			if sd := lastServerData(t, b); sd != nil {
				t.Errorf("a stream without usage carried %+v", sd)
			}
		})
	}
	s := start(t, Config{Fast: true})
	if _, b := post(t, s.URL()+"/v1/completions", `{"model":"m","prompt":"hi","max_tokens":2}`); lastServerData(t, b) != nil {
		t.Errorf("the default mock sent server data: %s", b)
	}
}

// TestServerTimingsQueue: under the batching scheduler with room for one sequence,
// the second of two concurrent requests waits for the first: its reported queue
// time is the scheduler's wait, and its TTFT holds it.
func TestServerTimingsQueue(t *testing.T) {
	s := start(t, Config{ServerTimings: record.ServerVLLM, Batch: BatchConfig{Enabled: true, Step: 2 * time.Millisecond, MaxBatch: 1}})
	body := `{"model":"m","prompt":"hi","max_tokens":5,"ignore_eos":true}`
	type answer struct {
		b   []byte
		err error
	}
	got := make(chan answer, 2)
	for range 2 {
		go func() { // no t.Fatal off the test goroutine: the answers are read below
			resp, err := http.Post(s.URL()+"/v1/completions", "application/json", strings.NewReader(body))
			if err != nil {
				got <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			got <- answer{b, err}
		}()
	}
	var sds []*record.ServerData
	for range 2 {
		x := <-got
		if x.err != nil {
			t.Fatal(x.err)
		}
		sds = append(sds, lastServerData(t, x.b))
	}
	a, b := sds[0], sds[1]
	if a == nil || b == nil {
		t.Fatalf("server data %+v, %+v", a, b)
	}
	if a.Queue.D > b.Queue.D {
		a, b = b, a
	}
	// The second waited for the first's 5 tokens, 2ms steps each: at least 8 ms.
	if !b.Queue.Known || b.Queue.D < 8*time.Millisecond || b.TTFT.D < b.Queue.D {
		t.Errorf("queued request: queue %v, TTFT %v; want a queue >= 8ms inside the TTFT", b.Queue, b.TTFT)
	}
}

// TestServerTimingsResponsesAndMessages: vLLM's metrics object rides the Responses
// API's answers, as vLLM's does: at the top level of a whole answer, and in the
// response.completed event's response of a stream (no earlier event has it), with
// the times the mock measured. The other servers' data, and every server's on
// Anthropic Messages (vLLM's AnthropicMessagesResponse has no metrics), are absent.
func TestServerTimingsResponsesAndMessages(t *testing.T) {
	const (
		respStream = `{"model":"m","input":"hi","max_output_tokens":4,"ignore_eos":true,"stream":true}`
		respWhole  = `{"model":"m","input":"hi","max_output_tokens":4,"ignore_eos":true}`
		msgStream  = `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"ignore_eos":true,"stream":true}`
		msgWhole   = `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"ignore_eos":true}`
	)
	for _, src := range record.ServerSources {
		t.Run(src, func(t *testing.T) {
			s := start(t, Config{TTFT: distribution.MustSpec("fixed:3"), ITL: distribution.MustSpec("fixed:1"), ServerTimings: src})
			for _, body := range []string{respStream, respWhole} {
				resp, b := post(t, s.URL()+"/v1/responses", body)
				if resp.StatusCode != 200 {
					t.Fatalf("/v1/responses: status %d: %s", resp.StatusCode, b)
				}
				sd := lastServerData(t, b)
				if src != record.ServerVLLM {
					if sd != nil {
						t.Errorf("/v1/responses with %s: server data %+v; want none (not documented there)", src, sd)
					}
					continue
				}
				if sd == nil || sd.Source != src || !sd.TTFT.Known || sd.TTFT.D < 3*time.Millisecond || !sd.Decode.Known {
					t.Fatalf("/v1/responses %s: server data %+v in %s; want vLLM's with a TTFT >= 3ms and a decode", body, sd, b)
				}
				if strings.Contains(body, `"stream":true`) {
					if sd.E2E.D < 6*time.Millisecond {
						t.Errorf("/v1/responses stream: server request latency %v < 3ms + 3 ITLs of 1ms", sd.E2E.D)
					}
					for ev := range strings.SplitSeq(string(b), "\n\n") {
						if strings.Contains(ev, `"metrics"`) && !strings.HasPrefix(ev, "event: response.completed") {
							t.Errorf("metrics on an event other than response.completed: %s", ev)
						}
					}
				}
			}
			for _, body := range []string{msgStream, msgWhole} {
				resp, b := post(t, s.URL()+"/v1/messages", body)
				if resp.StatusCode != 200 {
					t.Fatalf("/v1/messages: status %d: %s", resp.StatusCode, b)
				}
				if sd := lastServerData(t, b); sd != nil {
					t.Errorf("/v1/messages with %s: server data %+v; want none", src, sd)
				}
			}
		})
	}
}

// lastServerData is the server data of a whole answer, or of a stream's last event
// that has one; nil when none has.
func lastServerData(t *testing.T, body []byte) *record.ServerData {
	t.Helper()
	var p openai.ChunkParser
	var c openai.StreamChunk
	var last *record.ServerData
	read := func(data []byte) {
		if err := p.Parse(data, &c); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if c.ServerBad != "" {
			t.Errorf("the mock wrote a %s of the wrong type: %s", c.ServerBad, data)
		}
		if c.Server != nil {
			sd := *c.Server
			last = &sd
		}
	}
	if !bytes.HasPrefix(body, []byte("data: ")) && !bytes.HasPrefix(body, []byte("event: ")) {
		read(body)
		return last
	}
	for _, line := range bytes.Split(body, []byte("\n")) {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if ok && string(data) != "[DONE]" {
			read(data)
		}
	}
	return last
}

// Bad --server-timings values are refused: by Validate naming the field, at flag
// parsing naming the flag.
func TestServerTimingsBadInput(t *testing.T) {
	if err := (&Config{ServerTimings: "tgi"}).Validate(); err == nil || !strings.Contains(err.Error(), "server_timings") {
		t.Errorf("Validate(tgi) = %v, want an error naming server_timings", err)
	}
	for _, ok := range []string{"", "none", "vllm", "llamacpp", "sglang"} {
		if err := (&Config{ServerTimings: ok}).Validate(); err != nil {
			t.Errorf("Validate(%q) = %v", ok, err)
		}
	}
	var c Config
	fs := flag.NewFlagSet("mock", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--server-timings", "VLLM"}); err == nil || !strings.Contains(err.Error(), "server-timings") {
		t.Errorf("--server-timings VLLM: %v, want an error naming the flag", err)
	}
	if err := fs.Parse([]string{"--server-timings", "sglang"}); err != nil || c.ServerTimings != "sglang" {
		t.Errorf("--server-timings sglang: %v, %q", err, c.ServerTimings)
	}
}
