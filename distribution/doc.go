// Package distribution holds perfgate's statistics: the samplers that generate
// workloads and the tests that decide whether a recording fits them. The samplers draw
// token lengths, latencies and arrival gaps; the tests decide whether a recording fits
// what was configured.
//
//	isl, _ := distribution.Parse("lognormal:mean=512,stddev=128")
//	lengths := distribution.Length{Dist: isl, Max: 4096}
//	n := lengths.Rand()                                   // an int token count
//	res := distribution.KS1(gaps, distribution.Exponential{Rate: 20})
//	if res.Reject(0.01) { t.Error(res) }                  // res.String() is the message
//
// # Samplers
//
// Samplers are value structs in the style of gonum's stat/distuv, with parameters
// named as in the maths and a Src (math/rand/v2) field (safe for concurrent use when
// Src is; a nil Src is): [Fixed], [Uniform],
// [UniformInt], [Normal], [LogNormal] ([LogNormalFromMeanStd]), [Exponential],
// [Gamma], [Mixture], [Empirical] (from samples, a histogram or a recording column),
// and the two range-ratio rules users know from benchmark tools, [VLLMRange] and
// [SGLangRange]. A nil Src draws from a process-wide source seeded with [DefaultSeed].
// Each prints in, and [Parse] reads, a text form ("normal:128,20",
// "mix:0.7*normal:128,10+0.3*normal:1024,50"); [Spec] carries that form through JSON and
// YAML configs. Consumers accept the one-method interfaces [Rander], [CDFer] and
// [Quantiler], so gonum's distuv types plug in unchanged.
//
// Token lengths are integers. [Length] defines once how a continuous sampler becomes a
// length (round half away from zero, resample below 1, clamp to [Min, Max]) and gives
// the exact distribution of the result, so recorded lengths are tested against what
// was really generated.
//
// Programmer errors (a probability outside [0, 1], Sigma < 0, an empty sample passed to
// a test) panic with a "distribution: " message; data problems (an unreadable file,
// bad text) return errors.
//
// # Tests that decide
//
// Every test returns a result value (statistic, p-value, sample sizes, where the
// largest gap is) whose String is a failure message, and a Reject(alpha) method.
// p-values follow SciPy (testdata/gen_scipy.py holds the reference values the tests
// compare against, to 1e-9 where the method is exact):
//
//   - [KS1] one-sample Kolmogorov–Smirnov against a continuous CDF: exact p-value
//     (SciPy's kstwo, Simard & L'Ecuyer's choice among Durbin/Marsaglia–Tsang–Wang,
//     Pomeranz, Pelz–Good and Smirnov) for n <= 10000, asymptotic above;
//   - [KS2] two-sample KS with ties (scipy.stats.ks_2samp);
//   - [FitLength] for integer lengths against a [Length]: by default [DiscreteKS], the
//     KS statistic on the exact discrete CDF with a seeded Monte Carlo p-value;
//     [FitLengthChiSquare], [FitDiscrete] and [ChiSquare] for chi-square;
//   - [AndersonDarling] (one sample, fully specified law, Marsaglia & Marsaglia 2004
//     p-value) and [AndersonDarlingKSamp] (scipy.stats.anderson_ksamp);
//   - [MannWhitney] (scipy.stats.mannwhitneyu, two-sided);
//   - intervals: [Wilson], [StudentTCI], [BootstrapQuantileCI].
//
// Discrete targets. Token lengths are integers, and a KS p-value computed as if their
// distribution were continuous is conservative: the test rejects less often than alpha
// says, badly so for a narrow support, and misses real shifts. Chi-square on bins merged
// to expected counts >= 5 keeps its level but spreads its power over many bins: at
// n = 5000 it catches a 2% shift of normal:512,128 lengths about 60% of the time. The
// default, [DiscreteKS], compares the KS statistic with its null distribution simulated
// from the target itself (exact-size samples up to n = 1000, the Brownian-bridge limit
// above), which keeps the exact level and KS's power (100% in the same case).
//
// Percentiles have one definition in perfgate, numpy's default linear interpolation
// with p in [0, 1]: [Percentile], [Quantiles].
//
// The package deliberately does no I/O beyond reading a recording for [LoadEmpirical],
// and never prints. Subpackage nprand reproduces numpy's random streams (default_rng
// and the legacy RandomState) so perfgate can replay vLLM's and SGLang's workloads
// request for request.
package distribution
