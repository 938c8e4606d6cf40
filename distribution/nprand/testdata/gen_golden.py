#!/usr/bin/python3
"""Writes golden.json: numpy's random streams for nprand's tests.

Run with Debian's numpy (apt-get install python3-numpy):
    /usr/bin/python3 gen_golden.py > golden.json
Each case replays a list of operations on one generator; the Go test replays the same
operations and compares every result (integers exactly, floats to 1e-12 relative).
"""
import json
import sys

import numpy as np

U32 = 2**32
cases = []


def gen_case(name, seed, ops):
    rng = np.random.default_rng(seed)
    out = []
    for op in ops:
        if op[0] == "integers":
            out.append(int(rng.integers(op[1], op[2])))
        elif op[0] == "integers_n":
            out.extend(int(v) for v in rng.integers(op[1], op[2], size=op[3]))
        elif op[0] == "random":
            out.append(float(rng.random()))
        elif op[0] == "raw":
            out.extend(int(v) for v in rng.bit_generator.random_raw(op[1]))
        else:
            raise ValueError(op)
    cases.append({"name": name, "kind": "generator", "seed": seed, "ops": ops, "want": out})


def rs_case(name, seed, ops):
    rs = np.random.RandomState(seed)
    out = []
    for op in ops:
        if op[0] == "randint":
            out.append(int(rs.randint(op[1], op[2])))
        elif op[0] == "randint_n":
            out.extend(int(v) for v in rs.randint(op[1], op[2], size=op[3]))
        elif op[0] == "random_sample":
            out.append(float(rs.random_sample()))
        elif op[0] == "standard_normal":
            out.append(float(rs.standard_normal()))
        elif op[0] == "exponential":
            out.append(float(rs.exponential(op[1])))
        elif op[0] == "gamma":
            out.append(float(rs.gamma(op[1], op[2])))
        elif op[0] == "uint32":
            out.append(int(rs.randint(0, U32, dtype=np.uint64)))
        else:
            raise ValueError(op)
    cases.append({"name": name, "kind": "randomstate", "seed": seed, "ops": ops, "want": out})


seedseq = []
for s in [0, 1, 42, 12345, 2**32 + 5, 2**63 + 7]:
    ss = np.random.SeedSequence(s)
    seedseq.append({"seed": s, "state32": [int(v) for v in ss.generate_state(8, np.uint32)],
                    "state64": [int(v) for v in ss.generate_state(4, np.uint64)]})

for s in [0, 42, 2**40 + 3]:
    gen_case(f"pcg64 raw seed={s}", s, [["raw", 8]])

gen_case("random floats", 1, [["random"]] * 6)
gen_case("uint32 buffering: full 32-bit range uses next_uint32 halves", 3,
         [["integers", 0, U32]] * 5 + [["random"]] + [["integers", 0, U32]] * 2)
gen_case("32-bit Lemire, small ranges", 0,
         [["integers", 0, 10]] * 5 + [["integers", 512, 1537]] * 5 + [["integers", -5, 5]] * 3)
gen_case("no draw when one value", 7,
         [["integers", 0, 5], ["integers", 9, 10], ["integers", 0, 5], ["integers", -3, -2], ["integers", 0, 5]])
gen_case("64-bit Lemire", 11,
         [["integers", 0, 2**40], ["integers", 0, 10], ["integers", -2**62, 2**62], ["integers", 0, 2**33 + 1],
          ["integers", 0, 10], ["integers", 0, 2**63 - 1]])
gen_case("rejection-heavy range 2^31+1", 5, [["integers", 0, 2**31 + 1]] * 12)
gen_case("vllm random dataset shape", 0,
         [["integers_n", 512, 1537, 16], ["integers_n", 64, 193, 16], ["integers_n", 0, 50257, 16]])
gen_case("array and scalar streams agree", 2, [["integers_n", 0, 1000, 7], ["integers", 0, 1000], ["integers_n", 0, 2**35, 3]])

rs_case("legacy random_sample seed=42", 42, [["random_sample"]] * 5)
rs_case("legacy standard_normal (cached pair)", 42, [["standard_normal"]] * 5 + [["random_sample"], ["standard_normal"]])
rs_case("legacy exponential", 7, [["exponential", 1.0]] * 3 + [["exponential", 0.05]] * 3)
rs_case("legacy gamma shape<1, =1, >1", 0,
        [["gamma", 0.5, 0.1]] * 4 + [["gamma", 1.0, 0.1]] * 2 + [["gamma", 2.5, 0.02]] * 4 + [["gamma", 10.0, 1.0]] * 2)
rs_case("vllm bench serve arrivals: seed 0, rate 10, burstiness 1", 0,
        [["gamma", 1.0, 1.0 / (10 * 1.0)]] * 8)
rs_case("vllm bench serve arrivals: seed 0, rate 4, burstiness 0.5", 0,
        [["gamma", 0.5, 1.0 / (4 * 0.5)]] * 8)
rs_case("legacy randint masked", 3,
        [["randint", 0, 10]] * 5 + [["randint", 512, 1025]] * 5 + [["randint", 0, 2**40]] * 3 + [["randint", 5, 6]] + [["randint", 0, 10]])
rs_case("sglang random lengths: randint_n", 1, [["randint_n", 1, 1025, 10]])
rs_case("legacy full 32-bit range", 9, [["uint32"]] * 4)

arr = np.random.RandomState([1, 2, 3])
array_seed = {"key": [1, 2, 3], "random_sample": [float(arr.random_sample()) for _ in range(4)]}

json.dump({"numpy": np.__version__, "seedseq": seedseq, "cases": cases, "array_seed": array_seed},
          sys.stdout, indent=1)
sys.stdout.write("\n")
