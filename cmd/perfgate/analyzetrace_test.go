package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testutil"
)

// testdata/analyze-trace.jsonl, counted by hand with --block-size 4 (KV blocks of 4
// tokens too). A row's full blocks are its hash ids when input_length covers them all,
// else all but the last; the rest of the prompt is ids of its own. Lookable blocks are
// (input_length−1)/4. Blocks named by their chain: A=[0], B=[0 1], C=[0 1 2], D=[0 4],
// E=[6], F=[6 7], G=[6 7 8], T1, T2 = row 7's own two blocks.
//
//	row  input  full blocks     lookable  unbounded hits      LRU(2) hits  LRU(3) hits
//	1    12     A B C           2         0                   0            0
//	2    10     A B (+2 own)    2         2 (A B)             2            2
//	3     9     A D (+1 own)    2         1 (A; D is new)     1            1
//	   (a blank line, skipped)
//	4    12     A B C           2         2 (C holds the last token)  1 (B evicted)  2
//	5     8     E F             1         0                   0            0
//	6     3     none (3 own)    0         0                   0            0
//	7    20     E F G T1 T2     4         2 (E F; G is new)   2            2
//	sum  74     17 blocks       13        7 blocks = 28 tokens  6           7
//
// Unbounded rate 28/74 = 0.3784; LRU(2) 24/74 = 0.3243. 90% of 7 hit blocks is 6.3, so
// the target is 7 blocks: capacity 2 serves 6, capacity 3 serves 7, so 3 is the smallest.
// The binary search over 1 to 9 (the distinct blocks) probes 5, 3, 2: with the
// unbounded replay, 4 replays. Distinct blocks: A B C D E F G T1 T2 = 9; held by 2+
// rows: A (4 rows) B (3) C (2) E (2) F (2) = 5. Rows sharing their first block: 1-4
// (A) and 5, 7 (E) = 6; row 6 has no full block.
const analyzeTraceFile = "testdata/analyze-trace.jsonl"

func TestAnalyzeTraceCounts(t *testing.T) {
	code, out, errOut := cli(t, "analyze-trace", "--block-size", "4", "--kv-cache-blocks", "2", "--json", analyzeTraceFile)
	if code != ExitOK {
		t.Fatalf("analyze-trace: exit %d\n%s", code, errOut)
	}
	var a traceAnalysis
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	want := traceAnalysis{File: analyzeTraceFile, BlockSize: 4, KVBlockSize: 4, Requests: 7, PromptTokens: 74, LookableBlocks: 13,
		Unbounded: cacheHits{HitBlocks: 7, HitTokens: 28, HitRate: 28.0 / 74},
		LRU:       &cacheHits{CapacityBlocks: 2, HitBlocks: 6, HitTokens: 24, HitRate: 24.0 / 74}}
	want.Reuse.RequestsSharingFirstBlock, want.Reuse.Blocks, want.Reuse.DistinctBlocks, want.Reuse.ReusedBlocks = 6, 17, 9, 5
	want.Smallest.Percent, want.Smallest.TargetHitBlocks, want.Smallest.Probes = 90, 7, 4
	want.Smallest.cacheHits = cacheHits{CapacityBlocks: 3, HitBlocks: 7, HitTokens: 28, HitRate: 28.0 / 74}
	gotJSON, _ := json.Marshal(a)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("analyze-trace --json =\n %s\nwant\n %s", gotJSON, wantJSON)
	}

	// The text says the same numbers.
	code, out, _ = cli(t, "analyze-trace", analyzeTraceFile, "--block-size", "4", "--kv-cache-blocks", "2") // flags after FILE
	for _, s := range []string{"7 requests, 74 prompt tokens", "0.3784 unbounded (7 hit blocks)", "0.3243 in an LRU of 2 blocks",
		"6 of 7 requests share their first block", "9 distinct blocks of 17, 5 of them held by 2+ requests",
		"3 blocks reach 90% of the unbounded hits (7 of 7 hit blocks"} {
		if code != ExitOK || !strings.Contains(out, s) {
			t.Errorf("analyze-trace text (exit %d) lacks %q:\n%s", code, s, out)
		}
	}

	// 100% of 7 is still 7 blocks; 50% is 4 (⌈3.5⌉), which capacity 1 serves (A hits
	// in rows 2, 3, 4 and E in row 7).
	for _, c := range []struct {
		percent        string
		capacity, hits int
	}{{"100", 3, 7}, {"50", 1, 4}} {
		code, out, errOut = cli(t, "analyze-trace", "--block-size", "4", "--capacity-percent", c.percent, "--json", "--input-file", analyzeTraceFile)
		var b traceAnalysis
		if err := json.Unmarshal([]byte(out), &b); code != ExitOK || err != nil || b.Smallest.CapacityBlocks != c.capacity || b.Smallest.HitBlocks != int64(c.hits) {
			t.Errorf("--capacity-percent %s: exit %d, smallest %+v; want capacity %d serving %d blocks\n%s", c.percent, code, b.Smallest, c.capacity, c.hits, errOut)
		}
	}
}

