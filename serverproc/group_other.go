//go:build !unix

package serverproc

import (
	"os"
	"syscall"
)

// Without process groups, the server's own process is all Stop can reach.

func groupAttr() *syscall.SysProcAttr { return nil }
func terminate(p *os.Process)         { _ = p.Kill() }
func kill(p *os.Process)              { _ = p.Kill() }
func groupAlive(int) bool             { return false }

// exitedOrReaped cannot tell here: a server that exited just before Stop is reported
// as stopped unless Process.wait saw its exit first.
func exitedOrReaped(int) bool { return false }
