package check_test

import (
	"fmt"
	"time"

	"github.com/perfgate/perfgate/perftest/check"
	"github.com/perfgate/perfgate/record"
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

// ExampleParseRule reads objectives written as text, as a scenario file's
// objectives.rules, `perfgate profile --assert` and perftest's Result.Assert take them,
// and checks them on a run; a typo is an error naming the column.
func ExampleParseRule() {
	var reqs []check.Request
	for i := range 100 {
		reqs = append(reqs, check.Request{ID: fmt.Sprint(i), TTFT: 0.05 + float64(i)*0.001, Latency: 0.5, OSL: 20})
	}
	for _, text := range []string{"ttft_p50 <= 250ms", "goodput(ttft<=100ms) >= 0.9"} {
		r, err := check.ParseRule(text)
		if err != nil {
			panic(err)
		}
		v := r.Check(reqs, record.Metrics{}, check.SLO{}, 0)
		fmt.Println(v.Pass, v.Summary)
	}
	_, err := check.ParseRule("ttft_p99 <= 25Oms")
	fmt.Println(err)
	// Output:
	// true TTFT p50 = 99.5ms <= 250ms
	// false goodput = 51% (51 of 100 good), want >= 90% (Wilson 95% interval 41.3%–60.6%)
	// check: rule "ttft_p99 <= 25Oms", column 13: ttft_p99 is a latency: want Go duration text such as 250ms or 1.5s (a bare number is ms)
}
