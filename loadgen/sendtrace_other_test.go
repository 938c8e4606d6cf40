//go:build !linux

package loadgen

import "testing"

// sendTrace: see sendtrace_linux_test.go; the kernel trace it reads is Linux's.
type sendTrace struct{}

func newSendTrace(*testing.B) *sendTrace         { return nil }
func (*sendTrace) start(*testing.B)              {}
func (*sendTrace) stop(*testing.B, []recordLite) {}
