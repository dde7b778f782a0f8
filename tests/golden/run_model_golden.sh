#!/bin/sh
# One golden model test: paddock eval with teacher forcing against llama.cpp's golden file
# (<model>.logits.jsonl, checked by tools/compare_golden.py), or an embedding model's
# <model>.embed.jsonl (checked by compare_embed.py beside this script).
# Usage: run_model_golden.sh PADDOCK_BIN FIXTURES_DIR MODEL [ref|cpu|cpu-best|split|vulkan|vulkan-split]
# ref (default): the ref backend. cpu: the cpu backend under every PADDOCK_CPU path this
# machine has (scalar, avx2, avx512), each with 1 and 2 threads. cpu-best: the cpu backend's
# best path with 2 threads only (sanitizer builds, where the scalar paths take minutes).
# split: one pass across cpu and ref (--backend cpu+ref), the last layer on ref, then every
# layer and the output on ref with the input on cpu. vulkan: every part on the Vulkan device
# PADDOCK_VULKAN_DEVICE names, then a pass split across cpu and it (the last layer on the GPU);
# vulkan-split: the split alone (big vocabularies, whose output layer lavapipe runs slowly).
# Exit 0 match, 1 mismatch or error, 77 fixtures absent (CTest reports a skip).
bin="$1"
fixtures="$2"
model="$3"
backend="${4:-ref}"
golden="$fixtures/golden/$model.logits.jsonl"
gguf="$fixtures/models/$model.gguf"
compare="$fixtures/../tools/compare_golden.py"
if [ -f "$fixtures/golden/$model.embed.jsonl" ]; then
  golden="$fixtures/golden/$model.embed.jsonl"
  compare="$(dirname "$0")/compare_embed.py"
fi
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
case "$golden" in *.embed.jsonl) quant="" ;; esac  # one rule for embeddings
out=$(mktemp "${TMPDIR:-/tmp}/paddock-golden-$model.XXXXXX") || exit 1
trap 'rm -f "$out" "$out.err"' EXIT
if [ "$backend" = ref ]; then
  if ! "$bin" eval --model "$gguf" --teacher-force "$golden" --backend ref --json >"$out"; then
    echo "paddock eval failed for $model"
    exit 1
  fi
  python3 "$compare" "$golden" "$out" $quant
  exit $?
fi
if [ "$backend" = split ]; then
  for num_gpu in 1 999; do
    if ! "$bin" eval --model "$gguf" --teacher-force "$golden" --backend cpu+ref --num-gpu $num_gpu \
      --threads 2 --json >"$out"; then
      echo "paddock eval --backend cpu+ref --num-gpu $num_gpu failed for $model"
      exit 1
    fi
    echo "cpu+ref, --num-gpu $num_gpu:"
    python3 "$compare" "$golden" "$out" $quant || exit 1
  done
  exit 0
fi
if [ "$backend" = vulkan ] || [ "$backend" = vulkan-split ]; then
  runs="--backend vulkan|--backend cpu+vulkan --num-gpu 1"
  [ "$backend" = vulkan-split ] && runs="--backend cpu+vulkan --num-gpu 1"
  IFS='|'
  for args in $runs; do
    unset IFS
    if ! "$bin" eval --model "$gguf" --teacher-force "$golden" $args --threads 2 --json >"$out"; then
      echo "paddock eval $args failed for $model"
      exit 1
    fi
    echo "$args:"
    python3 "$compare" "$golden" "$out" $quant || exit 1
  done
  exit 0
fi
isas="scalar avx2 avx512"
thread_counts="1 2"
if [ "$backend" = cpu-best ]; then
  isas=best
  thread_counts=2
fi
for isa in $isas; do
  for threads in $thread_counts; do
    if [ "$isa" = best ]; then unset PADDOCK_CPU OLLAMA_CPU; else export PADDOCK_CPU=$isa; fi
    if ! "$bin" eval --model "$gguf" --teacher-force "$golden" --backend cpu \
      --threads $threads --json >"$out" 2>"$out.err"; then
      if grep -q "this CPU lacks" "$out.err"; then
        echo "SKIPPED LOUDLY: this CPU lacks $isa"
        break
      fi
      cat "$out.err"
      echo "paddock eval --backend cpu failed for $model ($isa, $threads threads)"
      exit 1
    fi
    echo "cpu $isa, $threads threads:"
    python3 "$compare" "$golden" "$out" $quant || exit 1
  done
done
rm -f "$out.err"
