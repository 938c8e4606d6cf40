// Package mockserver is an OpenAI- and Anthropic-compatible mock LLM server that streams real tokens
// and records exactly what it received.
//
// It counts every request's input with a real tokenizer (template-inclusive for chat,
// as the model server would), generates output made of real token ids whose text
// re-tokenizes to exactly the number of tokens it reports, paces the stream with a
// latency model (TTFT/ITL distributions, per-input-token prefill, load-dependent terms,
// or a continuous-batching scheduler whose throughput saturates), and writes one JSON
// line per request with AIPerf's recorder field names plus a summary on Close. A test
// can then prove the workload a load generator sent is the workload it was configured
// to send.
//
//	srv, err := mockserver.New(mockserver.WithConfig(mockserver.Config{Tokenizer: "gpt2", Fast: true}))
//	if err != nil { … }
//	if err := srv.Start(); err != nil { … }
//	defer srv.Close()
//	client := openai.NewClient(option.WithBaseURL(srv.BaseURL()))
//	… // drive load
//	srv.Close()
//	recs := srv.Records() // one per answered request; srv.Summary() aggregates them
//
// [Serve] runs the same server until a context ends (`perfgate mock`), and
// [NewCapture] records raw request bodies byte for byte (`perfgate capture`).
//
// It binds 127.0.0.1 unless told otherwise. It is a test double, not a model: output
// text is a stream of whole-word tokens drawn from the tokenizer's vocabulary.
//
// # Endpoints
//
// Paths, from the routing tables (go test ./mockserver -run TestDocEndpoints -update):
package mockserver
