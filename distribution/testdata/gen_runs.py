#!/usr/bin/python3
"""Prints JSON reference values for the run-level regression gate's maths (runs.go,
hierboot.go): Welch's t interval, Student's t quantiles, Holm's adjusted p-values, the
Clopper-Pearson interval, the detectable effect and runs for an effect, and the
hierarchical bootstrap. runs_scipy_test.go runs it with Debian's python3-scipy/numpy and
compares to 1e-9; the inputs are in the output, so nothing is stored.

    /usr/bin/python3 gen_runs.py
"""
import json
import math
import sys
import warnings

import numpy as np
import scipy
from scipy import optimize, stats

warnings.simplefilter("ignore")


def tppf(p, df):
    """Student's t quantile. SciPy 1.10's t.ppf (cdflib) is good to about 1e-9 only for
    small non-integer df; three Newton steps on its t.sf/t.cdf (incomplete beta, good to
    rounding) give the quantile of SciPy's own distribution function."""
    x = stats.t.ppf(p, df)
    for _ in range(3):
        if p > 0.5:
            x += (stats.t.sf(x, df) - (1 - p)) / stats.t.pdf(x, df)
        else:
            x -= (stats.t.cdf(x, df) - p) / stats.t.pdf(x, df)
    return float(x)


def welch_ref(x, y, conf):
    x, y = np.asarray(x), np.asarray(y)
    res = stats.ttest_ind(y, x, equal_var=False)
    vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    se = math.sqrt(vx + vy)
    df = (vx + vy) ** 2 / (vx ** 2 / (len(x) - 1) + vy ** 2 / (len(y) - 1))
    diff = y.mean() - x.mean()
    half = tppf(0.5 + 0.5 * conf, df) * se
    return {"x": x.tolist(), "y": y.tolist(), "conf": conf, "diff": diff, "se": se, "df": df,
            "t": float(res.statistic), "p": float(res.pvalue), "lo": diff - half, "hi": diff + half}


