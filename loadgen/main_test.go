package loadgen

import (
	"os"
	"testing"
)

// TestMain runs the tests, or, when stubEnv is set, serves as the open-loop cost
// benchmark's stub server in a child process (see runStub).
func TestMain(m *testing.M) {
	if os.Getenv(stubEnv) != "" {
		runStub()
		return
	}
	os.Exit(m.Run())
}
