#!/bin/sh
# One layer-dump test: `paddock eval --dump-tensors` on a fixture model must line up with
# llama.cpp's dump in golden/layers/ node by node (scripts/compare_layers.py).
# Usage: run_layers.sh PADDOCK_BIN FIXTURES_DIR MODEL ref|cpu|split
# split: the last layer on ref, the rest on cpu (one pass across two backends).
# Exit 0 match, 1 mismatch or error, 77 fixtures absent (CTest reports a skip).
bin="$1"
fixtures="$2"
model="$3"
backend="$4"
golden="$fixtures/golden/layers/$model.layers.jsonl"
gguf="$fixtures/models/$model.gguf"
for f in "$golden" "$gguf"; do
  if [ ! -f "$f" ]; then
    echo "SKIPPED LOUDLY: $f not found (set PADDOCK_FIXTURES)"
    exit 77
  fi
done
# Float models agree to rounding; quantized ones differ at every matmul (the ref backend
# multiplies F32 activations, llama.cpp quantized ones), most in attention's outputs.
case "$model" in
  stories260K | tiny-zoo-f32) rtol=0.01 ;;
  *) rtol=0.15 ;;
esac
out=$(mktemp "${TMPDIR:-/tmp}/paddock-layers-$model.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT
case "$backend" in
  split) set -- --backend cpu+ref --num-gpu 1 ;;
  *) set -- --backend "$backend" ;;
esac
"$bin" eval --model "$gguf" --dump-tensors "$out" "$@" --threads 2 || exit 1
python3 "$(dirname "$0")/../../scripts/compare_layers.py" "$golden" "$out" --rtol "$rtol"
