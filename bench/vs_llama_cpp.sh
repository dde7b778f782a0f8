#!/bin/bash
# Measures llama.cpp and paddock on the same GGUF files in the same minutes, alternating them.
# llama.cpp is Debian's build (sid's llama.cpp-tools, with ggml's CPU variants picked by
# CPUID), installed into a sid chroot so this Debian 12 machine is left as it is. Needs root.
#   sudo bench/vs_llama_cpp.sh [-r ROUNDS] [-t THREADS] FILE.gguf...
# Prints llama-bench's pp512 / tg128 rows and paddock bench's, with its bandwidth probe. An
# embedding model (a file with <arch>.pooling_type) is measured as embeddings of 128-token
# inputs instead: llama-bench -embd 1's pp128 row and paddock bench's pp128 and sequences/s.
set -euo pipefail

rounds=3
threads=2
while getopts "r:t:" opt; do
  case $opt in
    r) rounds=$OPTARG ;;
    t) threads=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then
  echo "usage: $0 [-r ROUNDS] [-t THREADS] FILE.gguf..." >&2
  exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "$0: needs root (debootstrap, chroot and bind mounts)" >&2
  exit 1
fi

root=$(cd "$(dirname "$0")/.." && pwd)
paddock=${PADDOCK:-$root/build/release/bin/paddock}
chroot_dir=${LLAMA_CHROOT:-/var/tmp/paddock-llama-sid}
apt_opts=(-o Acquire::Check-Valid-Until=false -qq)

if [ ! -x "$chroot_dir/usr/bin/llama-bench" ]; then
  command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap
  [ -d "$chroot_dir/usr" ] || debootstrap --variant=minbase sid "$chroot_dir" http://deb.debian.org/debian
  cp /etc/resolv.conf "$chroot_dir/etc/"
  chroot "$chroot_dir" apt-get "${apt_opts[@]}" update
  chroot "$chroot_dir" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y llama.cpp-tools
fi

# /proc and /sys, where llama.cpp reads CPU counts and memory; each file's folder as /m<i>.
mounts=()
cleanup() { for m in "${mounts[@]}"; do umount "$m" || true; done; }
trap cleanup EXIT
for fs in proc sys; do
  mountpoint -q "$chroot_dir/$fs" || { mount --bind "/$fs" "$chroot_dir/$fs" && mounts+=("$chroot_dir/$fs"); }
done
files=("$@")
inside=()
i=0
for f in "${files[@]}"; do
  dir=$(cd "$(dirname "$f")" && pwd)
  mkdir -p "$chroot_dir/m$i"
  mount --bind "$dir" "$chroot_dir/m$i"
  mounts+=("$chroot_dir/m$i")
  inside+=("/m$i/$(basename "$f")")
  i=$((i + 1))
done

for ((round = 1; round <= rounds; round++)); do
  for ((i = 0; i < ${#files[@]}; i++)); do
    file=${files[$i]}
    echo "== round $round: $(basename "$file")"
    if "$paddock" show "$file" --verbose 2>/dev/null | grep '\.pooling_type ' >/dev/null; then  # not -q: pipefail would see SIGPIPE
      echo "-- llama.cpp (embeddings)"
      chroot "$chroot_dir" llama-bench -m "${inside[$i]}" -t "$threads" -r 3 -p 128 -n 0 -embd 1 2>&1 | grep -E "pp128"
      echo "-- paddock (embeddings)"
      "$paddock" bench -m "$file" -t "$threads" -r 3 -p 128 2>&1 | grep -E "pp128|sequences|bandwidth"
      continue
    fi
    echo "-- llama.cpp"
    chroot "$chroot_dir" llama-bench -m "${inside[$i]}" -t "$threads" -r 3 2>&1 | grep -E "pp512|tg128"
    echo "-- paddock"
    "$paddock" bench -m "$file" -t "$threads" -r 3 2>&1 | grep -E "pp512|tg128|bandwidth"
  done
done