// Counted in KV blocks of 2 tokens, a hash id's block of 4 is two KV blocks, and the
// rates change only where the last token falls: row 4's C is now two blocks, of which
// the first can hit. Unbounded hits by row: 0, 4 (A A' B B'), 2 (A A'; then D), 5 (A
// A' B B' C), 0, 0, 4 (E E' F F'; G new) = 15 blocks = 30 tokens.
func TestAnalyzeTraceKVBlockSize(t *testing.T) {
	code, out, errOut := cli(t, "analyze-trace", "--block-size", "4", "--kv-block-size", "2", "--json", analyzeTraceFile)
	var a traceAnalysis
	if err := json.Unmarshal([]byte(out), &a); code != ExitOK || err != nil {
		t.Fatalf("exit %d, %v\n%s", code, err, errOut)
	}
	if a.KVBlockSize != 2 || a.Unbounded.HitBlocks != 15 || a.Unbounded.HitTokens != 30 {
		t.Errorf("in KV blocks of 2: %+v, want 15 hit blocks, 30 tokens", a.Unbounded)
	}
}

func TestAnalyzeTraceBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := `{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [1]}` + "\n"
	badType := write("type.jsonl", good+`{"timestamp": 0, "input_length": "ten", "hash_ids": [1]}`+"\n")
	badLen := write("len.jsonl", good+good+`{"timestamp": 0, "input_length": 0, "hash_ids": [1]}`+"\n")
	badHash := write("hash.jsonl", `{"input_length": 10, "hash_ids": [1, -2]}`+"\n")
	notJSON := write("text.jsonl", good+"hello\n")
	empty := write("empty.jsonl", "\n")
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"no file", nil, []string{"want one trace FILE, got 0", "mooncake trace"}},
		{"two files", []string{analyzeTraceFile, analyzeTraceFile}, []string{"got 2"}},
		{"missing file", []string{filepath.Join(dir, "nope.jsonl")}, []string{"nope.jsonl", "no such file", "mooncake trace"}},
		{"a run's directory", []string{dir}, []string{"is a directory", "holds no prompt token ids", "client.jsonl"}},
		{"field of the wrong type", []string{badType}, []string{badType + ":2:", "input_length"}},
		{"input_length 0", []string{badLen}, []string{badLen + ":3:", "input_length 0 < 1"}},
		{"negative hash id", []string{badHash}, []string{badHash + ":1:", "hash_ids[1] = -2 < 0"}},
		{"not JSON", []string{notJSON}, []string{notJSON + ":2:", "invalid character"}},
		{"no rows", []string{empty}, []string{"no rows"}},
		{"block size 0", []string{"--block-size", "0", analyzeTraceFile}, []string{"--block-size 0", "1 to 1024"}},
		{"block size over the limit", []string{"--block-size", "1025", analyzeTraceFile}, []string{"--block-size 1025"}},
		{"kv block size over the limit", []string{"--kv-block-size", "2048", analyzeTraceFile}, []string{"--kv-block-size 2048"}},
		{"negative capacity", []string{"--kv-cache-blocks", "-1", analyzeTraceFile}, []string{"--kv-cache-blocks -1"}},
		{"percent 0", []string{"--capacity-percent", "0", analyzeTraceFile}, []string{"--capacity-percent 0"}},
		{"percent over 100", []string{"--capacity-percent", "101", analyzeTraceFile}, []string{"--capacity-percent 101"}},
		{"unknown flag", []string{"--blok-size", "4", analyzeTraceFile}, []string{"did you mean --block-size"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := cli(t, append([]string{"analyze-trace"}, c.args...)...)
			if code != ExitInvalidConfig || out != "" || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, one line on stderr", code, out, errOut, ExitInvalidConfig)
			}
			for _, s := range c.want {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q lacks %q", errOut, s)
				}
			}
		})
	}
}

