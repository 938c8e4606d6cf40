#!/usr/bin/python3
"""Peer timings for distribution's benchmarks: SciPy kstest on 1e6 samples and numpy's
random streams. Prints "name ns_per_op" lines for run.sh to compare."""
import time

import numpy as np
from scipy import stats


def best(f, reps=3):
    t = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        f()
        t.append(time.perf_counter_ns() - t0)
    return min(t)


x = np.random.default_rng(1).standard_normal(1_000_000)
print("KS1_1M", best(lambda: stats.kstest(x, stats.norm.cdf, method="asymp")))
g = np.random.default_rng(0)
n = 200_000
print("Integers32_scalar", best(lambda: [g.integers(512, 1537) for _ in range(n)], 1) / n)
print("Integers32_vector", best(lambda: g.integers(512, 1537, size=1_000_000)) / 1_000_000)
rs = np.random.RandomState(0)
print("RandomStateGamma_scalar", best(lambda: [rs.gamma(0.5, 0.2) for _ in range(n)], 1) / n)
print("RandomStateGamma_vector", best(lambda: rs.gamma(0.5, 0.2, size=1_000_000)) / 1_000_000)
