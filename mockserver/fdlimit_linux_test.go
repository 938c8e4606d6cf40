package mockserver

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fdChildEnv marks the re-executed test binary that runs the server under a low
// RLIMIT_NOFILE, so the test process itself keeps its limit.
const fdChildEnv = "PERFGATE_MOCK_FD_CHILD"

// childNoFile is the child's file-descriptor limit.
const childNoFile = 48

// TestFDExhaustion: with file descriptors exhausted (more connections than RLIMIT_NOFILE
// allows) the server does not exit; it backs off, and once the connections are released
// it serves again.
func TestFDExhaustion(t *testing.T) {
	if os.Getenv(fdChildEnv) == "1" {
		fdChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFDExhaustion$", "-test.count=1")
	cmd.Env = append(os.Environ(), fdChildEnv+"=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "addr ") {
		t.Fatalf("child did not start: %q %v\n%s", line, err, stderr.String())
	}
	addr := strings.TrimSpace(strings.TrimPrefix(line, "addr "))
	// Open more connections than the child has descriptors; they complete in the
	// kernel's backlog whether or not the child can accept them.
	var conns []net.Conn
	for range 3 * childNoFile {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	if len(conns) <= childNoFile {
		t.Fatalf("opened only %d connections, want more than the child's limit %d", len(conns), childNoFile)
	}
	// Wait (bounded) until the child reports failed accepts: descriptors ran out.
	exhausted := false
	for range 100 {
		io.WriteString(stdin, "errors?\n")
		l, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("child died while out of descriptors: %v\n%s", err, stderr.String())
		}
		if l != "errors 0\n" {
			exhausted = true
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !exhausted {
		t.Fatalf("the child never failed an accept with %d connections open (limit %d)", len(conns), childNoFile)
	}
	for _, c := range conns {
		c.Close()
	}
	// Served again: a fresh connection gets a 200 (bounded retries while the child
	// closes the released connections and drains its backlog).
	ok := false
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
		if serveOnce(addr) {
			ok = true
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !ok {
		t.Fatalf("the server did not serve again after the connections were released\n%s", stderr.String())
	}
	io.WriteString(stdin, "quit\n")
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "too many open files") {
		t.Errorf("child log does not mention running out of descriptors:\n%s", stderr.String())
	}
}

func serveOnce(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	io.WriteString(c, rawPost(pathChat, chatBody(2, false)))
	l, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(l, "HTTP/1.1 200")
}

// fdChild runs in the re-executed binary: a server under childNoFile descriptors,
// answering the parent's questions on stdin/stdout.
func fdChild(t *testing.T) {
	s, err := New(WithConfig(Config{Fast: true}), WithTokenizer(gpt2(t)), WithLog(os.Stderr))
	if err != nil {
		t.Fatal(err)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = childNoFile
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("addr " + s.Addr().String() + "\n")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		switch sc.Text() {
		case "errors?":
			os.Stdout.WriteString("errors " + strconv.FormatUint(s.guard.acceptErr.Load(), 10) + "\n")
		case "quit":
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
}
