package tokenizer

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// ttBenchCorpus is a fixed ~1 MB mixed corpus (valid UTF-8, so that the JavaScript peer
// sees the same text) as separate documents.
func ttBenchCorpus() []string {
	var docs []string
	size := 0
	for _, s := range ttCorpus(2024, 20000, []string{"<|endoftext|>"}) {
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "\uFFFD")
		}
		docs = append(docs, s)
		if size += len(s); size >= 1<<20 {
			break
		}
	}
	return docs
}

// BenchmarkBuiltinEncode measures single-threaded encode throughput of the built-ins on
// ttBenchCorpus. With PERFGATE_TIKTOKEN_CORPUS set, it also writes the corpus there (JSON
// array) for bench/tokenizer/tiktoken_bench.js, which measures tiktoken on it.
func BenchmarkBuiltinEncode(b *testing.B) {
	docs := ttBenchCorpus()
	if p := os.Getenv("PERFGATE_TIKTOKEN_CORPUS"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := jsonEncode(f, docs); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	bytes := 0
	for _, d := range docs {
		bytes += len(d)
	}
	for _, name := range []string{"gpt2", "cl100k_base", "o200k_base"} {
		for _, cold := range []bool{false, true} {
			sub := name
			if cold {
				sub += "/cold" // piece cache emptied before every run: every piece merged
			}
			b.Run(sub, func(b *testing.B) {
				tok, err := Builtin(name)
				if err != nil {
					b.Fatal(err)
				}
				tb := tok.b.(*tiktokenBackend)
				b.SetBytes(int64(bytes))
				tokens, cpu := 0, 0.0
				for b.Loop() {
					if cold {
						b.StopTimer()
						tb.cache = wordCache{}
						b.StartTimer()
					}
					c0 := cpuSeconds()
					tokens = 0
					for _, d := range docs {
						tokens += len(tok.Encode(d, false))
					}
					cpu += cpuSeconds() - c0
				}
				if cpu > 0 {
					b.ReportMetric(float64(tokens)*float64(b.N)/cpu, "tokens/cpu-s")
				}
				b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

func jsonEncode(w *os.File, v any) error { return json.NewEncoder(w).Encode(v) }

// BenchmarkBuiltinLoad measures the first-use cost of a built-in: decompressing the
// embedded ranks and building the backend (the result is cached after the first Builtin).
func BenchmarkBuiltinLoad(b *testing.B) {
	for _, name := range []string{"gpt2", "cl100k_base", "o200k_base"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := loadBuiltin(builtinFiles[name]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
