// Package tokenizer counts tokens exactly as the model's own tokenizer does, and
// renders its chat template, in pure Go. It reads Hugging Face tokenizer.json files
// (BPE, WordPiece, Unigram with their normalizers, pre-tokenizers, post-processors,
// decoders and added tokens), tiktoken vocabularies (OpenAI's encodings, Llama-3's
// original tiktoken.model, Kimi-K2), and chat templates rendered as transformers'
// apply_chat_template renders them.
//
// Exactness is the point: perfgate asserts on input and output lengths, so a count that
// differs from the server's by one token makes a length test meaningless. Every loader is
// tested differentially against the reference implementations (Hugging Face's Rust
// tokenizers, OpenAI's tiktoken, @huggingface/jinja) on thousands of strings.
//
//	tok, err := tokenizer.Load("gpt2") // or a path, a model directory, "org/model" on the Hub
//	if err != nil { … }
//	ids := tok.Encode("Hello world", false) // [15496 995]
//	n := tok.Count(prompt, true)            // with BOS etc., as encode(add_special_tokens=True)
//	text := tok.Decode(ids, false)
//
// [Load] resolves names in one place: built-ins ([Builtins]: gpt2, r50k_base, p50k_base,
// p50k_edit, cl100k_base, o200k_base — embedded, no files or network needed), files,
// model directories, and Hugging Face Hub ids through the local Hugging Face cache or a
// download (HF_ENDPOINT, HF_TOKEN, HF_HUB_CACHE, HF_HOME, HF_HUB_OFFLINE). [EncodeJSONL]
// is the batch interface behind `perfgate tokenize`.
//
// A [Tokenizer] is immutable and safe for concurrent use. Text that is not valid UTF-8 is
// first converted as Hugging Face's bindings convert it (each maximal invalid sequence
// becomes U+FFFD); Decode replaces invalid UTF-8 in the same way.
//
// What it does not do: training, truncation and padding, offsets and attention masks,
// SentencePiece .model files (use the model's tokenizer.json), or Python code shipped
// with a model beyond the known tiktoken split patterns. A component it does not
// implement is an error naming its type and file, never a silently different count.
// Hugging Face's Rust library can be used instead of the Go pipeline for tokenizer.json
// files in binaries built with -tags hftokenizers (see [Options]).
package tokenizer
