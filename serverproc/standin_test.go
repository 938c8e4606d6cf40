//go:build unix

package serverproc

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
)

// The stand-in server: this test binary re-executed with standinEnv set to a mode.
// It serves /health on standinAddr (200, or 503 until standinReadyAfter has passed)
// and /crash (exits 3 with a line on stderr). Modes:
//
//	serve        serve until SIGTERM
//	ignore-term  serve, and ignore SIGTERM
//	exit         write to stderr and exit 3 at once
//	keep-port    serve, and start a child in its own session that inherits the
//	             listener and keeps serving after the group is killed (its pid in
//	             the file standinHolder)
//	hold         that child: serve the listener on fd 3 for a minute
const (
	standinEnv        = "SERVERPROC_STANDIN"
	standinAddr       = "SERVERPROC_ADDR"
	standinReadyAfter = "SERVERPROC_READY_AFTER"
	standinHolder     = "SERVERPROC_HOLDER"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(standinEnv); mode != "" {
		standin(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func standin(mode string) {
	start := time.Now()
	ready, _ := time.ParseDuration(os.Getenv(standinReadyAfter))
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		if time.Since(start) < ready {
			http.Error(w, "loading", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/crash", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(os.Stderr, "standin: CUDA error: an illegal memory access was encountered")
		os.Exit(3)
	})
	var ln net.Listener
	var err error
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "standin: loading weights")
		fmt.Fprintln(os.Stderr, "standin: out of memory")
		os.Exit(3)
	case "hold":
		ln, err = net.FileListener(os.NewFile(3, "listener"))
		time.AfterFunc(time.Minute, func() { os.Exit(0) })
	default:
		ln, err = net.Listen("tcp", os.Getenv(standinAddr))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(2)
	}
	fmt.Println("standin: listening on", ln.Addr())
	switch mode {
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
	case "keep-port":
		f, err := ln.(*net.TCPListener).File()
		if err != nil {
			os.Exit(2)
		}
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), standinEnv+"=hold")
		c.ExtraFiles = []*os.File{f}
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outside the server's group
		if err := c.Start(); err != nil {
			os.Exit(2)
		}
		_ = os.WriteFile(os.Getenv(standinHolder), []byte(strconv.Itoa(c.Process.Pid)), 0o644)
	}
	_ = http.Serve(ln, mux)
}

// standinServer describes the stand-in in mode on a free port.
func standinServer(t *testing.T, name, mode string, env ...string) Server {
	t.Helper()
	addr := testutil.FreeAddr(t)
	return Server{
		Name: name,
		Args: []string{os.Args[0]},
		Env:  append([]string{standinEnv + "=" + mode, standinAddr + "=" + addr}, env...),
		URL:  "http://" + addr,
	}
}
