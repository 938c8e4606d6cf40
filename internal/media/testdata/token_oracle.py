"""Oracle for media's image token rules: the published processor formulas, written
independently in Python (their reference language, whose round() halves to even).

Reads lines "rule width height" on stdin, prints one token count a line
("error" when the processor refuses the image).
"""
import math
import sys


def qwen2_vl(width, height, factor=28, min_pixels=56 * 56, max_pixels=16384 * 28 * 28):
    # transformers' Qwen2-VL image processor: smart_resize, then one token per
    # factor x factor cell (14-px patches merged 2x2), plus vision start/end tokens.
    if max(height, width) / min(height, width) > 200:
        return None
    h = round(height / factor) * factor
    w = round(width / factor) * factor
    if h * w > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return (h // factor) * (w // factor) + 2


def mllama(width, height, tile=560, max_tiles=4, patch=14):
    # transformers' mllama image processor: get_optimal_tiled_canvas over the
    # (w, h) tile arrangements with w*h <= max_tiles; tiles x ((tile/patch)^2 + 1).
    arrangements = [(a, b) for a in range(1, max_tiles + 1) for b in range(1, max_tiles + 1) if a * b <= max_tiles]
    canvases = [(a * tile, b * tile) for a, b in arrangements]  # (height, width)
    scales = []
    for ch, cw in canvases:
        sh, sw = ch / height, cw / width
        scales.append(sh if sw > sh else sw)
    ups = [s for s in scales if s >= 1]
    chosen = min(ups) if ups else max(s for s in scales if s < 1)
    cands = [c for c, s in zip(canvases, scales) if s == chosen]
    ch, cw = min(cands, key=lambda c: c[0] * c[1])  # first of the smallest area
    return (ch // tile) * (cw // tile) * ((tile // patch) ** 2 + 1)


RULES = {"qwen2-vl": qwen2_vl, "mllama": mllama}

for line in sys.stdin:
    rule, w, h = line.split()
    n = RULES[rule](int(w), int(h))
    print("error" if n is None else n)
