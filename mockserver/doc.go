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
//
//   - POST /v1/audio/transcriptions: audio_transcription
//   - POST /v1/chat/completions: chat
//   - POST /v1/completions: completions
//   - POST /v1/embeddings: embeddings
//   - POST /v1/images/generations: image_generation
//   - POST /v1/messages: messages
//   - POST /rerank, /v1/ranking, /v1/rankings, /v1/rerank, /v2/rerank: rankings, rerank
//   - POST /v1/responses: responses
//   - any method /health, /healthz, /v1/health: {"status":"ok"}; 503 while starting or shutting down
//   - any method /metrics: Prometheus metrics
//   - POST /reset_prefix_cache: empties the prefix cache, as vLLM's dev mode does
//   - GET /v1/models: the models served, as vLLM lists them
//   - GET /v1/models/{model}: the model, or vLLM's 404 for a model not served
//   - GET /version: {"version":"perfgate-mock"}, as vLLM answers
//
// A POST to an API path is the workload: recorded, counted and summarised. A probe is
// neither. Any other path is answered 404 with an OpenAI error body, a probe's path
// with another method 405.
package mockserver