def holm_ref(p):
    p = np.asarray(p, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adj_sorted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    adj = np.empty(m)
    adj[order] = adj_sorted
    return {"p": p.tolist(), "adj": adj.tolist()}


def power_of(lam, df, alpha):
    """Power of the two-sided t test against a standardized difference lam (non-central t)."""
    if math.isinf(df):
        c = stats.norm.ppf(1 - alpha / 2)
        return float(stats.norm.sf(c - lam) + stats.norm.cdf(-c - lam))
    c = tppf(1 - alpha / 2, df)
    return float(stats.nct.sf(c, df, lam) + stats.nct.cdf(-c, df, lam))


def detectable(se, df, alpha, power):
    lam = optimize.brentq(lambda l: power_of(l, df, alpha) - power, 0, 100, xtol=1e-14, rtol=1e-15)
    return lam * se


def runs_for(sigma, effect, alpha, power, limit):
    for n in range(2, limit + 1):
        if power_of(effect / (sigma * math.sqrt(2 / n)), 2 * n - 2, alpha) >= power:
            return n
    return 0


def hierboot(seed, base, cur, block, resamples, conf):
    """The documented algorithm of HierarchicalBootstrapRatio, on numpy's uniforms."""
    rng = np.random.default_rng(seed)

    def side(runs):
        s = 0.0
        for _ in range(len(runs)):
            run = runs[int(rng.random() * len(runs))]
            n = len(run)
            L = block if block > 0 else int(math.ceil(np.cbrt(n)))
            L = min(L, n)
            buf = []
            while len(buf) < n:
                st = int(rng.random() * (n - L + 1))
                buf.extend(run[st:st + L])
            s += math.log(np.percentile(np.asarray(buf[:n]), 50))
        return s / len(runs)

    ratios = []
    for _ in range(resamples):
        lb = side(base)
        lc = side(cur)
        ratios.append(math.exp(lc - lb))
    ratios = np.sort(np.asarray(ratios))
    a = (1 - conf) / 2
    mb = sum(math.log(np.percentile(np.asarray(r), 50)) for r in base) / len(base)
    mc = sum(math.log(np.percentile(np.asarray(r), 50)) for r in cur) / len(cur)
    return {"seed": seed, "base": base, "cur": cur, "block": block, "resamples": resamples, "conf": conf,
            "lo": float(np.percentile(ratios, 100 * a)), "hi": float(np.percentile(ratios, 100 * (1 - a))),
            "estimate": math.exp(mc - mb)}


def main():
    g = np.random.default_rng(20261201)
    out = {"numpy": np.__version__, "scipy": scipy.__version__}

    welch = []
    for nx, ny, sx, sy, shift, conf in [(5, 5, 0.02, 0.02, 0.0, 0.99), (5, 5, 0.02, 0.05, 0.1, 0.99),
                                        (3, 12, 0.01, 0.03, 0.04, 0.95), (20, 20, 0.03, 0.03, 0.05, 0.9975),
                                        (2, 2, 0.1, 0.01, -0.2, 0.9), (10, 4, 0.5, 0.2, 1.0, 0.999)]:
        x = (sx * g.standard_normal(nx)).tolist()
        y = (shift + sy * g.standard_normal(ny)).tolist()
        welch.append(welch_ref(x, y, conf))
    out["welch"] = welch

    out["tq"] = [{"p": p, "df": df, "q": tppf(p, df)}
                 for p in [0.5, 0.8, 0.9, 0.975, 0.995, 0.99833, 0.9999, 0.1]
                 for df in [1, 2, 3.7, 8, 17.6, 38, 1000]]
    out["normal_q"] = [{"p": p, "q": float(stats.norm.ppf(p))} for p in [0.8, 0.995, 0.99875]]

    out["holm"] = [holm_ref(p) for p in [[0.01, 0.04, 0.03, 0.005], [0.2, 0.2, 0.001], [0.5], [0.3, 0.9, 0.0001, 0.02, 0.02, 0.6]]]

    out["clopper"] = []
    for k, n, conf in [(0, 200, 0.95), (1, 200, 0.95), (2, 400, 0.95), (50, 100, 0.99), (200, 200, 0.95), (7, 30, 0.9), (199, 200, 0.95)]:
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=conf, method="exact")
        out["clopper"].append({"k": k, "n": n, "conf": conf, "lo": float(ci.low), "hi": float(ci.high)})

    out["power"] = [{"lam": lam, "df": df if not math.isinf(df) else -1, "alpha": a, "power": power_of(lam, df, a)}
                    for lam, df, a in [(0, 8, 0.01), (1, 8, 0.01), (4.5, 7.7, 0.01), (6, 4, 0.0025), (3, 38, 0.05),
                                       (10, 2, 0.01), (2.5, 200, 0.00333), (5, 1, 0.01), (3, math.inf, 0.01),
                                       (2, 1000, 0.01), (8, 3, 0.0001), (0.5, 5.5, 0.2), (4, 18, 0.000833)]]
    out["detectable"] = []
    for se, df, alpha, power in [(0.01, 8, 0.01, 0.8), (0.0134, 18, 0.0025, 0.8), (0.02, 4, 0.01, 0.9),
                                 (0.005, 38, 0.000833, 0.8), (0.03, 100, 0.05, 0.5), (0.01, math.inf, 0.01, 0.8)]:
        out["detectable"].append({"se": se, "df": df if not math.isinf(df) else -1, "alpha": alpha, "power": power,
                                  "d": float(detectable(se, df, alpha, power))})

    out["runs_for"] = [{"sigma": s, "effect": e, "alpha": a, "power": p, "n": runs_for(s, e, a, p, 1000)}
                       for s, e, a, p in [(0.02, math.log(1.05), 0.01, 0.8), (0.03, math.log(1.05), 0.0025, 0.8),
                                          (0.02, math.log(1.02), 0.00333, 0.8), (0.05, math.log(1.01), 0.01, 0.8),
                                          (0.001, 0.1, 0.01, 0.8), (0.5, 0.001, 0.01, 0.8)]]

    boots = []
    for seed, kb, kc, n, block, shift in [(1, 5, 5, 40, 0, 0.0), (2, 3, 6, 25, 4, 0.1), (3, 8, 8, 60, 1, -0.05)]:
        base = [np.round(0.1 * np.exp(0.02 * g.standard_normal() + 0.3 * g.standard_normal(n)), 6).tolist() for _ in range(kb)]
        cur = [np.round(0.1 * np.exp(shift + 0.02 * g.standard_normal() + 0.3 * g.standard_normal(n)), 6).tolist() for _ in range(kc)]
        boots.append(hierboot(seed, base, cur, block, 300, 0.95))
    out["hierboot"] = boots
    json.dump(out, sys.stdout)


main()
