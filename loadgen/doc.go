// Package loadgen is perfgate's load generator for OpenAI-compatible endpoints. It
// builds the configured workload (synthetic prompts of exact token lengths, vLLM- and
// SGLang-compatible random datasets, multi-turn conversations, ShareGPT, mooncake
// traces, recorded payloads), sends it with the configured arrival process or
// concurrency, times every response chunk on arrival, and writes one [record.Client]
// per request.
//
//	tok, _ := tokenizer.Load("gpt2")
//	cfg := loadgen.Config{ // five groups: Target, Workload, Load, Stop, Recording
//		Target:   loadgen.Target{URLs: []string{srv.URL()}, Model: "m"}, // streams by default
//		Workload: loadgen.Workload{ISL: distribution.MustSpec("normal:512,64"), OSL: distribution.MustSpec("fixed:128")},
//		Load:     loadgen.Load{Concurrency: 8},
//		Stop:     loadgen.Stop{Requests: 100},
//	}
//	out, err := loadgen.Run(ctx, cfg, tok, nil)
//	fmt.Println(out.Metrics)
//
// Pacing is a pure [Pacer] interface (vegeta's shape): ConstantPacer, PoissonPacer,
// GammaPacer, RampPacer and TracePacer share one send loop. Closed-loop concurrency
// is a separate mode of [Run], not a pacer.
//
// loadgen measures the client's view only; it does not start servers (the mockserver
// package does) and does not decide pass/fail (perftest does).
package loadgen
