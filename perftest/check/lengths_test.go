package check

import (
	"math/rand/v2"
	"testing"

	"github.com/perfgate/perfgate/distribution"
)

func drawLengths(n int, l distribution.Length, seed uint64) []int {
	l.Dist = distribution.WithSrc(l.Dist, rand.NewPCG(seed, 5))
	out := make([]int, n)
	for i := range out {
		out[i] = l.Rand()
	}
	return out
}

func TestLengthFit(t *testing.T) {
	target := distribution.Length{Dist: distribution.Normal{Mu: 128, Sigma: 20}}
	if v := LengthFit("ISL", drawLengths(500, target, 1), target, 0); !v.Pass {
		t.Errorf("lengths drawn from the target failed:\n%s", v)
	}
	// The server received 10% longer prompts than configured.
	v := LengthFit("ISL", drawLengths(500, distribution.Length{Dist: distribution.Normal{Mu: 141, Sigma: 20}}, 2), target, 0)
	if v.Pass {
		t.Fatalf("shifted lengths passed:\n%s", v)
	}
	golden(t, "length_fit_fail", v.String())
	// vLLM's range rule: a uniform integer on [90, 167].
	vr := distribution.Length{Dist: distribution.VLLMRange{Len: 128, Ratio: 0.3}}
	if v := LengthFit("ISL", drawLengths(300, vr, 3), vr, 0); !v.Pass {
		t.Errorf("vllm-range lengths failed:\n%s", v)
	} else {
		golden(t, "length_fit_pass_vllm", v.String())
	}
	// A fixed target: every length must be exactly that.
	fx := distribution.Length{Dist: distribution.Fixed{Value: 128}}
	if v := LengthFit("OSL", []int{128, 128, 128, 128}, fx, 0); !v.Pass {
		t.Errorf("exact fixed lengths failed:\n%s", v)
	}
	bad := make([]int, 100)
	for i := range bad {
		bad[i] = 128 - i%3 // the server generated 1-2 tokens fewer two times in three
	}
	if v := LengthFit("OSL", bad, fx, 0); v.Pass {
		t.Errorf("short outputs passed fixed:128:\n%s", v)
	}
}
