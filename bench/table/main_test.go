package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Sample output in the benchmarks' own formats (bench/loadgen/run.sh, go test -bench).
const (
	sampleLoadgen = `== non-streaming req/s, concurrency 64, 3 rounds of 3s (median; all rounds in brackets)
wrk                  109001   [ 109001 110988 106699 ]
bare                 103960   [ 106898 100501 103960 ]
vegeta                30930   [ 30930 30843 34595 ]
loadgen               95957   [ 89780 95957 99082 ]
loadgen_synthetic     46073   [ 44356 53701 46073 ]
ratio synthetic/loadgen 0.48   (per round: 0.49 0.56 0.46 ; median 0.49)
ratio loadgen/wrk      0.88   (per round: 0.82 0.86 0.93 ; median 0.86)
ratio loadgen/bare     0.92   (per round: 0.84 0.95 0.95 ; median 0.95)
ratio loadgen/vegeta   3.10   (per round: 2.90 3.11 2.86 ; median 2.90)
`
	sampleMock = `BenchmarkStream/streams=1-2               	       1	2041439308 ns/op	    647250 mock-tok/s	         0.9328 ratio	    693872 ref-tok/s
BenchmarkNonStreamingWrk-2   	       1	12572701658 ns/op	        32.56 mock-cpu-µs/req	     21742 mock-req/s	         0.5240 ratio	        10.27 trivial-cpu-µs/req	     41492 trivial-req/s
BenchmarkMemoryPerStream-2            	       1	 202807297 ns/op	        18.04 KiB/stream
BenchmarkLateness/tok/s=5k-2          	       1	2041439308 ns/op	        31.05 cpu-µs/tok	     1574 floor-p99-µs	       608.9 p50-late-µs	      1218 p90-late-µs	      1435 p99-late-µs	         0.9117 p99-ratio	      4995 tok/s
`
	sampleOpen = `BenchmarkOpenLoopCost/rate=5000-2         	       2	3150773452 ns/op	         0.03 bare_mean_ms	         0.12 bare_p99_ms	        74.11 cpu_us/req_closed	        85.16 cpu_us/req_open	         0.02 dev_mean_ms	         0.15 dev_p99_ms	         0.01 jitter_mean_ms	         0.1 jitter_p99_ms	         2.819 lag_mean_ms	        25.56 lag_p99_ms	         0.04 loaded_mean_ms	         0.3 loaded_p99_ms	         1.149 open/closed	      2233 req/s_closed	      5170 req/s_open
`
)

// TestTables: the benchmarks' output becomes both tables, between their markers only;
// each row states its peer, ratio and target, and is met or not as the ratios say
// (the ratio of the medians and the median of the per-round ratios must both meet a
// target); the README's table has the full table's header and its rows are rows of
// the full table.
func TestTables(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("loadgen.txt", sampleLoadgen)
	write("mock.txt", sampleMock)
	write("openloop.txt", sampleOpen)
	docs := write("performance.md", "# P\n\nbefore\n<!-- perf-table:begin -->\nstale\n<!-- perf-table:end -->\nafter\n")
	readme := write("README.md", "intro\n<!-- perf-summary:begin (generated) -->\nstale\n<!-- perf-summary:end -->\nrest\n")
	if err := run(dir, docs, readme, "a note"); err != nil {
		t.Fatal(err)
	}
	d, _ := os.ReadFile(docs)
	r, _ := os.ReadFile(readme)
	for _, want := range []string{
		"before\n<!-- perf-table:begin -->\na note\n\n" + header,
		"| loadgen: non-streaming req/s, recording on, 64 connections | 96.0k | wrk 109.0k | 0.88 (per round 0.86) | ≥ 0.8 | met |",
		"| loadgen: the same against a bare fasthttp client loop | 96.0k | bare loop 104.0k | 0.92 (per round 0.95) | ≥ 0.9 | met |",
		"| loadgen: synthetic prompts (exact ISL), recording on | 46.1k | fixed payload 96.0k | 0.48 (per round 0.49) | ≥ 0.8 | not met |",
		"| mock: non-streaming req/s, recording on, gpt2 tokenization, wrk -c64 | 21.7k | trivial fasthttp server 41.5k | 0.52 | ≥ 0.5 | met |",
		"| 85 µs (5170 req/s) | closed loop 74 µs (2233 req/s) | 1.15 | ≤ 1.5 | met |",
		"| 0.020 / 0.150 ms | the loop's sleep alone under the same load late 0.040 / 0.300 ms; bare nanosleep waiter late 0.030 / 0.120 ms; less the run's least (jitter) 0.010 / 0.100 ms | 0.50 / 0.50 | ≤ 0.03 / 0.2 ms | met |",
		"| mock: memory per open stream | 18.0 KiB | — | — | ≤ 40 KB | met |",
		"| 1.44 | Go timers alone 1.57 | 0.91 |",
		"|\n<!-- perf-table:end -->\nafter\n",
	} {
		if !strings.Contains(string(d), want) {
			t.Errorf("docs table lacks %q:\n%s", want, d)
		}
	}
	if !strings.Contains(string(r), "<!-- perf-summary:begin (generated) -->\n"+header) || !strings.HasSuffix(string(r), "|\n<!-- perf-summary:end -->\nrest\n") {
		t.Errorf("README block:\n%s", r)
	}
	block := string(r)[strings.Index(string(r), header)+len(header) : strings.Index(string(r), "<!-- perf-summary:end")]
	rows := strings.Split(strings.TrimSpace(block), "\n")
	if len(rows) < 4 {
		t.Fatalf("README table has %d rows:\n%s", len(rows), block)
	}
	for _, row := range rows {
		if !strings.Contains(string(d), row+"\n") {
			t.Errorf("README row not in the docs table: %s", row)
		}
	}
}

