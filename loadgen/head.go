package loadgen

// A plain answer's head, read without fasthttp: the common non-streaming answer
// (HTTP/1.1, a status with a body, Content-Length) is parsed where it lies in the
// connection's read buffer, and its body, when the buffer holds it, used from there.
// Anything else is left, unread, to fasthttp.

import (
	"bufio"
	"bytes"
	"io"

	"github.com/valyala/fasthttp"
)

// plainAnswer is an answer read by readPlain.
type plainAnswer struct {
	ok     bool // this answer was read by readPlain (w.resp holds nothing)
	status int
	close  bool   // Connection: close
	body   []byte // in the read buffer, or in w.buf; valid until the next read
}

// readPlain reads an answer into w.plain when its head is plain: "HTTP/1.1 NNN",
// a status that carries a body (not 1xx, 204, 304), one valid Content-Length (at most
// maxPlainBody), no Transfer-Encoding, a Connection of close or keep-alive if any, and
// the whole head already in the buffer. handled is false, with nothing consumed, for any other
// answer (fasthttp reads it). A failure to read the first byte is reported as
// fasthttp reports it (ErrTimeout, else io.EOF), so errors read the same either way.
func (w *worker) readPlain(br *bufio.Reader) (handled bool, err error) {
	if _, err := br.Peek(1); err != nil {
		if t, ok := err.(interface{ Timeout() bool }); ok && t.Timeout() {
			return true, fasthttp.ErrTimeout
		}
		return true, io.EOF
	}
	b, _ := br.Peek(br.Buffered())
	status, close, length, head, ok := parsePlainHead(b)
	if !ok {
		return false, nil
	}
	w.plain = plainAnswer{ok: true, status: status, close: close}
	if head+length <= len(b) {
		w.plain.body = b[head : head+length]
		_, _ = br.Discard(head + length)
		return true, nil
	}
	_, _ = br.Discard(head)
	if _, err := io.ReadFull(br, w.bodyBuf(length)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		w.plain = plainAnswer{}
		return true, err
	}
	w.plain.body = w.buf
	return true, nil
}

// bodyBuf returns w.buf sized to hold a body of length bytes; a buffer past keptBody
// is not kept for a shorter body.
func (w *worker) bodyBuf(length int) []byte {
	if cap(w.buf) < length || cap(w.buf) > keptBody && length <= keptBody {
		w.buf = make([]byte, length)
	}
	w.buf = w.buf[:length]
	return w.buf
}

// parsePlainHead parses a plain answer's head (see readPlain) at the start of b:
// the status, Connection: close, the Content-Length and the head's length; ok is
// false when the head is not plain or not all in b.
func parsePlainHead(b []byte) (status int, close bool, length, head int, ok bool) {
	const proto = "HTTP/1.1 "
	if len(b) < len(proto)+4 || string(b[:len(proto)]) != proto {
		return 0, false, 0, 0, false
	}
	for _, d := range b[len(proto) : len(proto)+3] {
		if d < '0' || d > '9' {
			return 0, false, 0, 0, false
		}
		status = status*10 + int(d-'0')
	}
	if c := b[len(proto)+3]; c != ' ' && c != '\r' || status < 200 || status == 204 || status == 304 {
		return 0, false, 0, 0, false
	}
	i := bytes.IndexByte(b, '\n')
	if i < 0 || b[i-1] != '\r' {
		return 0, false, 0, 0, false
	}
	length = -1
	for p := i + 1; ; {
		e := bytes.IndexByte(b[p:], '\n')
		if e < 1 || b[p+e-1] != '\r' {
			return 0, false, 0, 0, false // incomplete, or a bare LF
		}
		line := b[p : p+e-1]
		p += e + 1
		if len(line) == 0 {
			if length < 0 {
				return 0, false, 0, 0, false
			}
			return status, close, length, p, true
		}
		c := bytes.IndexByte(line, ':')
		if c < 1 || line[0] == ' ' || line[0] == '\t' || line[c-1] == ' ' {
			return 0, false, 0, 0, false // folded, or not a header
		}
		name, value := line[:c], bytes.Trim(line[c+1:], " \t")
		switch {
		case len(name) == len("Content-Length") && bytes.EqualFold(name, []byte("Content-Length")):
			n, ok := parseLength(value)
			if !ok || length >= 0 {
				return 0, false, 0, 0, false
			}
			length = n
		case len(name) == len("Transfer-Encoding") && bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return 0, false, 0, 0, false
		case len(name) == len("Connection") && bytes.EqualFold(name, []byte("Connection")):
			switch {
			case bytes.EqualFold(value, []byte("close")):
				close = true
			case !bytes.EqualFold(value, []byte("keep-alive")):
				return 0, false, 0, 0, false
			}
		}
	}
}

// maxPlainBody is the largest body readPlain reads; a larger one is left to fasthttp,
// as before readPlain existed.
const maxPlainBody = 16 << 20

// parseLength parses a Content-Length value: decimal digits, at most maxPlainBody.
func parseLength(v []byte) (int, bool) {
	if len(v) == 0 || len(v) > 9 {
		return 0, false
	}
	n := 0
	for _, d := range v {
		if d < '0' || d > '9' {
			return 0, false
		}
		n = n*10 + int(d-'0')
	}
	return n, n <= maxPlainBody
}
