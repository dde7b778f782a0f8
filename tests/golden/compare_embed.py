#!/usr/bin/env python3
"""Checks `paddock eval` embeddings against a golden <model>.embed.jsonl, by the fixtures
README's rule: per prompt the same ids and cosine similarity >= 0.999 (the vectors are
pooled and L2-normalised). Prints the worst cosine; exit 0 match, 1 mismatch.
Usage: compare_embed.py GOLDEN.embed.jsonl OURS.jsonl"""
import json
import math
import sys

MIN_COSINE = 0.999


def read(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na > 0 and nb > 0 else 0.0


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    golden, ours = read(sys.argv[1]), read(sys.argv[2])
    failures = []
    if len(golden) != len(ours):
        failures.append(f"{len(ours)} results for {len(golden)} golden prompts")
    worst = 1.0
    for g, o in zip(golden, ours):
        name = repr(g["prompt"][:40])
        if g["prompt"] != o.get("prompt"):
            failures.append(f"{name}: results out of order (found {o.get('prompt', '')[:40]!r})")
            continue
        if g["ids"] != o.get("ids"):
            failures.append(f"{name}: ids differ: {o.get('ids')} vs golden {g['ids']}")
        e = o.get("embedding") or []
        if len(e) != len(g["embedding"]):
            failures.append(f"{name}: {len(e)} dimensions, golden has {len(g['embedding'])}")
            continue
        c = cosine(g["embedding"], e)
        worst = min(worst, c)
        if not c >= MIN_COSINE:
            failures.append(f"{name}: cosine {c:.6f} < {MIN_COSINE}")
    for f in failures:
        print("MISMATCH", f)
    print(f"{len(golden)} prompts, worst cosine {worst:.7f}: {'FAIL' if failures else 'ok'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
