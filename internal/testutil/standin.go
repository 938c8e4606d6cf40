package testutil

import (
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
)

// FreeAddr returns a loopback address ("127.0.0.1:PORT") nothing listens on: a port the
// kernel just handed out and took back, for a server the test starts later (or for a
// connection it expects refused).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// StandInAddrEnv tells a stand-in server process the address to serve on (see
// [StandIn]).
const StandInAddrEnv = "PERFGATE_STANDIN_ADDR"

// StandIn describes a stand-in server process on a free loopback address: this test
// binary re-executed to run only the test named test, whose body serves on
// [StandInAddr] until [ServeUntilTERM]. It returns the address, the command line and
// the environment to give the process (StandInAddrEnv, then env).
func StandIn(t testing.TB, test string, env ...string) (addr string, args, environ []string) {
	t.Helper()
	addr = FreeAddr(t)
	return addr, []string{os.Args[0], "-test.run=^" + test + "$"}, append([]string{StandInAddrEnv + "=" + addr}, env...)
}

// StandInAddr is the host and port this process serves on as a stand-in server; ok is
// false in an ordinary test run, where the stand-in's test returns at once.
func StandInAddr() (host string, port int, ok bool) {
	addr := os.Getenv(StandInAddrEnv)
	if addr == "" {
		return "", 0, false
	}
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, false
	}
	port, err = strconv.Atoi(p)
	return host, port, err == nil
}

// ServeUntilTERM ends a stand-in server's body: it waits for SIGTERM (how a
// serverproc.Server is stopped), then calls stop and exits the process with status 0.
func ServeUntilTERM(stop func() error) {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	<-term
	_ = stop()
	os.Exit(0)
}
