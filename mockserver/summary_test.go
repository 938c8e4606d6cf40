package mockserver

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/distribution"
	"github.com/perfgate/perfgate/record"
)

func TestSummaryContents(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	s := start(t, Config{Fast: true, RecordFile: file})
	for i, p := range []string{"one two three", "the the the the the the", "a longer prompt with several different words in it"} {
		post(t, s.URL()+"/v1/completions", `{"model":"m","prompt":"`+p+`","max_tokens":`+[]string{"3", "5", "7"}[i]+`,"min_tokens":1,"stream":true,"ignore_eos":true}`)
	}
	post(t, s.URL()+"/v1/embeddings", `{"model":"e","input":["x y","z"]}`)
	post(t, s.URL()+"/v1/rerank", `{"model":"r","query":"q","documents":["d1","d2"]}`)
	post(t, s.URL()+"/v1/chat/completions", `{"model":"m","prompt_token_ids":[1,2,3],"max_tokens":2}`)
	post(t, s.URL()+"/v1/chat/completions", `{"model":"m"}`)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file + ".summary.json")
	if err != nil {
		t.Fatal(err)
	}
	var sum record.ServerSummary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	c := sum.PerEndpoint["/v1/completions"]
	if sum.TotalRequests != 6 || sum.Answered != 7 || c.Count != 3 || c.StreamedCount != 3 || c.IgnoreEOSCount != 3 {
		t.Errorf("total %d, completions %+v", sum.TotalRequests, c)
	}
	if c.RequestedOSL == nil || c.RequestedOSL.Min != 3 || c.RequestedOSL.Max != 7 || c.RequestedOSL.Mean != 5 || c.RequestedOSL.P50 != 5 {
		t.Errorf("requested_osl = %+v", c.RequestedOSL)
	}
	if c.OSL == nil || c.OSL.Max != 7 || c.ISL == nil || c.ISL.Histogram == nil || len(c.ISL.Histogram.BinEdges) != len(c.ISL.Histogram.Counts)+1 {
		t.Errorf("osl %+v isl %+v", c.OSL, c.ISL)
	}
	vd := c.VocabDistribution
	if vd == nil || vd.VocabSize != s.tok.VocabSize() || vd.TopTokens[0].Text != " the" || vd.TotalTokens != int(c.ISL.Mean*3+0.5) || len(vd.Shape80) != 80 {
		t.Errorf("vocab distribution = %+v", vd)
	}
	if sum.TokenizationModes[record.ModeTokenizerCall] != 4 || sum.TokenizationModes[record.ModeEncodeWithoutSpecialTokens] != 1 || sum.TokenizationModes[record.ModePromptTokenIDs] != 1 {
		t.Errorf("tokenization modes = %v", sum.TokenizationModes)
	}
	if sum.Rejected["missing_field"] != 1 || sum.FinishReasons["length"] != 4 {
		t.Errorf("rejected %v finish %v", sum.Rejected, sum.FinishReasons)
	}
	// The JSON lines carry AIPerf's recorder field names.
	line, _ := os.ReadFile(file)
	first := strings.SplitN(string(line), "\n", 2)[0]
	var m map[string]any
	if err := json.Unmarshal([]byte(first), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ts", "request_id", "endpoint", "model", "isl", "requested_osl", "max_tokens", "max_completion_tokens", "min_tokens", "ignore_eos", "reasoning_effort", "stream", "tokenization_mode"} {
		if _, ok := m[k]; !ok {
			t.Errorf("record line lacks AIPerf field %q: %s", k, first)
		}
	}
}

