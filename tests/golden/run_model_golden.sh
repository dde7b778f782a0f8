#!/bin/sh
# One golden model test: paddock eval with teacher forcing against llama.cpp's golden file.
# Usage: run_model_golden.sh PADDOCK_BIN FIXTURES_DIR MODEL
# Exit 0 match, 1 mismatch or error, 77 fixtures absent (CTest reports a skip).
bin="$1"
fixtures="$2"
model="$3"
golden="$fixtures/golden/$model.logits.jsonl"
gguf="$fixtures/models/$model.gguf"
compare="$fixtures/../tools/compare_golden.py"
for f in "$golden" "$gguf" "$compare"; do
  if [ ! -f "$f" ]; then
    echo "SKIPPED LOUDLY: $f not found (set PADDOCK_FIXTURES)"
    exit 77
  fi
done
# Float models get the tight tolerances; every quantized one the quantized tolerances.
case "$model" in
  stories260K | tiny-zoo-f32 | tiny-zoo-f16 | tiny-zoo-bf16) quant="" ;;
  *) quant="--quant" ;;
esac
out=$(mktemp "${TMPDIR:-/tmp}/paddock-golden-$model.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT
if ! "$bin" eval --model "$gguf" --teacher-force "$golden" --backend ref --json >"$out"; then
  echo "paddock eval failed for $model"
  exit 1
fi
python3 "$compare" "$golden" "$out" $quant
