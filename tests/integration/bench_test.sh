#!/usr/bin/env bash
# `paddock bench` end to end (see bench.cmake). No timing assertions beyond "> 0".
set -euo pipefail

bin="${PADDOCK_BIN:?PADDOCK_BIN must name the paddock binary}"
model="${PADDOCK_FIXTURES:-}/models/stories260K.gguf"
if [[ -z "${PADDOCK_FIXTURES:-}" || ! -f "$model" ]]; then
  echo "SKIPPED: fixtures not found (PADDOCK_FIXTURES=${PADDOCK_FIXTURES:-unset})" >&2
  exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Every key of the bench JSON in order, the number fields positive, the pairs [mean > 0, sd >= 0];
# $1 is the expected type, or "any".
check_bench_json() {
  python3 -c '
import json, sys
j = json.loads(sys.stdin.read())
keys = ["model", "type", "size_bytes", "threads", "pp16_tps", "tg8_tps", "bandwidth_gbs",
        "decode_efficiency", "peak_rss_bytes"]
assert list(j) == keys, f"keys {list(j)} != {keys}"
assert isinstance(j["model"], str) and j["model"], j
assert j["type"] and (sys.argv[1] == "any" or j["type"] == sys.argv[1]), "type %s != %s" % (j["type"], sys.argv[1])
for k in ["size_bytes", "threads", "bandwidth_gbs", "decode_efficiency", "peak_rss_bytes"]:
    assert j[k] > 0, f"{k} = {j[k]}"
for k in ["pp16_tps", "tg8_tps"]:
    assert len(j[k]) == 2 and j[k][0] > 0 and j[k][1] >= 0, f"{k} = {j[k]}"
' "$1"
}

"$bin" bench --model "$model" -p 16 -n 8 -r 1 -t 2 --probe-mib 64 --json >"$tmp/fixture.json"
check_bench_json any <"$tmp/fixture.json"

saved="$tmp/tiny.gguf"
"$bin" bench --shape tiny --type q4_0 --save "$saved" -p 16 -n 8 -r 2 -t 2 --probe-mib 64 --json >"$tmp/tiny.json"
check_bench_json Q4_0 <"$tmp/tiny.json"
test -s "$saved"

"$bin" show --json "$saved" >"$tmp/show.json"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["architecture"] == "llama", j["architecture"]
assert j["tokenizer"]["vocab_size"] == 1024, j["tokenizer"]
t = j["tensor_types"]
# 2 layers x (2 norms + 7 matrices) + token_embd + output_norm; tied: no output.weight.
assert sum(t.values()) == 20, t
assert t.get("F32") == 5, t            # the norms stay F32
assert t.get("Q6_K") == 1, t           # the tied token_embd is the head: Q6_K, as llama.cpp
assert t.get("Q4_0") == 14, t          # every projection
' "$tmp/show.json"

"$bin" bench --model "$saved" -p 16 -n 8 -r 1 -t 1 --probe-mib 64 --json >"$tmp/saved.json"
check_bench_json Q4_0 <"$tmp/saved.json"

# The text report: a table row per test and the bandwidth line.
"$bin" bench --model "$saved" -p 16 -n 8 -r 1 -t 1 --probe-mib 64 >"$tmp/saved.txt"
grep -q '| *pp16 *|' "$tmp/saved.txt"
grep -q '| *tg8 *|' "$tmp/saved.txt"
grep -q 'decode efficiency' "$tmp/saved.txt"
# The backend column names the kernel path, which PADDOCK_CPU forces.
PADDOCK_CPU=scalar "$bin" bench --model "$saved" -p 16 -n 8 -r 1 -t 1 --probe-mib 64 >"$tmp/scalar.txt"
grep -q '| cpu-scalar *|' "$tmp/scalar.txt"
# -ngl / --gpu: the layers on the Vulkan device (lavapipe here), its copy bandwidth reported.
if PADDOCK_VULKAN_DEVICE=llvmpipe "$bin" bench --model "$saved" -p 16 -n 8 -r 1 -t 1 --probe-mib 64 --gpu \
  >"$tmp/gpu.txt" 2>"$tmp/gpu.err"; then
  grep -q '| cpu-[a-z0-9]*+vulkan *|' "$tmp/gpu.txt"
  grep -q 'copy bandwidth: .* GB/s (vulkan0 (llvmpipe' "$tmp/gpu.txt"
  PADDOCK_VULKAN_DEVICE=llvmpipe "$bin" bench --model "$saved" -p 16 -n 8 -r 1 -t 1 --probe-mib 64 -ngl 1 >"$tmp/ngl1.txt"
  grep -q '| *tg8 *|' "$tmp/ngl1.txt"
else
  grep -q 'built without Vulkan' "$tmp/gpu.err"  # the only acceptable failure
fi
# -p 0 / -n 0 skip a test, as with llama-bench: no row, no key; no efficiency without tg.
"$bin" bench --model "$saved" -p 0 -n 8 -r 1 -t 1 --probe-mib 64 --json >"$tmp/tg_only.json"
"$bin" bench --model "$saved" -p 16 -n 0 -r 1 -t 1 --probe-mib 64 --json >"$tmp/pp_only.json"
python3 -c '
import json, sys
tg = json.load(open(sys.argv[1]))
pp = json.load(open(sys.argv[2]))
assert "tg8_tps" in tg and not any(k.startswith("pp") for k in tg), tg
assert tg["tg8_tps"][0] > 0 and tg["decode_efficiency"] > 0, tg
assert "pp16_tps" in pp and not any(k.startswith("tg") for k in pp), pp
assert pp["pp16_tps"][0] > 0 and pp["decode_efficiency"] is None, pp
' "$tmp/tg_only.json" "$tmp/pp_only.json"
"$bin" bench --model "$saved" -p 16 -n 0 -r 1 -t 1 --probe-mib 64 >"$tmp/pp_only.txt"
grep -q '| *pp16 *|' "$tmp/pp_only.txt"
! grep -q '| *tg' "$tmp/pp_only.txt"
grep -q 'decode efficiency: n/a' "$tmp/pp_only.txt"
if "$bin" bench --model "$saved" -p 0 -n 0 2>"$tmp/none.err"; then
  echo "bench with -p 0 -n 0 should fail" >&2
  exit 1
fi
grep -q 'nothing to measure' "$tmp/none.err"
# An encoder (the embedding fixture): no tg test; pp is one input per pass, reported as
# sequences/s too; more tokens than its context is a clear error.
bert="${PADDOCK_FIXTURES}/models/tiny-bert-f16.gguf"
"$bin" bench --model "$bert" -p 32 -n 8 -r 1 -t 1 --probe-mib 64 --json >"$tmp/bert.json"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["pp32_tps"][0] > 0 and "tg8_tps" not in j, j
assert abs(j["embed32_seqs_per_s"] - j["pp32_tps"][0] / 32) < 1e-6 * j["pp32_tps"][0], j
' "$tmp/bert.json"
"$bin" bench --model "$bert" -p 32 -r 1 -t 1 --probe-mib 64 >"$tmp/bert.txt"
grep -q 'embeddings: .* sequences/s of 32 tokens' "$tmp/bert.txt"
if "$bin" bench --model "$bert" -p 1000 -r 1 -t 1 2>"$tmp/bert.err"; then
  echo "an embedding bench past the context should fail" >&2
  exit 1
fi
grep -q 'an embedding model takes -p 1..512' "$tmp/bert.err"
echo "bench_cli: OK"
