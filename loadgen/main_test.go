package loadgen

import (
	"flag"
	"os"
	"testing"
)

// evloop chooses how closed-loop non-streaming plain-HTTP runs are sent: "auto" (the
// event loops, as in use) or "off" (the goroutine way), so every test can run either way.
var evloop = flag.String("evloop", "auto", "closed-loop non-streaming sends: auto (event loops where they apply) or off (goroutines)")

// TestMain runs the tests, or, when stubEnv is set, serves as the open-loop cost
// benchmark's stub server in a child process (see runStub).
func TestMain(m *testing.M) {
	if os.Getenv(stubEnv) != "" {
		runStub()
		return
	}
	flag.Parse()
	forceGoroutines = *evloop == "off"
	os.Exit(m.Run())
}
