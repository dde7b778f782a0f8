#!/bin/sh
# A file in Ollama's published layout gives exactly its llama.cpp-layout twin's logits
# (gguf/layouts.h translates it at load): paddock eval, teacher-forced on the twin's golden
# prompts, on the cpu backend, byte-identical JSON for both files.
# Usage: run_twin.sh PADDOCK_BIN FIXTURES_DIR MODEL OLLAMA_MODEL
# Exit 0 identical, 1 different or error, 77 fixtures absent (CTest reports a skip).
bin="$1"
fixtures="$2"
golden="$fixtures/golden/$3.logits.jsonl"
for f in "$golden" "$fixtures/models/$3.gguf" "$fixtures/models/$4.gguf"; do
  if [ ! -f "$f" ]; then
    echo "SKIPPED LOUDLY: $f not found (set PADDOCK_FIXTURES)"
    exit 77
  fi
done
out=$(mktemp -d "${TMPDIR:-/tmp}/paddock-twin.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
for m in "$3" "$4"; do
  "$bin" eval --model "$fixtures/models/$m.gguf" --teacher-force "$golden" --backend cpu --json >"$out/$m.json" || exit 1
done
if ! cmp "$out/$3.json" "$out/$4.json"; then
  echo "$4 does not give $3's logits"
  exit 1
fi
echo "$4 gives exactly $3's logits"
