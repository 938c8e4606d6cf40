// Package mockbench measures perfgate's mock server against the physical reference: a
// minimal fasthttp SSE server that writes a fixed ~177-byte chat chunk per token and
// flushes each one ([StartRef]). Both are driven by the same streaming client ([Drive]),
// in the same run, and the benchmarks report the mock's throughput as a ratio of the
// reference's, so the number means the same on any machine.
//
// Run: go test -run '^$' -bench . -benchtime 1x ./bench/mock   (or bench/mock/run.sh)
package mockbench
