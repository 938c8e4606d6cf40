#!/usr/bin/python3
"""Writes validity_ref.json: reference values for the validity statistics.

Run with Debian's python3-scipy and python3-numpy:
    /usr/bin/python3 gen_validity.py > validity_ref.json

- binom: scipy.stats.binom.ppf ranks of the order-statistic interval of a quantile.
- mk: the Mann-Kendall S checked against scipy.stats.kendalltau (tau-b times its
  denominator), Sen's slope from scipy.stats.theilslopes, and the Hamed-Rao (1998)
  variance correction written here independently in numpy from the paper's formula.
Series are rebuilt on both sides from numpy's default_rng(seed).random(n):
    trend: a + b*u + c*i        ar1: x[i] = phi*x[i-1] + (u[i] - 0.5), x[-1] = 0, plus c*i
"""
import json
import math

import numpy as np
import scipy
from scipy import stats


def series(spec):
    u = np.random.default_rng(spec["seed"]).random(spec["n"])
    n = spec["n"]
    i = np.arange(n, dtype=float)
    if spec["t"] == "trend":
        return (spec["a"] + spec["b"] * u) + spec["c"] * i
    if spec["t"] == "ar1":
        x = np.zeros(n)
        prev = 0.0
        for k in range(n):
            prev = spec["phi"] * prev + (u[k] - 0.5)
            x[k] = prev
        return x + spec["c"] * i
    if spec["t"] == "round":  # ties
        return np.floor((spec["a"] + spec["b"] * u) + spec["c"] * i)
    raise ValueError(spec["t"])


def mk(x, alpha=0.05):
    n = len(x)
    s = 0.0
    for a in range(n):
        s += np.sign(x[a + 1:] - x[a]).sum()
    tau_b, _ = stats.kendalltau(np.arange(n), x)
    # tau-b = S / sqrt(n0 (n0 - n_ties_x)), n0 = n(n-1)/2; the index has no ties.
    n0 = n * (n - 1) / 2
    _, counts = np.unique(x, return_counts=True)
    nt = (counts * (counts - 1) / 2).sum()
    s_scipy = tau_b * math.sqrt(n0 * (n0 - nt))
    assert abs(s - s_scipy) < 1e-6 * max(1, abs(s)), (s, s_scipy)
    var0 = (n * (n - 1) * (2 * n + 5) - (counts * (counts - 1) * (2 * counts + 5)).sum()) / 18.0
    res = stats.theilslopes(x, np.arange(n))
    slope = res[0]
    det = x - slope * np.arange(1, n + 1)
    r = stats.rankdata(det)
    y = r - r.mean()
    c = np.array([np.dot(y[: n - k], y[k:]) for k in range(n)])
    rho = c / c[0]
    bound = stats.norm.ppf(1 - alpha / 2) / math.sqrt(n)
    tot = 0.0
    for k in range(1, n):
        if abs(rho[k]) > bound:
            tot += (n - k) * (n - k - 1) * (n - k - 2) * rho[k]
    factor = 1 + 2.0 / (n * (n - 1) * (n - 2)) * tot
    var = var0 * factor
    z = 0.0
    if s > 0:
        z = (s - 1) / math.sqrt(var)
    elif s < 0:
        z = (s + 1) / math.sqrt(var)
    p = 2 * stats.norm.sf(abs(z))
    return {"s": s, "var0": var0, "factor": factor, "z": z, "p": p, "slope": slope}


def ranks(n, p, conf):
    tail = (1 - conf) / 2
    hi = int(stats.binom.ppf(1 - tail, n, p)) + 1
    if hi > n:
        hi = 0
    k = int(stats.binom.ppf(tail, n, p))
    lo = k + 1 if stats.binom.cdf(k, n, p) <= tail else k
    if lo > n:
        lo = 0
    return {"n": n, "p": p, "conf": conf, "lo": lo, "hi": hi}


def minsamples(p, conf, upper):
    q = p if upper else 1 - p
    n = 1
    while 1 - q ** n < conf:
        n += 1
    return {"p": p, "conf": conf, "upper": upper, "n": n}


out = {"numpy": np.__version__, "scipy": scipy.__version__, "binom": [], "minsamples": [], "mk": []}
for n in (5, 20, 100, 299, 1000, 5000, 100000):
    for p in (0.5, 0.9, 0.99, 0.999):
        for conf in (0.9, 0.95, 0.99):
            out["binom"].append(ranks(n, p, conf))
for p in (0.5, 0.9, 0.95, 0.99, 0.999, 0.1):
    for conf in (0.9, 0.95, 0.99):
        for upper in (True, False):
            out["minsamples"].append(minsamples(p, conf, upper))
specs = [
    {"seed": 1, "n": 20, "t": "trend", "a": 100.0, "b": 10.0, "c": 0.0},
    {"seed": 2, "n": 20, "t": "trend", "a": 100.0, "b": 10.0, "c": 1.0},
    {"seed": 3, "n": 40, "t": "trend", "a": 50.0, "b": 5.0, "c": -0.2},
    {"seed": 4, "n": 30, "t": "ar1", "phi": 0.8, "c": 0.0},
    {"seed": 5, "n": 30, "t": "ar1", "phi": 0.9, "c": 0.05},
    {"seed": 6, "n": 60, "t": "ar1", "phi": 0.6, "c": 0.01},
    {"seed": 7, "n": 25, "t": "round", "a": 0.0, "b": 5.0, "c": 0.1},
    {"seed": 8, "n": 12, "t": "trend", "a": 1.0, "b": 1.0, "c": 0.0},
]
for sp in specs:
    out["mk"].append({"series": sp, **mk(series(sp))})
print(json.dumps(out, indent=1))
