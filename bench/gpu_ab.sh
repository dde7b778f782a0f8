#!/bin/bash
# Alternates paddock binaries or settings on a GPU in the same minutes, every layer offloaded:
# what a session lent the `device` machine runs to measure a change (docs/bench.md, "GPU").
#   bench/gpu_ab.sh [-r ROUNDS] [-s "SHAPE..."] [-q "TYPE..."] [-p N] [-n N] VARIANT...
# A VARIANT is a paddock binary, alone or with settings: BIN or BIN:NAME=VALUE,NAME=VALUE
# (e.g. build/release/bin/paddock:PADDOCK_VULKAN_INT_DOT=0). The first binary builds the
# synthetic models (the real Llama 3 vocabulary needs --vocab: set VOCAB=FILE.gguf) once into
# $MODELS (default /tmp/paddock-models). Each round runs every variant on every model, in
# reverse order every other round; each run prints its bench rows and the GPU's copy
# bandwidth. Set PADDOCK_VULKAN_PROFILE=1 for per-kernel times.
set -euo pipefail

rounds=2
shapes="llama3.2-1b llama3.1-8b"
types="q4_k_m q8_0"
pp=512
tg=128
while getopts "r:s:q:p:n:" opt; do
  case $opt in
    r) rounds=$OPTARG ;;
    s) shapes=$OPTARG ;;
    q) types=$OPTARG ;;
    p) pp=$OPTARG ;;
    n) tg=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then
  echo "usage: $0 [-r ROUNDS] [-s \"SHAPE...\"] [-q \"TYPE...\"] [-p N] [-n N] BIN[:NAME=VALUE,...]..." >&2
  exit 2
fi
variants=("$@")
for v in "${variants[@]}"; do
  bin=${v%%:*}
  [ -x "$bin" ] || { echo "$0: $bin is not an executable" >&2; exit 2; }
done

models=${MODELS:-/tmp/paddock-models}
mkdir -p "$models"
first=${variants[0]%%:*}
vocab=()
[ -n "${VOCAB:-}" ] && vocab=(--vocab "$VOCAB")

if command -v vulkaninfo >/dev/null; then
  vulkaninfo --summary 2>/dev/null | grep -E "deviceName|driverName|driverInfo|apiVersion" || true
fi

files=()
for shape in $shapes; do
  for type in $types; do
    file="$models/$shape-$type.gguf"
    if [ ! -s "$file" ]; then
      "$first" bench --shape "$shape" --type "$type" "${vocab[@]}" --save "$file" -p 0 -n 1 -r 1 >/dev/null
    fi
    files+=("$file")
  done
done

# Runs variant $1 on file $2: its settings exported for that run only.
run() {
  local bin=${1%%:*} settings=()
  [ "$1" != "$bin" ] && IFS=, read -r -a settings <<<"${1#*:}"
  echo "## $(basename "$2") | $1"
  env "${settings[@]}" "$bin" bench --model "$2" -p "$pp" -n "$tg" -r 1 --gpu 2>&1 |
    grep -E "^\| [^-]|copy bandwidth|Error" | grep -v "^| model" || true
}

for ((round = 0; round < rounds; ++round)); do
  order=("${variants[@]}")
  if ((round % 2 == 1)); then
    order=()
    for ((i = ${#variants[@]} - 1; i >= 0; --i)); do order+=("${variants[i]}"); done
  fi
  for file in "${files[@]}"; do
    for v in "${order[@]}"; do run "$v" "$file"; done
  done
done