func TestHistogramRule(t *testing.T) {
	h := histogram(countsOf([]int{0, 5, 2000}), 0, 2000)
	if len(h.Counts) != 20 || h.Counts[0] != 2 || h.Counts[19] != 1 || h.BinEdges[20] != 2000 {
		t.Errorf("histogram = %+v; want 20 bins of 100", h)
	}
	h = histogram(countsOf([]int{3, 3}), 3, 3)
	if len(h.Counts) != 1 || h.Counts[0] != 2 {
		t.Errorf("constant histogram = %+v", h)
	}
	if q := quantiles(countsOf([]int{1, 2, 3, 4})); q.P50 != 2.5 || q.P90 != 3.7 || q.Stdev != math.Sqrt(1.25) {
		t.Errorf("quantiles = %+v; want p50 2.5, p90 3.7 (linear), stdev sqrt(1.25) (population)", q)
	}
}

func TestRegisterFlags(t *testing.T) {
	var c Config
	fs := flag.NewFlagSet("mock", flag.ContinueOnError)
	c.RegisterFlags(fs)
	err := fs.Parse([]string{"--port", "9001", "--host", "0.0.0.0", "--tokenizer", "cl100k_base", "--default-model", "llama",
		"--record-requests", "x.jsonl", "--ttft", "lognormal:mean=30,stddev=5", "--itl", "7", "--ttft-per-isl-token-ms", "0.1",
		"--itl-concurrency-lin-ms", "0.01", "--ttft-jitter-cv", "0.2", "--itl-jitter-cv", "0.3", "--error-rate", "5",
		"--random-seed", "42", "--api-key", "k", "--fast", "--models-ready-delay-seconds", "1.5", "--inference-ready-delay-seconds", "2",
		"--batch", "--batch-max-batch", "8", "--batch-step", "5ms", "--osl", "normal:100,10", "--latency-scale", "1.25"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 9001 || c.Host != "0.0.0.0" || c.Tokenizer != "cl100k_base" || c.models()[0] != "llama" || c.RecordFile != "x.jsonl" ||
		c.TTFT.String() != "lognormal:mean=30,stddev=5" && !strings.HasPrefix(c.TTFT.String(), "lognormal") || c.ITL.String() != (distribution.Fixed{Value: 7}).String() ||
		c.TTFTPerISLToken != 100*time.Microsecond || c.ITLConcurrencyLin != 10*time.Microsecond || c.Batch.Step != 5*time.Millisecond || c.TTFTJitterCV != 0.2 || c.ITLJitterCV != 0.3 ||
		c.Faults.ErrorRate != 0.05 || c.Seed != 42 || c.APIKey != "k" || !c.Fast || c.Faults.ModelsReadyDelay != 1500*time.Millisecond ||
		c.Faults.InferenceReadyDelay != 2*time.Second || !c.Batch.Enabled || c.Batch.MaxBatch != 8 || c.OSL.IsZero() || c.LatencyScale != 1.25 {
		t.Errorf("parsed config = %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	fs = flag.NewFlagSet("mock", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--error-rate", "150"}); err == nil {
		t.Errorf("--error-rate 150 accepted")
	}
	bad := Config{Port: -1, Faults: Faults{ErrorRate: 2, ErrorStatuses: []int{404}}, TTFTJitterCV: -1, LatencyScale: -2}
	err = bad.Validate()
	for _, want := range []string{"port", "error_rate", "404", "ttft_jitter_cv", "latency_scale -2 is negative"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(bad) = %v; want it to mention %s", err, want)
		}
	}
	// Config round-trips through JSON, distributions included.
	b, _ := json.Marshal(c)
	var back Config
	if err := json.Unmarshal(b, &back); err != nil || back.TTFT.String() != c.TTFT.String() || back.Batch != c.Batch {
		t.Errorf("JSON round trip: %v\n%s", err, b)
	}
}

func TestLatencySampler(t *testing.T) {
	var inflight, streams atomic.Int64
	inflight.Store(5)
	streams.Store(3)
	m := newLatencyModel(&Config{TTFT: fixedMs(20), ITL: fixedMs(4), TTFTPerISLToken: 500 * time.Microsecond, TTFTConcurrencyLin: time.Millisecond, ITLConcurrencyLin: 250 * time.Microsecond})
	smp := m.sampler(rand.New(rand.NewPCG(1, 1)), &inflight, &streams)
	if got, want := smp.firstToken(100, 0), msDur(20+0.5*100+1*4); got != want {
		t.Errorf("firstToken(100, 0) = %v, want %v (20 + 0.5·100 + 1·(5-1))", got, want)
	}
	if got, want := smp.nextToken(), msDur(4+0.25*2); got != want {
		t.Errorf("nextToken = %v, want %v (4 + 0.25·(3-1))", got, want)
	}
	// LatencyScale multiplies every term; a scaled batch scheduler steps slower.
	m = newLatencyModel(&Config{TTFT: fixedMs(20), ITL: fixedMs(4), TTFTPerISLToken: 500 * time.Microsecond, TTFTConcurrencyLin: time.Millisecond, ITLConcurrencyLin: 250 * time.Microsecond, LatencyScale: 1.5})
	smp = m.sampler(rand.New(rand.NewPCG(1, 1)), &inflight, &streams)
	if got, want := smp.firstToken(100, 0), msDur(1.5*(20+0.5*100+1*4)); got != want {
		t.Errorf("LatencyScale 1.5: firstToken(100, 0) = %v, want %v", got, want)
	}
	if got, want := smp.nextToken(), msDur(1.5*(4+0.25*2)); got != want {
		t.Errorf("LatencyScale 1.5: nextToken = %v, want %v", got, want)
	}
	if sc := newScheduler(BatchConfig{DecodeToken: 2 * time.Millisecond}, &m.scale); sc.stepMs(3, 0) != 1.5*(durMS(DefaultBatchStep)+2*3) {
		t.Errorf("LatencyScale 1.5: batch step %v ms, want %v", sc.stepMs(3, 0), 1.5*(durMS(DefaultBatchStep)+2*3))
	} else {
		m.scale.set(2) // what Server.SetLatencyScale does
		if got := sc.stepMs(3, 0); got != 2*(durMS(DefaultBatchStep)+2*3) {
			t.Errorf("after set(2): batch step %v ms, want %v", got, 2*(durMS(DefaultBatchStep)+2*3))
		}
		if got, want := smp.nextToken(), msDur(2*(4+0.25*2)); got != want {
			t.Errorf("after set(2): nextToken = %v, want %v", got, want)
		}
		sc.stop()
	}
	if d := (&latencyModel{fast: true}).sampler(nil, &inflight, &streams).firstToken(1000, 0); d != 0 {
		t.Errorf("fast firstToken = %v, want 0", d)
	}
	// Jitter: mean 1, CV as configured (n = 20000, seed fixed; tolerance 3 standard errors).
	rng := rand.New(rand.NewPCG(2, 2))
	n, sum, sq := 20000, 0.0, 0.0
	for range n {
		x := jitter(rng, 0.3)
		sum += x
		sq += x * x
	}
	mean := sum / float64(n)
	cv := (sq/float64(n) - mean*mean)
	if mean < 1-3*0.3/141 || mean > 1+3*0.3/141 || cv < 0.09*0.9 || cv > 0.09*1.1 {
		t.Errorf("jitter mean %v variance %v; want 1 and 0.09", mean, cv)
	}
}

// TestVocabCountsDenseAndSparse: ids inside the vocabulary are counted in the dense
// table, others in the map, and the summary sees them as one set of counts.
func TestVocabCountsDenseAndSparse(t *testing.T) {
	a := newAggregator(10)
	r := &record.Server{Endpoint: "/v1/completions", Status: 200}
	a.add(r, []int{1, 1, 12, 9})
	a.add(r, []int{1})
	e := a.eps["/v1/completions"]
	if len(e.dense) != 10 {
		t.Fatalf("dense table of %d, want the vocabulary's 10", len(e.dense))
	}
	got := e.vocabCounts()
	want := map[int]int{1: 3, 9: 1, 12: 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counts %v, want %v", got, want)
	}
}
