package nprand

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"
)

type golden struct {
	Numpy   string `json:"numpy"`
	SeedSeq []struct {
		Seed    uint64   `json:"seed"`
		State32 []uint32 `json:"state32"`
		State64 []uint64 `json:"state64"`
	} `json:"seedseq"`
	Cases []struct {
		Name string        `json:"name"`
		Kind string        `json:"kind"`
		Seed uint64        `json:"seed"`
		Ops  [][]any       `json:"ops"` // an op name, then json.Numbers
		Want []json.Number `json:"want"`
	} `json:"cases"`
	ArraySeed struct {
		Key          []uint32  `json:"key"`
		RandomSample []float64 `json:"random_sample"`
	} `json:"array_seed"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var g golden
	if err := dec.Decode(&g); err != nil {
		t.Fatal(err)
	}
	return g
}

func i64(t *testing.T, x any) int64 {
	t.Helper()
	n, _ := x.(json.Number)
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		t.Fatalf("bad int %q: %v", n, err)
	}
	return v
}

func f64(t *testing.T, x any) float64 {
	t.Helper()
	n, _ := x.(json.Number)
	v, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		t.Fatalf("bad float %q: %v", n, err)
	}
	return v
}

func TestSeedSequence(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.SeedSeq {
		ss := NewSeedSequence(c.Seed)
		got32 := ss.GenerateState(len(c.State32))
		for i := range got32 {
			if got32[i] != c.State32[i] {
				t.Errorf("SeedSequence(%d).GenerateState[%d] = %d, want %d", c.Seed, i, got32[i], c.State32[i])
			}
		}
		got64 := ss.GenerateState64(len(c.State64))
		for i := range got64 {
			if got64[i] != c.State64[i] {
				t.Errorf("SeedSequence(%d).GenerateState64[%d] = %d, want %d", c.Seed, i, got64[i], c.State64[i])
			}
		}
	}
}

// result is an integer or a float produced by one replayed operation.
type result struct {
	isFloat bool
	i       uint64
	f       float64
}

func TestGoldenStreams(t *testing.T) {
	g := loadGolden(t)
	t.Logf("golden vectors from numpy %s", g.Numpy)
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var got []result
			switch c.Kind {
			case "generator":
				r := NewGenerator(c.Seed)
				for _, op := range c.Ops {
					switch op[0] {
					case "integers":
						got = append(got, result{i: uint64(r.Integers(i64(t, op[1]), i64(t, op[2])))})
					case "integers_n":
						for _, v := range r.IntegersN(i64(t, op[1]), i64(t, op[2]), int(i64(t, op[3]))) {
							got = append(got, result{i: uint64(v)})
						}
					case "random":
						got = append(got, result{isFloat: true, f: r.Random()})
					case "raw":
						for range i64(t, op[1]) {
							got = append(got, result{i: r.BitGenerator().Uint64()})
						}
					default:
						t.Fatalf("unknown op %v", op)
					}
				}
			case "randomstate":
				r := NewRandomState(c.Seed)
				for _, op := range c.Ops {
					switch op[0] {
					case "randint":
						got = append(got, result{i: uint64(r.Randint(i64(t, op[1]), i64(t, op[2])))})
					case "randint_n":
						for range i64(t, op[3]) {
							got = append(got, result{i: uint64(r.Randint(i64(t, op[1]), i64(t, op[2])))})
						}
					case "random_sample":
						got = append(got, result{isFloat: true, f: r.RandomSample()})
					case "standard_normal":
						got = append(got, result{isFloat: true, f: r.StandardNormal()})
					case "exponential":
						got = append(got, result{isFloat: true, f: r.Exponential(f64(t, op[1]))})
					case "gamma":
						got = append(got, result{isFloat: true, f: r.Gamma(f64(t, op[1]), f64(t, op[2]))})
					case "uint32":
						got = append(got, result{i: uint64(r.Randint(0, 1<<32))})
					default:
						t.Fatalf("unknown op %v", op)
					}
				}
			}
			if len(got) != len(c.Want) {
				t.Fatalf("got %d results, want %d", len(got), len(c.Want))
			}
			for i, w := range c.Want {
				if got[i].isFloat {
					wf := f64(t, w)
					if math.Abs(got[i].f-wf) > 1e-12*math.Abs(wf) {
						t.Errorf("result %d = %v, want %v", i, got[i].f, wf)
					}
					continue
				}
				wi, err := strconv.ParseUint(string(w), 10, 64)
				if err != nil {
					wi = uint64(i64(t, w))
				}
				if got[i].i != wi {
					t.Errorf("result %d = %d, want %d", i, int64(got[i].i), int64(wi))
				}
			}
		})
	}
}

func TestArraySeed(t *testing.T) {
	g := loadGolden(t)
	r := NewRandomStateArray(g.ArraySeed.Key)
	for i, want := range g.ArraySeed.RandomSample {
		if got := r.RandomSample(); math.Abs(got-want) > 1e-12*want {
			t.Errorf("RandomState(%v).random_sample #%d = %v, want %v", g.ArraySeed.Key, i, got, want)
		}
	}
}

func TestPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Integers empty range": func() { NewGenerator(0).Integers(5, 5) },
		"Randint empty range":  func() { NewRandomState(0).Randint(5, 4) },
		"RandomState big seed": func() { NewRandomState(1 << 32) },
	} {
		func() {
			defer func() {
				if r, ok := recover().(string); !ok || r[:8] != "nprand: " {
					t.Errorf("%s: panic = %v, want an \"nprand: \" message", name, r)
				}
			}()
			f()
		}()
	}
}