func TestAnalyzeTraceHelp(t *testing.T) {
	code, out, _ := cli(t, "analyze-trace", "-h")
	for _, s := range []string{"Usage: perfgate analyze-trace", "--block-size", "tokens per hash id", "(default 512)",
		"--kv-block-size", "--kv-cache-blocks", "--capacity-percent", "(default 90)", "--json", "--input-file"} {
		if code != ExitOK || !strings.Contains(out, s) {
			t.Errorf("analyze-trace -h (exit %d) lacks %q:\n%s", code, s, out)
		}
	}
}

// writeSyntheticTrace writes a mooncake trace of n rows: each a conversation's turn
// over a pool of 1,000 shared system prompts of 1 to 3 blocks (Zipf-like: prompt k
// drawn with weight 1/(k+1)), then the conversation's growing history (a new hash id
// per turn) and a partial last block; fixed seed.
func writeSyntheticTrace(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	r := rand.New(rand.NewPCG(38, 3))
	const pool, sessions = 1000, 50_000
	next := pool * 3
	hist := make([][]int, sessions)
	for i := range n {
		s := r.IntN(sessions)
		if len(hist[s]) == 0 || len(hist[s]) > 12 {
			p := int(float64(pool) * r.Float64() * r.Float64()) // more weight on low ranks
			hist[s] = hist[s][:0]
			for k := range 1 + p%3 {
				hist[s] = append(hist[s], p*3+k)
			}
		}
		hist[s] = append(hist[s], next)
		next++
		fmt.Fprintf(w, `{"timestamp": %d, "input_length": %d, "output_length": 100, "hash_ids": [`, i, len(hist[s])*512-1-r.IntN(400))
		for k, h := range hist[s] {
			if k > 0 {
				w.WriteString(", ")
			}
			fmt.Fprint(w, h)
		}
		w.WriteString("]}\n")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// At the size users run, a million-line trace: the analysis (read, unbounded and
// LRU counts, the capacity search) finishes and its answer holds: the capacity found
// reaches 90% of the unbounded hits and one block fewer does not. It logs the time and
// the heap; under -short it runs 20,000 lines.
func TestAnalyzeTraceMillionLines(t *testing.T) {
	n := 1_000_000
	if testutil.Short() {
		n = 20_000
	} else {
		testutil.Long(t)
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	writeSyntheticTrace(t, path, n)
	start := time.Now()
	a, err := analyzeTrace(path, 512, 512, 10_000, 90)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	t.Logf("%d lines, %d blocks (%d distinct): %v, %d replays; heap %d MB\n%s", n, a.Reuse.Blocks, a.Reuse.DistinctBlocks,
		elapsed.Round(time.Millisecond), a.Smallest.Probes, m.HeapAlloc>>20, a.text())
	if a.Requests != int64(n) || a.Unbounded.HitBlocks == 0 || a.LRU.HitBlocks > a.Unbounded.HitBlocks {
		t.Fatalf("%d requests, unbounded %+v, LRU %+v: want %d requests, some hits, LRU ≤ unbounded", a.Requests, a.Unbounded, a.LRU, n)
	}
	if a.Smallest.HitBlocks < a.Smallest.TargetHitBlocks || a.Smallest.TargetHitBlocks*100 < a.Unbounded.HitBlocks*90 {
		t.Errorf("smallest capacity %+v: its hits or its target are below 90%% of the unbounded %d", a.Smallest, a.Unbounded.HitBlocks)
	}
}
