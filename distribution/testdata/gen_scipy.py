#!/usr/bin/python3
"""Writes scipy_ref.json: SciPy/numpy reference values for the distribution tests.

Run with Debian's python3-scipy and python3-numpy:
    /usr/bin/python3 gen_scipy.py > scipy_ref.json

Samples are not stored: each is rebuilt on both sides from numpy's
default_rng(seed).random(n) (reproduced bit for bit by distribution/nprand) through an
exactly reproducible transform:
    affine: a + b*u      square: a + b*u*u      floor: floor(a + b*u)     ratio: a + b/(1-u)
"""
import json
import math
import sys
import warnings

import numpy as np
import scipy
from scipy import special, stats

warnings.simplefilter("ignore")


def sample(spec):
    u = np.random.default_rng(spec["seed"]).random(spec["n"])
    a, b = spec.get("a", 0.0), spec.get("b", 1.0)
    t = spec["t"]
    if t == "affine":
        return a + b * u
    if t == "square":
        return a + b * (u * u)
    if t == "floor":
        return np.floor(a + b * u)
    if t == "ratio":
        return a + b / (1.0 - u)
    raise ValueError(t)


def S(seed, n, t, a=0.0, b=1.0):
    return {"seed": seed, "n": n, "t": t, "a": a, "b": b}


# scipy frozen distributions for our text forms
def frozen(text):
    name, args = text.split(":")
    p = [float(v) for v in args.split(",")]
    if name == "uniform":
        return stats.uniform(loc=p[0], scale=p[1] - p[0])
    if name == "normal":
        return stats.norm(loc=p[0], scale=p[1])
    if name == "exponential":
        return stats.expon(scale=1 / p[0])
    if name == "lognormal":
        return stats.lognorm(s=p[1], scale=math.exp(p[0]))
    if name == "gamma":
        return stats.gamma(a=p[0], scale=1 / p[1])
    raise ValueError(text)


out = {"numpy": np.__version__, "scipy": scipy.__version__}

# 1. Kolmogorov distributions.
kstwo = []
for n in [1, 2, 3, 5, 10, 20, 50, 100, 140, 141, 200, 500, 1000, 5000, 10000]:
    ds = [0.4 / n, 0.8 / n, 1.5 / n, 0.3, 0.45, 0.55, 0.9]
    ds += [math.sqrt(c / n) for c in [0.1, 0.3, 0.5, 0.7, 0.75, 1.0, 1.5, 2.0, 3.0, 3.9, 5.0, 10.0, 20.0]]
    ds += [1 - 1.5 / n]
    for d in sorted(set(ds)):
        if 0 < d < 1:
            kstwo.append({"n": n, "d": d, "sf": float(stats.kstwo.sf(d, n)),
                          "smirnov": float(special.smirnov(n, d))})
out["kstwo"] = kstwo
out["kolmogorov"] = [{"z": z, "sf": float(special.kolmogorov(z))}
                     for z in [0.05, 0.2, 0.5, 0.7, 0.81, 0.83, 1.0, 1.36, 1.63, 2.0, 3.0, 5.0]]

# 2. One-sample KS.
ks1 = []
for spec, model in [
    (S(1, 5, "affine"), "uniform:0,1"),
    (S(2, 20, "affine"), "uniform:0,1"),
    (S(3, 100, "affine", -3, 6), "normal:0,1"),
    (S(4, 100, "ratio", -1, 1), "exponential:1"),
    (S(5, 300, "square", 0, 4), "uniform:0,4"),
    (S(6, 1000, "affine", 0, 1.02), "uniform:0,1"),
    (S(7, 1000, "ratio", 0, 0.5), "lognormal:0,1"),
    (S(8, 2500, "affine", 0, 10), "gamma:2,0.5"),
    (S(9, 8000, "affine", 0.01, 1), "uniform:0,1"),
    (S(10, 12000, "affine", 0, 1), "uniform:0,1"),
    (S(11, 20000, "affine", 0.005, 1), "uniform:0,1"),
]:
    x = sample(spec)
    method = "exact" if spec["n"] <= 10000 else "asymp"
    r = stats.kstest(x, frozen(model).cdf, method=method)
    ks1.append({"sample": spec, "model": model, "method": method, "d": float(r.statistic),
                "p": float(r.pvalue), "at": float(r.statistic_location)})
out["ks1"] = ks1

# 3. Two-sample KS (ties from "floor").
ks2 = []
for sa, sb in [
    (S(20, 10, "affine"), S(21, 10, "affine")),
    (S(22, 10, "affine"), S(23, 15, "affine", 0.3)),
    (S(24, 50, "affine"), S(25, 70, "square")),
    (S(26, 200, "affine"), S(27, 300, "affine", 0.05)),
    (S(28, 1000, "affine"), S(29, 1000, "affine", 0.03)),
    (S(30, 3000, "affine"), S(31, 4000, "affine", 0.02)),
    (S(32, 400, "floor", 0, 20), S(33, 500, "floor", 1, 20)),
    (S(34, 12000, "affine"), S(35, 9000, "affine", 0.01)),
    (S(36, 7, "affine"), S(37, 9000, "affine")),
]:
    a, b = sample(sa), sample(sb)
    r = stats.ks_2samp(a, b)
    ks2.append({"a": sa, "b": sb, "d": float(r.statistic), "p": float(r.pvalue),
                "at": float(r.statistic_location)})
