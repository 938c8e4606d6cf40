package nprand_test

import (
	"fmt"

	"github.com/perfgate/perfgate/distribution/nprand"
)

func ExampleNewGenerator() {
	// vLLM's random dataset lengths: np.random.default_rng(0).integers(512, 1537, size=4)
	g := nprand.NewGenerator(0)
	fmt.Println(g.IntegersN(512, 1537, 4))
	// Output:
	// [1383 1164 1035 788]
}

func ExampleNewRandomState() {
	// vllm bench serve --seed 0 --request-rate 4 --burstiness 0.5: after
	// np.random.seed(0), each gap is np.random.gamma(shape=0.5, scale=1/(4*0.5)).
	rs := nprand.NewRandomState(0)
	for range 3 {
		fmt.Printf("%.6f ", rs.Gamma(0.5, 1/(4*0.5)))
	}
	fmt.Println()
	// Output:
	// 0.152001 0.189136 0.089742
}
