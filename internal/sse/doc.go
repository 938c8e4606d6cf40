// Package sse frames and parses Server-Sent Events (the text/event-stream format that
// OpenAI-compatible servers stream completions in).
//
// The writing side is a set of append functions, so a server can build a chunk in a
// reused buffer with no allocation:
//
//	buf = sse.AppendData(buf[:0], chunkJSON) // "data: {...}\n\n"
//	buf = append(buf, sse.Done...)           // "data: [DONE]\n\n"
//
// The reading side is [Reader], a parser that follows the WHATWG event-stream rules
// (LF, CRLF or CR line ends; "data", "event", "id", "retry" fields; comments; multi-line
// data joined with "\n"; a leading BOM) and returns each [Event] as byte slices that point
// into its own buffer, valid until the next call:
//
//	r := sse.NewReader(resp.Body)
//	for {
//		ev, err := r.Next()
//		if err != nil { break } // io.EOF at a clean end
//		if sse.IsDone(ev.Data) { break }
//		use(ev.Data)
//	}
//
// It deliberately does not do reconnection (Last-Event-ID, retry): benchmarks measure a
// stream, they do not resume it.
package sse
