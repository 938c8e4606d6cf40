// Package nprand reproduces numpy's random streams bit for bit. With it perfgate
// regenerates the workloads of tools written in Python request for request:
//
//	g := nprand.NewGenerator(0)         // np.random.default_rng(0)
//	isl := g.Integers(512, 1537)        // rng.integers(512, 1537)
//	rs := nprand.NewRandomState(42)     // np.random.seed(42) / RandomState(42)
//	gap := rs.Gamma(0.5, 0.1)           // np.random.gamma(shape=0.5, scale=0.1)
//
// [Generator] is numpy's default_rng: SeedSequence seeding, the PCG64 bit generator
// (128-bit LCG, XSL-RR output; 32-bit draws use the low half of a 64-bit output and
// buffer the high half for the next 32-bit draw), Generator.integers with Lemire's
// bounded rejection on the 32-bit or the 64-bit path as numpy picks them (and no draw
// at all when the range holds one value), and Generator.random.
//
// [RandomState] is numpy's legacy API (np.random.seed, np.random.gamma …): MT19937
// seeded as numpy seeds it from an integer (Knuth's init_genrand; numpy uses
// init_by_array only for array seeds, see [NewRandomStateArray]), and the legacy
// algorithms for random_sample, standard_normal (polar Box–Muller with a cached second
// value), standard_exponential (-log(1-U)), standard_gamma (Marsaglia–Tsang for shape
// > 1, Johnk-style rejection below 1) and randint (masked rejection).
// vLLM's `bench serve` seeds the global state with np.random.seed(seed) and draws
// arrival gaps with np.random.gamma(shape=burstiness, scale=1/(rate·burstiness)); its
// random dataset draws lengths with np.random.default_rng(seed).integers. SGLang's
// bench_serving draws lengths with the legacy np.random.randint.
//
// Verified against golden vectors written by numpy 1.24 (testdata/gen_golden.py).
// Neither type is safe for concurrent use.
package nprand
