// Package mockbench measures perfgate's mock server against the physical reference. The
// reference is a minimal fasthttp SSE server that writes a fixed ~177-byte chat chunk
// per token and flushes each one ([StartRef]). Both are driven by the same streaming
// client ([Drive]), in the same run, and the benchmarks report the mock's throughput as
// a ratio of the reference's, so the number means the same on any machine. Emission
// lateness has its own peer, [TimerFloor]: bare Go timers at the same wake rate, each
// wake burning the CPU a paced token cost, which is as close to its deadline as
// anything in this process can wake.
//
// Run: go test -run '^$' -bench . -benchtime 1x ./bench/mock   (or bench/mock/run.sh)
package mockbench
