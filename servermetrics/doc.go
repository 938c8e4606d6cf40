// Package servermetrics scrapes an inference server's Prometheus metrics around a
// benchmark run and summarises them. It reports counter deltas, gauge statistics,
// histogram count/sum deltas, and derived figures for vLLM's and SGLang's metric names
// (prefix-cache hit rate, spec-decode acceptance rate, mean running and waiting
// requests, peak KV-cache usage).
//
//	s, err := servermetrics.Start(ctx, servermetrics.Config{URLs: []string{"http://127.0.0.1:8000/metrics"}}, file)
//	// … run the load …
//	sum, err := s.Stop()
//	fmt.Println(sum.Endpoints[0].Derived.PrefixCacheHitRate)
//
// Every scrape (before the run, every Config.Interval during it, after it) is one
// JSON line ([Scrape]) written to the writer given to [Start]; [Accumulator] turns
// such lines back into the same [Summary], so a recording can be re-summarised.
// The text exposition format is parsed with github.com/prometheus/common/expfmt.
// A scrape that fails is recorded (its Error) and counted, never fatal to the run.
// URLs are written with their query values redacted (they may carry tokens).
//
// It does not push, remote-write or store anything else, and it does not know
// which server it scrapes: the derived figures are simply absent when the names are.
package servermetrics
