package check_test

import (
	"fmt"
	"time"

	"github.com/perfgate/perfgate/perftest/check"
)

// ExampleGoodput decides a goodput objective outside go test, as cmd/perfgate does:
// the verdict's text is the message, its Err the exit status.
func ExampleGoodput() {
	var reqs []check.Request
	for i := range 200 {
		ttft := 0.080
		if i%10 == 0 {
			ttft = 0.450 // every tenth request is slow
		}
		reqs = append(reqs, check.Request{ID: fmt.Sprint(i), TTFT: ttft, Latency: 1.2, OSL: 100})
	}
	v := check.Goodput(reqs, check.SLO{TTFT: 200 * time.Millisecond}, 0.95, 0)
	fmt.Println(v.With(check.Context{Scenario: "chat", Load: "concurrency=8", Requests: 200, Seed: 42}))
	fmt.Println("error:", v.Err() != nil)
	// Output:
	// goodput = 90% (180 of 200 good), want >= 95% (Wilson 95% interval 85.1%–93.4%)  [scenario "chat", concurrency=8, n=200, errors=0]
	//     slo:     TTFT <= 200ms
	//     missed:  TTFT 20   (a request can miss several)
	//     worst:   #0 TTFT=450ms ITL=7.58ms latency=1.2s (missed TTFT)
	//              #10 TTFT=450ms ITL=7.58ms latency=1.2s (missed TTFT)
	//              #20 TTFT=450ms ITL=7.58ms latency=1.2s (missed TTFT)
	//     seed:    42
	// error: true
}
