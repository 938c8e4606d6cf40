package sse

import "bytes"

// Done is the frame that ends an OpenAI stream: "data: [DONE]\n\n".
var Done = []byte("data: [DONE]\n\n")

// ContentType is the Content-Type of an event stream.
const ContentType = "text/event-stream"

// AppendData appends one event whose data is data to dst and returns the extended
// buffer. Lines inside data become separate "data:" lines, so a reader reassembles
// data (CR and CRLF come back as LF: the format cannot carry them).
// Data without line breaks (any JSON) takes the fast path: "data: " + data + "\n\n".
func AppendData(dst, data []byte) []byte {
	if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0 {
		dst = append(dst, "data: "...)
		dst = append(dst, data...)
		return append(dst, '\n', '\n')
	}
	return appendLines(dst, data)
}

// BeginData starts an event whose data the caller appends to the returned buffer in
// place, then ends with [EndData]: BeginData, the data, EndData is what [AppendData]
// writes for data without line breaks (any JSON), with no copy of the data. The data
// must not contain CR or LF.
func BeginData(dst []byte) []byte { return append(dst, "data: "...) }

// BeginEvent is [BeginData] after an "event:" type line, as [AppendEvent] writes it.
func BeginEvent(dst []byte, typ string) []byte {
	if typ != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, typ...)
		dst = append(dst, '\n')
	}
	return BeginData(dst)
}

// EndData ends an event started by [BeginData] or [BeginEvent].
func EndData(dst []byte) []byte { return append(dst, '\n', '\n') }

// AppendEvent appends an event with an "event:" type line (as the Responses API uses,
// e.g. "response.output_text.delta") followed by its data. An empty typ writes no
// event line.
func AppendEvent(dst []byte, typ string, data []byte) []byte {
	if typ != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, typ...)
		dst = append(dst, '\n')
	}
	return AppendData(dst, data)
}

// AppendComment appends a comment line (": text\n\n"), which readers ignore; servers use
// it as a keep-alive.
func AppendComment(dst []byte, text string) []byte {
	dst = append(dst, ": "...)
	dst = append(dst, text...)
	return append(dst, '\n', '\n')
}

func appendLines(dst, data []byte) []byte {
	for {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			dst = append(dst, "data: "...)
			dst = append(dst, data...)
			dst = append(dst, '\n')
			break
		}
		dst = append(dst, "data: "...)
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return append(dst, '\n')
}

// IsDone reports whether data is the OpenAI end-of-stream sentinel "[DONE]".
func IsDone(data []byte) bool { return string(data) == "[DONE]" }
