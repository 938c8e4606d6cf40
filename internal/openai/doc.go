// Package openai holds the OpenAI wire format shared by perfgate's mock server and load
// generator. It has the request bodies (chat completions, completions, responses,
// embeddings, rankings/rerank), responses, stream chunks, usage and the error body.
//
// The request types decode the shapes real clients send, including the polymorphic
// ones: message content as a string or as a list of parts ([Content]), a completion
// prompt as a string, a list of strings, or token ids ([Prompt]). Fields a client may
// omit are pointers, so "absent" and "zero" stay distinguishable — the mock server's
// recording must say exactly what was asked.
//
// The hot streaming path does not go through encoding/json: [AppendChatChunk],
// [AppendCompletionChunk] and [AppendString] build a chunk in a reused buffer, and
// [ChunkText] pulls the generated text out of a chunk without decoding it.
//
//	buf = openai.AppendChatChunk(buf[:0], openai.ChunkHeader{ID: id, Created: t, Model: m}, text, "")
//
// It does not implement the whole API: only what an inference benchmark sends and
// reads. Unknown request fields are ignored.
package openai
