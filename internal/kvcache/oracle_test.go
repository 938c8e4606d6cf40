package kvcache

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/perfgate/perfgate/internal/testutil"
)

// workload is a sequence of prompts (token ids, in send order) and the cache it is
// measured against.
type workload struct {
	Name      string  `json:"name"`
	BlockSize int     `json:"block_size"`
	Capacity  int     `json:"capacity"`
	Prompts   [][]int `json:"prompts"`
}

const vocab = 50000

// randIDs returns n ids drawn from r.
func randIDs(r *rand.Rand, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = r.IntN(vocab)
	}
	return ids
}

// zipfPicker draws ranks 0..n-1 with weight 1/(k+1)^alpha (alpha > 0; any alpha, not
// only > 1 as math/rand's Zipf).
func zipfPicker(r *rand.Rand, n int, alpha float64) func() int {
	cdf := make([]float64, n)
	sum := 0.0
	for k := range n {
		sum += math.Pow(float64(k+1), -alpha)
		cdf[k] = sum
	}
	return func() int { return sort.SearchFloat64s(cdf, r.Float64()*sum) }
}

// poolWorkload is requests prompts, each a prefix from a pool of pool prefixes of
// prefixLen ids chosen by pick, then a fresh suffix of 1 to 3*blockSize ids.
func poolWorkload(name string, seed uint64, pool, prefixLen, requests, capacity int, pick func(*rand.Rand) func() int) workload {
	r := rand.New(rand.NewPCG(seed, 7))
	prefixes := make([][]int, pool)
	for i := range prefixes {
		prefixes[i] = randIDs(r, prefixLen)
	}
	next := pick(r)
	w := workload{Name: name, BlockSize: 16, Capacity: capacity}
	for range requests {
		p := append(slices.Clone(prefixes[next()]), randIDs(r, 1+r.IntN(48))...)
		w.Prompts = append(w.Prompts, p)
	}
	return w
}

// multiTurn is sessions conversations of turns turns, interleaved at random: each
// turn's prompt is the previous prompt, an answer and a new message (growing context).
func multiTurn(seed uint64, sessions, turns, capacity int) workload {
	r := rand.New(rand.NewPCG(seed, 9))
	ctx := make([][]int, sessions)
	left := make([]int, sessions)
	for i := range ctx {
		ctx[i] = randIDs(r, 40) // a system prompt and the first message
		left[i] = turns
	}
	w := workload{Name: "multi-turn", BlockSize: 16, Capacity: capacity}
	for live := sessions; live > 0; {
		s := r.IntN(sessions)
		if left[s] == 0 {
			continue
		}
		w.Prompts = append(w.Prompts, slices.Clone(ctx[s]))
		ctx[s] = append(ctx[s], randIDs(r, 10+r.IntN(60))...) // the answer and the next message
		if left[s]--; left[s] == 0 {
			live--
		}
	}
	return w
}

func uniform(r *rand.Rand, n int) func() int { return func() int { return r.IntN(n) } }

// oracleWorkloads are the exactness test's workloads.
func oracleWorkloads() []workload {
	return []workload{
		poolWorkload("uniform", 1, 50, 200, 1500, 400, func(r *rand.Rand) func() int { return uniform(r, 50) }),
		poolWorkload("zipf-0.8", 2, 100, 160, 1500, 300, func(r *rand.Rand) func() int { return zipfPicker(r, 100, 0.8) }),
		poolWorkload("zipf-1.2", 3, 100, 160, 1500, 300, func(r *rand.Rand) func() int { return zipfPicker(r, 100, 1.2) }),
		multiTurn(4, 40, 12, 500),
		poolWorkload("eviction", 5, 40, 256, 1500, 120, func(r *rand.Rand) func() int { return zipfPicker(r, 40, 1.0) }),
		// Exact multiples of the block size, and prompts shorter than a block.
		{Name: "edges", BlockSize: 4, Capacity: 3, Prompts: [][]int{{}, {1}, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 3, 4, 5}, {9, 9, 9, 9, 9}, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4}}},
	}
}

