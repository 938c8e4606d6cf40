package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/mockserver"
	"github.com/perfgate/perfgate/record"
)

// A server-data field of the wrong type is ignored for its request (unknown there,
// its other fields and the record kept whole) and the run says so in one warning
// line; the others are read, streamed (the final usage chunk) and whole.
func TestServerDataWrongType(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queue := []string{`2.5`, `"2.5"`, `-1`, `null`, `{"ms":2}`}[n.Add(1)%5]
		metrics := `"metrics":{"time_to_first_token_ms":10,"generation_time_ms":4,"queue_time_ms":` + queue + `}`
		usage := `"usage":{"prompt_tokens":40,"completion_tokens":1,"total_tokens":41}`
		if strings.Contains(readAll(r), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}`+"\n\n")
			fmt.Fprint(w, `data: {"choices":[],`+usage+`,`+metrics+`}`+"\n\n")
			fmt.Fprint(w, "data: [DONE]\n\n")
			return
		}
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],`+usage+`,`+metrics+`}`)
	}))
	t.Cleanup(srv.Close)
	for _, stream := range []bool{true, false} {
		n.Store(0)
		out, err := Run(context.Background(), Config{
			Target:   Target{URLs: []string{srv.URL + "/v1"}, API: EndpointChat, NoStream: !stream},
			Workload: Workload{ISL: fixed(20), OSL: fixed(1)},
			Load:     Load{Concurrency: 1},
			Stop:     Stop{Requests: 10},
		}, gpt2(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		queued := 0
		for _, r := range out.Records {
			if !r.OK() {
				t.Fatalf("stream %v: record %d failed: %s %s", stream, r.Index, r.ErrorKind, r.Error)
			}
			s := r.Server
			if s.Source != record.ServerVLLM || s.Prefill != record.SomeDuration(10*time.Millisecond) || s.Decode != record.SomeDuration(4*time.Millisecond) {
				t.Errorf("stream %v: record %d: server data %+v, want vLLM's with prefill 10ms and decode 4ms (the fields of the right type)", stream, r.Index, s)
			}
			if s.Queue.Known {
				queued++
				if s.Queue.D != 2500*time.Microsecond || s.TTFT != record.SomeDuration(12500*time.Microsecond) {
					t.Errorf("stream %v: record %d: queue %v, TTFT %v; want 2.5ms and 12.5ms", stream, r.Index, s.Queue, s.TTFT)
				}
			} else if s.TTFT.Known {
				t.Errorf("stream %v: record %d: TTFT %v known without the queue", stream, r.Index, s.TTFT)
			}
		}
		// Of 10 answers, 2 carried 2.5, 2 null (absent, not wrong) and 6 a wrong type.
		if len(out.Records) != 10 || queued != 2 {
			t.Errorf("stream %v: %d records, %d with a queue time; want 10 and 2", stream, len(out.Records), queued)
		}
		if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "6 answer(s)") || !strings.Contains(out.Warnings[0], "metrics.queue_time_ms") {
			t.Errorf("stream %v: warnings %q; want one line counting the 6 answers with a bad metrics.queue_time_ms", stream, out.Warnings)
		}
		if st, ok := out.Metrics.Stats[record.MetricServerTTFT]; !ok || st.Count != 2 {
			t.Errorf("stream %v: server_ttft %+v (%v); want 2 values", stream, st, ok)
		}
	}
}

// Against the mock with vLLM's per-request metrics on, the Responses API's answers
// carry them (the response.completed event's response of a stream, the top level of a
// whole answer) and every record has them: the mock's server TTFT of at least its
// configured 2 ms, and a decode. Anthropic Messages answers carry none (vLLM's do not),
// and their records have no server data.
func TestServerDataResponsesFromMock(t *testing.T) {
	s := startMock(t, mockserver.Config{TTFT: fixed(2), ITL: fixed(0.2), ServerTimings: record.ServerVLLM})
	for _, tc := range []struct {
		api    Endpoint
		stream bool
		want   bool
	}{{EndpointResponses, true, true}, {EndpointResponses, false, true}, {EndpointMessages, true, false}, {EndpointMessages, false, false}} {
		out, err := Run(context.Background(), Config{
			Target:   Target{URLs: []string{s.BaseURL()}, API: tc.api, NoStream: !tc.stream},
			Workload: Workload{ISL: fixed(20), OSL: fixed(4)},
			Load:     Load{Concurrency: 2},
			Stop:     Stop{Requests: 6},
		}, gpt2(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range out.Records {
			sd := r.Server
			switch {
			case !r.OK():
				t.Fatalf("%s stream %v: record %d failed: %s", tc.api, tc.stream, r.Index, r.Error)
			case !tc.want && !sd.IsZero():
				t.Errorf("%s stream %v: record %d has server data %+v; want none", tc.api, tc.stream, r.Index, sd)
			case tc.want && (sd.Source != record.ServerVLLM || !sd.TTFT.Known || sd.TTFT.D < 2*time.Millisecond || !sd.Decode.Known):
				t.Errorf("%s stream %v: record %d: server data %+v; want vLLM's, TTFT >= 2ms, with a decode", tc.api, tc.stream, r.Index, sd)
			}
		}
		if st, ok := out.Metrics.Stats[record.MetricServerTTFT]; tc.want && (!ok || st.Count != 6) {
			t.Errorf("%s stream %v: server_ttft %+v (%v); want 6 values", tc.api, tc.stream, st, ok)
		}
	}
}
