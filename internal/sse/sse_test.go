package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

type ev struct {
	typ, data, id string
	retry         int
}

func readAll(t *testing.T, r *Reader) ([]ev, error) {
	t.Helper()
	return events(r)
}

func TestReader(t *testing.T) {
	tests := []struct {
		name, in string
		want     []ev
	}{
		{"openai stream", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []ev{{"", `{"a":1}`, "<nil>", -1}, {"", "[DONE]", "<nil>", -1}}},
		{"no space after colon", "data:x\n\n", []ev{{"", "x", "<nil>", -1}}},
		{"only one space stripped", "data:  x\n\n", []ev{{"", " x", "<nil>", -1}}},
		{"multi-line data joined with LF", "data: a\ndata: b\n\n", []ev{{"", "a\nb", "<nil>", -1}}},
		{"CRLF line ends", "data: a\r\ndata: b\r\n\r\n", []ev{{"", "a\nb", "<nil>", -1}}},
		{"CR line ends", "data: a\rdata: b\r\r", []ev{{"", "a\nb", "<nil>", -1}}},
		{"event type and id", "event: response.output_text.delta\nid: 7\ndata: {}\n\n", []ev{{"response.output_text.delta", "{}", "7", -1}}},
		{"retry", "retry: 1500\ndata: x\n\n", []ev{{"", "x", "<nil>", 1500}}},
		{"bad retry ignored", "retry: 15x\ndata: x\n\n", []ev{{"", "x", "<nil>", -1}}},
		{"comments ignored", ": keep-alive\n\n: c\ndata: x\n\n", []ev{{"", "x", "<nil>", -1}}},
		{"event without data not dispatched; type reset", "event: ping\n\ndata: x\n\n", []ev{{"", "x", "<nil>", -1}}},
		{"BOM skipped", "\xEF\xBB\xBFdata: x\n\n", []ev{{"", "x", "<nil>", -1}}},
		{"field without colon", "data\n\n", []ev{{"", "", "<nil>", -1}}},
		{"unknown field ignored", "foo: bar\ndata: x\n\n", []ev{{"", "x", "<nil>", -1}}},
		{"partial event at EOF dropped", "data: x\n\ndata: y\n", []ev{{"", "x", "<nil>", -1}}},
		{"unterminated line at EOF dropped", "data: x\n\ndata: y", []ev{{"", "x", "<nil>", -1}}},
		{"empty stream", "", nil},
		{"data with colon inside", "data: {\"a\":\"b:c\"}\n\n", []ev{{"", `{"a":"b:c"}`, "<nil>", -1}}},
		// The last event ID persists until an "id:" field changes it; an empty one resets
		// it to empty (WHATWG HTML, "Interpreting an event stream").
		{"empty id resets the last event id", "id: 5\ndata: a\n\nid:\ndata: b\n\ndata: c\n\n", []ev{{"", "a", "5", -1}, {"", "b", "", -1}, {"", "c", "", -1}}},
		{"id without colon resets it too", "id: 5\ndata: a\n\nid\ndata: b\n\n", []ev{{"", "a", "5", -1}, {"", "b", "", -1}}},
		{"id kept by later events", "id: 5\ndata: a\n\ndata: b\n\n", []ev{{"", "a", "5", -1}, {"", "b", "5", -1}}},
		{"id set by an event not dispatched", "id: 3\n\ndata: x\n\n", []ev{{"", "x", "3", -1}}},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x00\ndata: b\n\n", []ev{{"", "a", "1", -1}, {"", "b", "1", -1}}},
	}
	for _, tc := range tests {
		for _, mode := range []string{"whole", "one-byte", "half"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				var src io.Reader = strings.NewReader(tc.in)
				switch mode {
				case "one-byte":
					src = iotest.OneByteReader(src)
				case "half":
					src = iotest.HalfReader(src)
				}
				got, err := readAll(t, NewReaderSize(src, 64, 0))
				if err != io.EOF {
					t.Fatalf("Next error = %v, want io.EOF", err)
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("events of %q = %v, want %v", tc.in, got, tc.want)
				}
			})
		}
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	datas := []string{`{"id":"x","choices":[]}`, "line1\nline2", "", "a\n\nb", strings.Repeat("z", 10000)}
	var buf []byte
	for i, d := range datas {
		if i%2 == 0 {
			buf = AppendData(buf, []byte(d))
		} else {
			buf = AppendEvent(buf, "t", []byte(d))
		}
		buf = AppendComment(buf, "ka")
	}
	buf = append(buf, Done...)
	r := NewReaderSize(bytes.NewReader(buf), 64, 0)
	for i, d := range datas {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if string(e.Data) != d {
			t.Errorf("event %d data = %q, want %q", i, e.Data, d)
		}
		if wantT := map[bool]string{true: "", false: "t"}[i%2 == 0]; string(e.Type) != wantT {
			t.Errorf("event %d type = %q, want %q", i, e.Type, wantT)
		}
	}
	e, err := r.Next()
	if err != nil || !IsDone(e.Data) {
		t.Fatalf("last event = %q, %v; want [DONE]", e.Data, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after [DONE]: %v, want io.EOF", err)
	}
	if r.Bytes() != int64(len(buf)) || r.Events() != int64(len(datas)+1) {
		t.Errorf("Bytes, Events = %d, %d; want %d, %d", r.Bytes(), r.Events(), len(buf), len(datas)+1)
	}
}