// oracle is the independent count, in Python: each block is named by interning the
// pair (parent block's name, the block's ids), so two prefixes share a name only if
// their ids are equal (no hash); the LRU is an OrderedDict. variant changes the model
// on purpose: "forward" uses a prompt's blocks first to last, "all-blocks" lets the
// block holding the last token hit.
const oracle = `
import json, sys
from collections import OrderedDict
variant = sys.argv[1]
out = []
for w in json.load(sys.stdin):
    B, C = w["block_size"], w["capacity"]
    names, inf, lru = {}, set(), OrderedDict()
    res = {"name": w["name"], "requests": 0, "prompt_tokens": 0, "blocks": 0, "inf": 0, "lru": 0}
    for p in w["prompts"]:
        n = len(p)
        full = n // B
        look = full if variant == "all-blocks" else max(0, (n - 1) // B)
        keys, parent = [], -1
        for i in range(full):
            k = (parent, tuple(p[i*B:(i+1)*B]))
            parent = names.setdefault(k, len(names))
            keys.append(parent)
        res["requests"] += 1
        res["prompt_tokens"] += n
        res["blocks"] += look
        h = 0
        while h < look and keys[h] in inf:
            h += 1
        res["inf"] += h
        inf.update(keys)
        h = 0
        while h < look and keys[h] in lru:
            h += 1
        res["lru"] += h
        for k in (keys if variant == "forward" else reversed(keys)):
            lru.pop(k, None)
            lru[k] = True
            while len(lru) > C:
                lru.popitem(last=False)
    out.append(res)
json.dump(out, sys.stdout)
`

type oracleResult struct {
	Name                           string
	Requests, PromptTokens, Blocks int64
	Inf, LRU                       int64
}

func runOracle(t *testing.T, py string, ws []workload, variant string) []oracleResult {
	t.Helper()
	in, err := json.Marshal(ws)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "oracle.py")
	if err := os.WriteFile(script, []byte(oracle), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script, variant)
	f := filepath.Join(dir, "in.json")
	if err := os.WriteFile(f, in, 0o644); err != nil {
		t.Fatal(err)
	}
	stdin, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	cmd.Stdin = stdin
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python oracle: %v", err)
	}
	var raw []struct {
		Name         string `json:"name"`
		Requests     int64  `json:"requests"`
		PromptTokens int64  `json:"prompt_tokens"`
		Blocks       int64  `json:"blocks"`
		Inf          int64  `json:"inf"`
		LRU          int64  `json:"lru"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("python oracle output: %v\n%s", err, out)
	}
	res := make([]oracleResult, len(raw))
	for i, r := range raw {
		res[i] = oracleResult{r.Name, r.Requests, r.PromptTokens, r.Blocks, r.Inf, r.LRU}
	}
	return res
}

func idealOf(w workload) oracleResult {
	a, err := NewIdeal(w.BlockSize, w.Capacity)
	if err != nil {
		panic(err)
	}
	for _, p := range w.Prompts {
		a.Add(p)
	}
	r := a.Result()
	return oracleResult{w.Name, r.Requests, r.PromptTokens, r.Blocks, r.Infinite.Blocks, r.LRU.Blocks}
}

// The ideal hit counts, unbounded and LRU, equal an independent count in Python on
// uniform, Zipf 0.8 and 1.2 prefix pools, a multi-turn workload, one that evicts
// heavily, and edge cases; and each of the workloads that should tells the model
// apart from a wrong one (blocks used first to last, or the last token's block let hit).
func TestIdealMatchesPython(t *testing.T) {
	py := testutil.Python(t, "json")
	ws := oracleWorkloads()
	want := runOracle(t, py, ws, "vllm")
	for i, w := range ws {
		got := idealOf(w)
		if got != want[i] {
			t.Errorf("%s: Ideal counted %+v, the Python oracle %+v", w.Name, got, want[i])
		}
		if got.LRU == got.Inf && w.Name != "edges" && w.Name != "multi-turn" {
			t.Errorf("%s: the LRU of %d blocks lost no hits; the workload does not test eviction", w.Name, w.Capacity)
		}
		t.Logf("%s: %d requests, ideal hit rate %.4f unbounded, %.4f in %d blocks", w.Name, got.Requests,
			float64(got.Inf*int64(w.BlockSize))/float64(got.PromptTokens), float64(got.LRU*int64(w.BlockSize))/float64(got.PromptTokens), w.Capacity)
	}
	// The failure path: the comparison tells a wrong model apart.
	for variant, name := range map[string]string{"forward": "eviction", "all-blocks": "edges"} {
		wrong := runOracle(t, py, ws, variant)
		i := slices.IndexFunc(ws, func(w workload) bool { return w.Name == name })
		if idealOf(ws[i]) == wrong[i] {
			t.Errorf("%s: the %q model counts the same as Ideal; the comparison could not catch it", name, variant)
		}
	}
}