// TestTablesNeedTheirInputs: missing output, output without the rates, a metric that
// is not a number, and a file without markers are errors, not a table of zeros.
func TestTablesNeedTheirInputs(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "d.md")
	os.WriteFile(docs, []byte("no markers\n"), 0o644)
	if err := run(dir, docs, docs, ""); err == nil {
		t.Error("no benchmark output: no error")
	}
	os.WriteFile(filepath.Join(dir, "loadgen.txt"), []byte("== nothing measured\n"), 0o644)
	if err := run(dir, docs, docs, ""); err == nil || !strings.Contains(err.Error(), "no loadgen rates") {
		t.Errorf("loadgen output without rates: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "loadgen.txt"), []byte(sampleLoadgen), 0o644)
	os.WriteFile(filepath.Join(dir, "mock.txt"), []byte("BenchmarkX-2 1 5 ns/op x ratio\n"), 0o644)
	if err := run(dir, docs, docs, ""); err == nil || !strings.Contains(err.Error(), "not a number") {
		t.Errorf("a metric that is not a number: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "mock.txt"), []byte(sampleMock), 0o644)
	os.WriteFile(filepath.Join(dir, "openloop.txt"), []byte(sampleOpen), 0o644)
	if err := run(dir, docs, docs, ""); err == nil || !strings.Contains(err.Error(), "markers") {
		t.Errorf("a file without markers: %v", err)
	}
}

// TestRepoTablesAgree: the README's performance table and the one in
// docs/performance.md, as committed, are both generated blocks with the same header,
// and every README row is a row of the docs table (the README's is a subset, written by
// the same run).
func TestRepoTablesAgree(t *testing.T) {
	block := func(path, name string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		i, j := strings.Index(s, "<!-- "+name+":begin"), strings.Index(s, "<!-- "+name+":end -->")
		if i < 0 || j < i {
			t.Fatalf("%s: no %s markers", path, name)
		}
		s = s[i:j]
		k := strings.Index(s, header)
		if k < 0 {
			t.Fatalf("%s: the %s block has no table with the generated header", path, name)
		}
		return s[k+len(header):]
	}
	docs, readme := block("../../docs/performance.md", "perf-table"), block("../../README.md", "perf-summary")
	rows := strings.Split(strings.TrimSpace(readme), "\n")
	if len(rows) == 0 || rows[0] == "" {
		t.Fatal("the README table has no rows")
	}
	for _, row := range rows {
		if !strings.Contains(docs, row+"\n") {
			t.Errorf("README row not in docs/performance.md's table (regenerate both: bash bench/table.sh): %s", row)
		}
	}
}
