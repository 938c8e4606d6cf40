package distribution_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/perfgate/perfgate/distribution"
)

func ExampleNormal() {
	d := distribution.Normal{Mu: 128, Sigma: 20, Src: rand.NewPCG(1, 1)}
	fmt.Println(d)
	fmt.Printf("p99 = %.1f, P(X <= 150) = %.3f\n", d.Quantile(0.99), d.CDF(150))
	// As token lengths: rounded, at least 1, at most 160.
	l := distribution.Length{Dist: d, Max: 160}
	fmt.Printf("P(len = 160) = %.4f\n", l.Prob(160))
	fmt.Println(l.Rand(), l.Rand(), l.Rand())
	// Output:
	// normal:128,20
	// p99 = 174.5, P(X <= 150) = 0.864
	// P(len = 160) = 0.0576
	// 146 137 112
}

func ExampleParse() {
	for _, text := range []string{
		"lognormal:mean=512,stddev=128",
		"mix:0.7*normal:128,10+0.3*normal:1024,50",
		"vllm-range:1024,0.5",
		"sglang-range:1024,0.5",
		"normal:128",
	} {
		d, err := distribution.Parse(text)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-42s mean %6.1f  stddev %5.1f\n", d, d.Mean(), d.StdDev())
	}
	// A Spec carries the text form through JSON (and YAML) configs.
	var cfg struct{ ISL distribution.Spec }
	_ = json.Unmarshal([]byte(`{"ISL": "gamma:2,0.01"}`), &cfg)
	fmt.Println(cfg.ISL, cfg.ISL.Mean())
	// Output:
	// lognormal:mean=512,stddev=128              mean  512.0  stddev 128.0
	// mix:0.7*normal:128,10+0.3*normal:1024,50   mean  396.8  stddev 411.6
	// vllm-range:1024,0.5                        mean 1024.0  stddev 295.9
	// sglang-range:1024,0.5                      mean  768.0  stddev 148.1
	// distribution: cannot parse "normal:128": want 2 parameters, got 1; want normal:MU,SIGMA (e.g. normal:128,20)
	// gamma:2,0.01 200
}

func ExampleKS1() {
	// Inter-arrival gaps of a bursty process tested against the Poisson process the
	// scenario asked for.
	bursty := distribution.Gamma{Shape: 0.5, Rate: 10, Src: rand.NewPCG(1, 2)}
	gaps := make([]float64, 500)
	for i := range gaps {
		gaps[i] = bursty.Rand()
	}
	res := distribution.KS1(gaps, distribution.Exponential{Rate: 20})
	fmt.Printf("D=%.3f reject at 1%%: %v\n", res.Statistic, res.Reject(0.01))

	// The same test passes on gaps that are Poisson.
	poisson := distribution.Exponential{Rate: 20, Src: rand.NewPCG(1, 3)}
	for i := range gaps {
		gaps[i] = poisson.Rand()
	}
	res = distribution.KS1(gaps, distribution.Exponential{Rate: 20})
	fmt.Printf("D=%.3f p=%.2f reject at 1%%: %v\n", res.Statistic, res.PValue, res.Reject(0.01))
	// Output:
	// D=0.182 reject at 1%: true
	// D=0.031 p=0.73 reject at 1%: false
}

func ExampleLength() {
	// The exact distribution of generated lengths: what a recording is tested against.
	l := distribution.Length{Dist: distribution.Normal{Mu: 3, Sigma: 2}, Max: 6}
	for k := 1; k <= 6; k++ {
		fmt.Printf("P(%d)=%.3f ", k, l.Prob(k))
	}
	fmt.Println()
	// Output:
	// P(1)=0.135 P(2)=0.195 P(3)=0.221 P(4)=0.195 P(5)=0.135 P(6)=0.118
}

func ExampleFitLength() {
	// Prompt lengths a load generator produced, tested against the configured rule.
	want := distribution.Length{Dist: distribution.Normal{Mu: 512, Sigma: 64}, Max: 1024}
	gen := want
	gen.Dist = distribution.Normal{Mu: 540, Sigma: 64, Src: rand.NewPCG(7, 7)} // 5% too long
	got := make([]int, 2000)
	for i := range got {
		got[i] = gen.Rand()
	}
	res := distribution.FitLength(got, want)
	fmt.Printf("reject: %v, D=%.3f at %g\n", res.Reject(0.01), res.Statistic, res.At)
	// Output:
	// reject: true, D=0.187 at 527
}

func ExampleWilson() {
	// Goodput: 1890 of 2000 requests met their SLO. Is 95% plausible?
	lo, hi := distribution.Wilson(1890, 2000, 0.99)
	fmt.Printf("[%.4f, %.4f] contains 0.95: %v\n", lo, hi, lo <= 0.95 && 0.95 <= hi)
	// Output:
	// [0.9303, 0.9567] contains 0.95: true
}

func ExampleMustSpec() {
	isl := distribution.MustSpec("normal:512,64") // a Spec, as configuration structs hold it
	fmt.Println(isl, isl.Mean())
	_, err := distribution.ParseSpec("normal:512") // a typo is an error, not a panic
	fmt.Println(err != nil)
	// Output:
	// normal:512,64 512
	// true
}
