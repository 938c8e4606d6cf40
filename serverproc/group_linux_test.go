//go:build linux

package serverproc

import (
	"os"
	"strconv"
	"testing"
)

// TestStatExiting: a server is taken for one that exited on its own when it is a
// zombie, or while it is exiting (PF_EXITING, 0x4, in the ninth field): its socket
// then refuses connections before the kernel makes it a zombie, and a run can end in
// that window. A running or sleeping task is not, whatever its comm holds.
func TestStatExiting(t *testing.T) {
	for _, c := range []struct {
		stat string
		want bool
	}{
		{"4242 (vllm serve) S 1 4242 4242 0 -1 4194560 812 0 0 0 5 3 0 0 20 0 9 0", false},
		{"4242 (python3 (x) y) R 1 4242 4242 0 -1 4194564 812 0 0 0 5 3 0 0 20 0 9 0", true}, // 0x400104: PF_EXITING
		{"4242 (perfgate.test) Z 1 4242 4242 0 -1 4227084 812 0 0 0 5 3 0 0 20 0 1 0", true},
		{"4242 (sh) X 1 4242 4242 0 -1 4194560 812 0 0 0 5 3 0 0 20 0 1 0", false},
		{"4242 (sh) R 1 4242", false},
		{"no comm at all", false},
	} {
		if got := statExiting(c.stat); got != c.want {
			t.Errorf("statExiting(%q) = %v, want %v", c.stat, got, c.want)
		}
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(os.Getpid()) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	if statExiting(string(b)) || exitedOrReaped(os.Getpid()) {
		t.Errorf("this running test process reads as exiting: %s", b)
	}
}
