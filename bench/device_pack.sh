#!/bin/bash
# Packs what a GPU measurement needs on the `device` machine, which has no Debian packages and
# no network (docs/bench.md, "GPU"): paddock binaries under names of your choice, the shared
# libraries they and vulkaninfo load (all but glibc's), vulkaninfo, and the .debs of the GL
# dispatch libraries NVIDIA's Vulkan driver needs. Run here:
#   bench/device_pack.sh build/devpack new=build/release/bin/paddock old=/tmp/paddock.base
# then carry build/devpack (an ignored path, well under the tool's 64 MiB) and run there:
#   source build/devpack/env.sh && bench/gpu_ab.sh -r 3 build/devpack/bin/old build/devpack/bin/new
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 OUT_DIR NAME=BINARY..." >&2
  exit 2
fi
out=$1
shift
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/debs"

bins=()
for spec in "$@"; do
  name=${spec%%=*}
  bin=${spec#*=}
  [ "$name" != "$spec" ] && [ -x "$bin" ] || { echo "$0: expected NAME=BINARY, got $spec" >&2; exit 2; }
  cp "$bin" "$out/bin/$name"
  bins+=("$bin")
done
if command -v vulkaninfo >/dev/null; then
  cp "$(command -v vulkaninfo)" "$out/bin/vulkaninfo"
  bins+=("$(command -v vulkaninfo)")
fi

# Every library the binaries load, but glibc's own (the device machine has a glibc).
for bin in "${bins[@]}"; do ldd "$bin"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv)\.so|/ld-linux' |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done

(cd "$out/debs" && apt-get -o APT::Sandbox::User=root download -q libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null)

cat >"$out/env.sh" <<'EOF'
# Sourced on the device machine: unpacks the GL dispatch libraries (into $DEVPACK_ROOT, / by
# default), puts the packed libraries and binaries first, and names NVIDIA's Vulkan driver.
devpack=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=${DEVPACK_ROOT:-/}
for deb in "$devpack"/debs/*.deb; do dpkg -x "$deb" "$root"; done
[ "$root" = / ] && ldconfig
export LD_LIBRARY_PATH="$devpack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$devpack/bin:$PATH"
nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -f "$nvidia_icd" ]; then export VK_DRIVER_FILES=$nvidia_icd; fi
EOF
du -sh "$out"
