#!/bin/sh
# Golden checks of the batched engine paths through the binary.
# Usage: run_eval_parallel.sh PADDOCK_BIN FIXTURES_DIR MODE [MODEL [BACKEND]]
#   MODE parallel: `paddock eval --parallel 4 --backend BACKEND` (ref unless named) over
#                  MODEL's golden file (teacher forced, and with --prompt-file) must match
#                  llama.cpp's numbers like the one-at-a-time run: the four sequences' caches
#                  are one group, so each layer attends for all of them in one call.
#   MODE shift:    a 4096-token generation on stories260K with n_ctx 512 runs to the end
#                  through context shifts.
# Exit 0 pass, 1 fail, 77 fixtures absent (CTest reports a skip).
bin="$1"
fixtures="$2"
mode="$3"
model="${4:-stories260K}"
backend="${5:-ref}"
golden="$fixtures/golden/$model.logits.jsonl"
gguf="$fixtures/models/$model.gguf"
compare="$fixtures/../tools/compare_golden.py"
for f in "$golden" "$gguf" "$compare" "$fixtures/golden/prompts.txt"; do
  if [ ! -f "$f" ]; then
    echo "SKIPPED LOUDLY: $f not found (set PADDOCK_FIXTURES)"
    exit 77
  fi
done
out=$(mktemp "${TMPDIR:-/tmp}/paddock-eval-$mode.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT
case "$model" in
  stories260K | tiny-zoo-f32 | tiny-zoo-f16 | tiny-zoo-bf16) quant="" ;;
  *) quant="--quant" ;;
esac

if [ "$mode" = parallel ]; then
  "$bin" eval --model "$gguf" --teacher-force "$golden" --parallel 4 --backend "$backend" --threads 2 --json \
    >"$out" || {
    echo "paddock eval --parallel 4 --backend $backend --teacher-force failed for $model"
    exit 1
  }
  python3 "$compare" "$golden" "$out" $quant || exit 1
  "$bin" eval --model "$gguf" --prompt-file "$fixtures/golden/prompts.txt" --parallel 4 --backend "$backend" \
    --threads 2 --json >"$out" || {
    echo "paddock eval --parallel 4 --backend $backend --prompt-file failed for $model"
    exit 1
  }
  python3 "$compare" "$golden" "$out" $quant
  exit $?
fi

if [ "$mode" = shift ]; then
  if ! "$bin" eval --model "$gguf" --prompt "Once upon a time" -n 4096 --ctx 512 --ignore-eos --seed 1 \
    --backend cpu --threads 1 >"$out"; then
    echo "paddock eval: 4096 tokens with n_ctx 512 failed"
    exit 1
  fi
  bytes=$(wc -c <"$out")
  # 4096 tokens of stories260K are well over 4096 bytes of text.
  if [ "$bytes" -lt 4096 ]; then
    echo "expected more than 4096 bytes of text, found $bytes"
    exit 1
  fi
  echo "context shift: 4096 tokens, $bytes bytes of text"
  exit 0
fi
echo "unknown mode $mode"
exit 1
