#!/usr/bin/env python3
"""Lines up two tensor dumps node by node and names the first node where they part.

Usage: compare_layers.py GOLDEN.layers.jsonl OURS.layers.jsonl [--rtol R]

Both files are in the shape of ../shared/fixtures/golden/layers/ (`paddock eval
--dump-tensors` writes it): a first line with the prompt and ids, then one line per node
with name, op, ne, last_token_row, first8, sum and l2. Nodes pair up by (name, op) in order
of appearance. Golden views (RESHAPE, VIEW, PERMUTE, ...) and llama.cpp's unnamed nodes
(node_N) have no node of ours and are passed over; every other golden node must have its
pair, with the same ne (or, for llama.cpp's nodes after it dropped the other tokens' rows,
the same last row), and values within R relative to the tensor's L2 norm: |sum| and l2 and
each of first8 (the sum relative to the larger of |sum| and l2). Exit 0 when every node lines up, 1 at the first that does not.
"""
import argparse
import json
import sys

VIEW_OPS = {"RESHAPE", "VIEW", "PERMUTE", "TRANSPOSE", "CONT", "CPY", "NONE"}


def read(path):
    with open(path, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return lines[0], lines[1:]


def key_counts(nodes):
    seen, out = {}, []
    for n in nodes:
        k = (n["name"], n["op"])
        seen[k] = seen.get(k, 0) + 1
        out.append((k, seen[k]))
    return out


def same_rows(g, o):
    """Whether g and o summarise the same values (whole tensor or the last token's row)."""
    if g["ne"] == o["ne"] and g["last_token_row"] == o["last_token_row"]:
        return True
    # llama.cpp keeps only the output row in its last layer: [n, 1] against our [n, T]'s last row.
    return g["ne"][0] == o["ne"][0] and g["ne"][1:] == [1, 1, 1] and o["last_token_row"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("golden")
    ap.add_argument("ours")
    ap.add_argument("--rtol", type=float, default=1e-3)
    a = ap.parse_args()
    g_head, golden = read(a.golden)
    o_head, ours = read(a.ours)
    if g_head.get("ids") != o_head.get("ids"):
        print(f"prompt ids differ: golden {g_head.get('ids')}, ours {o_head.get('ids')}")
        return 1
    by_key = dict(zip((k for k in key_counts(ours)), ours))
    compared = 0
    worst = (0.0, None)
    for key, g in zip(key_counts(golden), golden):
        name, op = key[0]
        if op in VIEW_OPS or name.startswith("node_"):
            continue
        o = by_key.get(key)
        if o is None:
            print(f"golden node {name} ({op}, occurrence {key[1]}) has no node in {a.ours}")
            return 1
        if not same_rows(g, o):
            print(f"{name} ({op}): golden ne {g['ne']} last_token_row {g['last_token_row']}, "
                  f"ours ne {o['ne']} last_token_row {o['last_token_row']}")
            return 1
        scale = max(abs(g["l2"]), 1e-6)
        diffs = [abs(g["l2"] - o["l2"])] + [abs(x - y) for x, y in zip(g["first8"], o["first8"])]
        # A sum may dwarf the norm (a large vocabulary's logits share an offset).
        err = max(max(diffs) / scale, abs(g["sum"] - o["sum"]) / max(abs(g["sum"]), scale))
        compared += 1
        if err > worst[0]:
            worst = (err, name)
        if err > a.rtol:
            print(f"first divergence at {name} ({op}, occurrence {key[1]}): relative error {err:.3g} "
                  f"> {a.rtol:g}; golden sum {g['sum']:.6g} l2 {g['l2']:.6g}, "
                  f"ours sum {o['sum']:.6g} l2 {o['l2']:.6g}")
            return 1
    print(f"{compared} nodes line up; largest relative error {worst[0]:.3g} at {worst[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
