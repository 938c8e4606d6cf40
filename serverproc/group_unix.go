//go:build unix

package serverproc

import (
	"os"
	"syscall"
)

// groupAttr starts the server as the leader of its own process group, so a signal
// reaches every process it starts (a shell's children, a server's workers).
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// terminate sends SIGTERM to the process group led by p.
func terminate(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGTERM) }

// kill sends SIGKILL to the process group led by p.
func kill(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