out["ks2"] = ks2

# 4. Chi-square.
chi = []
for obs, exp, ddof in [
    ([16, 18, 16, 14, 12, 12], [16, 16, 16, 16, 16, 8], 0),
    ([120, 80, 50, 30, 20], [100, 90, 55, 35, 20], 1),
    ([5, 9, 13, 21, 30, 22], [6, 10, 15, 20, 25, 24], 0),
]:
    r = stats.chisquare(obs, exp, ddof=ddof)
    chi.append({"obs": obs, "exp": exp, "ddof": ddof, "stat": float(r.statistic), "p": float(r.pvalue)})
out["chisquare"] = chi

# 5. Anderson-Darling, k-sample (scipy.stats.anderson_ksamp, midrank).
adk = []
for specs in [
    [S(40, 30, "affine"), S(41, 40, "affine", 0.2)],
    [S(42, 200, "affine"), S(43, 150, "affine")],
    [S(44, 100, "floor", 0, 10), S(45, 120, "floor", 0, 10), S(46, 90, "floor", 1, 10)],
    [S(47, 500, "affine"), S(48, 500, "affine", 0.08)],
    [S(49, 50, "affine"), S(50, 50, "affine", 0.6)],
]:
    r = stats.anderson_ksamp([sample(s) for s in specs])
    adk.append({"samples": specs, "stat": float(r.statistic), "p": float(r.significance_level)})
out["anderson_ksamp"] = adk

# 6. Anderson-Darling one-sample statistic with scipy's CDFs (scipy has no p-value for a
# fully specified distribution).
ad1 = []
for spec, model in [(S(60, 50, "affine"), "uniform:0,1"), (S(61, 400, "ratio", 0, 1), "exponential:0.8"),
                    (S(62, 1000, "affine", -4, 8), "normal:0,1.5")]:
    x = np.sort(sample(spec))
    n = len(x)
    cdf = frozen(model)
    i = np.arange(1, n + 1)
    a2 = -n - np.sum((2 * i - 1) / n * (cdf.logcdf(x) + cdf.logsf(x[::-1])))
    ad1.append({"sample": spec, "model": model, "stat": float(a2)})
out["anderson1"] = ad1

# 7. Mann-Whitney U (two-sided, continuity correction, method auto).
mw = []
for sa, sb in [
    (S(70, 5, "affine"), S(71, 7, "affine", 0.3)),
    (S(72, 8, "affine"), S(73, 30, "affine", 0.2)),
    (S(74, 3, "affine"), S(75, 4, "affine")),
    (S(76, 40, "affine"), S(77, 50, "affine", 0.1)),
    (S(78, 300, "floor", 0, 15), S(79, 250, "floor", 1, 15)),
    (S(80, 2000, "affine"), S(81, 3000, "affine", 0.02)),
    (S(82, 6, "floor", 0, 4), S(83, 6, "floor", 0, 4)),
]:
    r = stats.mannwhitneyu(sample(sa), sample(sb))
    mw.append({"a": sa, "b": sb, "u": float(r.statistic), "p": float(r.pvalue)})
out["mannwhitney"] = mw

# 8. Wilson intervals.
out["wilson"] = [
    {"k": k, "n": n, "conf": c,
     "lo": float(stats.binomtest(k, n).proportion_ci(c, "wilson").low),
     "hi": float(stats.binomtest(k, n).proportion_ci(c, "wilson").high)}
    for k, n, c in [(0, 10, 0.95), (3, 10, 0.95), (10, 10, 0.95), (912, 1000, 0.95), (4990, 5000, 0.99), (1, 2, 0.5)]
]

# 9. Student-t intervals.
tci = []
for xs, c in [([10.1, 9.8, 10.4, 10.0], 0.95), ([101, 99, 98, 103, 100, 97, 102], 0.99), ([1.0, 2.0], 0.9)]:
    x = np.array(xs)
    lo, hi = stats.t.interval(c, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    tci.append({"x": xs, "conf": c, "lo": float(lo), "hi": float(hi)})
out["student_t"] = tci

# 10. numpy percentiles (default linear method).
pct = []
for spec in [S(90, 1, "affine"), S(91, 2, "affine"), S(92, 7, "floor", 0, 5), S(93, 100, "ratio", 0, 1),
             S(94, 1001, "affine", 0, 1000)]:
    x = sample(spec)
    ps = [0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1]
    pct.append({"sample": spec, "p": ps, "want": [float(np.percentile(x, 100 * p)) for p in ps],
                "quantile": [float(np.quantile(x, p)) for p in ps]})
out["percentile"] = pct

json.dump(out, sys.stdout, indent=0)
sys.stdout.write("\n")
