// Package liveout streams a benchmark run's metrics while it goes on, to Prometheus
// remote-write and OpenTelemetry (OTLP/HTTP) receivers. Remote-write goes through
// github.com/prometheus/client_golang/exp/api/remote (protobuf + snappy), OTLP through
// the OpenTelemetry Go SDK's otlpmetrichttp exporter.
//
//	l, err := liveout.Start(ctx, liveout.Config{
//		Outputs: []liveout.Output{liveout.MustParseOutput("prometheus-rw=http://127.0.0.1:9090/api/v1/write")},
//		Labels:  liveout.Labels{Scenario: "chat", Run: "20260101T120000Z-1a2b"},
//	})
//	lo, err := loadgen.Run(ctx, cfg, tok, l.Record) // or run.OnRecord(l.Record)
//	st := l.Stop(ctx)                                // the last push, and what was dropped
//
// Every Config.Interval it pushes the run so far: request and token counters, the last
// interval's request and output-token rates, and TTFT, ITL and request-latency
// histograms, labelled with the scenario, the model, the endpoint kind, the traffic
// class (in a run of classes: docs/classes.md) and the run. [Live.Record] never blocks the load generator: it hands a compact
// copy of the record to a bounded buffer, and a record that finds the buffer full is
// dropped and counted ([Stats.Dropped]), never waited for. The pushes run on their own
// goroutines, each bounded by the interval: a receiver that is down or slow costs at
// most skipped pushes (the counters are cumulative, so the next push carries what a
// skipped one would have), and never a record of the run's own recording.
//
// A receiver that refuses the first push with a 4xx (a wrong path, no remote-write
// receiver, bad credentials) is an error from [Start], before the run; one that is down
// is a warning, and the run goes on. A URL's secrets (user information, query values)
// never reach an error, a warning or [Output.String].
//
// It does not read recordings, judge runs, or scrape anything; metrics.json is the
// run's record, this is a view of it while it happens.
package liveout
