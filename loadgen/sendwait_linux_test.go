//go:build linux

package loadgen

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// TestSendWaiter: the request reaches the server whole and the wait ends when the
// answer arrives, also when the send buffer fills (the rest is written the ordinary
// way), and a deadline ends a wait for an answer that never comes.
func TestSendWaiter(t *testing.T) {
	got := make(chan []byte, 1)
	addr := serveRaw(t, func(c net.Conn) {
		time.Sleep(50 * time.Millisecond) // let a large request fill the buffers
		var n [8]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		size := int(n[0])<<16 | int(n[1])<<8 | int(n[2])
		b := make([]byte, size)
		copy(b, n[:])
		if _, err := io.ReadFull(c, b[8:]); err != nil {
			return
		}
		got <- b
		if n[3] == 'a' {
			c.Write([]byte("answer"))
		}
		io.Copy(io.Discard, c)
	})
	clock := &runClock{start: time.Now()}
	for _, tc := range []struct {
		name   string
		size   int
		answer bool
	}{
		{"small", 200, true},
		{"fills the send buffer", 4 << 20, true},
		{"no answer, deadline", 200, false},
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if tc.size > 1<<20 {
			// Small enough that 4 MiB cannot all be buffered while the server sleeps,
			// large enough that writing the rest is not paced by delayed ACKs (a
			// 4 KiB buffer took over 2 s for 4 MiB on a loaded machine).
			_ = c.(*net.TCPConn).SetWriteBuffer(64 << 10)
		}
		req := bytes.Repeat([]byte{'r'}, tc.size)
		req[0], req[1], req[2], req[3] = byte(tc.size>>16), byte(tc.size>>8), byte(tc.size), 'n'
		if tc.answer {
			req[3] = 'a'
		}
		deadline := 2 * time.Second // the no-answer case waits it out
		if tc.answer {
			deadline = 30 * time.Second // only a hang reaches it
		}
		_ = c.SetDeadline(time.Now().Add(deadline))
		sw := newSendWaiter(c)
		if sw == nil {
			t.Fatal("no sendWaiter for a TCP connection")
		}
		t0 := time.Now()
		rest, err := sw.writeThenWait(req, clock)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.size > 1<<20 && len(rest) == 0 {
			t.Errorf("%s: everything written without blocking; the test wants a full send buffer", tc.name)
		}
		if len(rest) > 0 {
			if _, err := c.Write(rest); err != nil {
				t.Fatalf("%s: writing the rest: %v", tc.name, err)
			}
		}
		if b := <-got; !bytes.Equal(b, req) {
			t.Errorf("%s: the server got %d bytes, not the request's %d", tc.name, len(b), len(req))
		}
		buf := make([]byte, 16)
		n, err := c.Read(buf)
		switch {
		case tc.answer && (err != nil || string(buf[:n]) != "answer"):
			t.Errorf("%s: read %q, %v; want the answer", tc.name, buf[:n], err)
		case !tc.answer && !isTimeout(err):
			t.Errorf("%s: read %q, %v; want the deadline's timeout", tc.name, buf[:n], err)
		case !tc.answer && time.Since(t0) < time.Second:
			t.Errorf("%s: the wait ended after %v, before the deadline, with no answer", tc.name, time.Since(t0))
		}
		c.Close()
	}
}