func TestReaderLimit(t *testing.T) {
	in := "data: " + strings.Repeat("x", 1000) + "\n\n"
	_, err := NewReaderSize(strings.NewReader(in), 64, 100).Next()
	if !errors.Is(err, ErrEventTooLarge) {
		t.Errorf("Next on a 1000-byte event with limit 100: %v, want ErrEventTooLarge", err)
	}
	// Many data lines each under the limit, together over it.
	in = strings.Repeat("data: "+strings.Repeat("x", 40)+"\n", 10) + "\n"
	_, err = NewReaderSize(strings.NewReader(in), 64, 100).Next()
	if !errors.Is(err, ErrEventTooLarge) {
		t.Errorf("Next on 10 lines of 40 bytes with limit 100: %v, want ErrEventTooLarge", err)
	}
}

func TestReaderSourceError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)))
	if e, err := r.Next(); err != nil || string(e.Data) != "a" {
		t.Fatalf("first event = %q, %v", e.Data, err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Errorf("second Next error = %v, want %v", err, boom)
	}
}

func TestReset(t *testing.T) {
	r := NewReader(strings.NewReader("data: a\n\n"))
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	r.Reset(strings.NewReader("data: b\n\n"))
	e, err := r.Next()
	if err != nil || string(e.Data) != "b" {
		t.Errorf("after Reset: %q, %v; want \"b\"", e.Data, err)
	}
}

func TestAppendDataAllocs(t *testing.T) {
	buf := make([]byte, 0, 1024)
	data := []byte(`{"choices":[{"delta":{"content":"hi"}}]}`)
	if n := testing.AllocsPerRun(100, func() { buf = AppendData(buf[:0], data) }); n != 0 {
		t.Errorf("AppendData allocs = %v, want 0", n)
	}
}

func TestReaderAllocs(t *testing.T) {
	var stream []byte
	chunk := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" the"}}]}`)
	for range 200 {
		stream = AppendData(stream, chunk)
	}
	src := bytes.NewReader(stream)
	r := NewReader(src)
	n := testing.AllocsPerRun(20, func() {
		src.Reset(stream)
		r.Reset(src)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	})
	if n != 0 {
		t.Errorf("allocs per 200-event stream = %v, want 0", n)
	}
}

func BenchmarkReader(b *testing.B) {
	var stream []byte
	chunk := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"content":" the"},"finish_reason":null}]}`)
	for range 1000 {
		stream = AppendData(stream, chunk)
	}
	src := bytes.NewReader(stream)
	r := NewReader(src)
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		src.Reset(stream)
		r.Reset(src)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/event")
}

// TestBeginEndData: BeginData/BeginEvent, data appended in place, EndData frame an event
// byte for byte as AppendData/AppendEvent do.
func TestBeginEndData(t *testing.T) {
	for _, data := range []string{`{"a":1}`, "", "[DONE]"} {
		for _, typ := range []string{"", "response.output_text.delta"} {
			got := EndData(append(BeginEvent(nil, typ), data...))
			if want := AppendEvent(nil, typ, []byte(data)); string(got) != string(want) {
				t.Errorf("BeginEvent(%q)+%q+EndData = %q, want %q", typ, data, got, want)
			}
		}
		if got, want := EndData(append(BeginData(nil), data...)), AppendData(nil, []byte(data)); string(got) != string(want) {
			t.Errorf("BeginData+%q+EndData = %q, want %q", data, got, want)
		}
	}
}

// A byte-order mark is skipped only at the start of the stream, however the source
// splits it into reads (issue 26: one split gave an event the whole read did not).
func TestBOMReadBoundaries(t *testing.T) {
	for in, want := range map[string]int{
		"\n\xEF\xBB\xBFdata: x\n\n": 0, // not at the start: part of the field name
		"\xEF\xBB\xBFdata: x\n\n":   1,
		"\xEF\xBBdata: x\n\n":       0, // half a mark is not one
		"\xEF":                      0,
	} {
		whole, _ := readAll(t, NewReader(strings.NewReader(in)))
		for _, src := range []io.Reader{iotest.OneByteReader(strings.NewReader(in)), iotest.HalfReader(strings.NewReader(in)), iotest.DataErrReader(strings.NewReader(in))} {
			got, err := readAll(t, NewReader(src))
			if err != io.EOF || len(got) != want || len(whole) != want {
				t.Errorf("%q: %d events read whole, %d (%v) through %T; want %d", in, len(whole), len(got), err, src, want)
			}
		}
	}
}

// trickle returns one byte slice of src per Read, n bytes at a time.
type trickle struct {
	src []byte
	n   int
}

func (t *trickle) Read(p []byte) (int, error) {
	if len(t.src) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), t.n)], t.src)
	t.src = t.src[n:]
	return n, nil
}

// BenchmarkTrickle reads one 16 MiB event trickled in 1 KiB reads and the same event
// read whole, and prints the CPU time of the first over the second (trickle/whole;
// the target is within 2×). A reader that rescanned the buffered line on each read
// took 10.3 s against 28 ms (issue 26).
func BenchmarkTrickle(b *testing.B) {
	event := append(append([]byte("data: "), bytes.Repeat([]byte("x"), 16<<20)...), "\n\n"...)
	read := func(chunk int) time.Duration {
		start := cpuTime()
		r := NewReaderSize(&trickle{src: event, n: chunk}, 4096, 32<<20)
		e, err := r.Next()
		if err != nil || len(e.Data) != 16<<20 {
			b.Fatalf("Next = %d bytes, %v", len(e.Data), err)
		}
		return cpuTime() - start
	}
	var trickled, whole time.Duration
	for b.Loop() {
		trickled += read(1 << 10)
		whole += read(len(event))
	}
	b.ReportMetric(float64(trickled)/float64(whole), "trickle/whole")
	b.ReportMetric(float64(trickled.Milliseconds())/float64(b.N), "trickle-cpu-ms/op")
	b.ReportMetric(float64(whole.Milliseconds())/float64(b.N), "whole-cpu-ms/op")
}
