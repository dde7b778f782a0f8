#!/usr/bin/env bash
# Registry round trip against Debian's docker-registry on 127.0.0.1: create a model from
# stories260K.gguf, push, delete locally, pull back (byte-identical blobs and manifest);
# a pull whose connections are cut midway resumes with Range and verifies; a pull killed
# midway leaves a partial that the next pull continues; a corrupted blob on the registry
# fails with "digest mismatch" and leaves neither blob nor manifest behind; a local blob
# that is a link, or whose bytes do not match its digest, is never uploaded.
# Usage: registry_test.sh DRIVER   (env PADDOCK_FIXTURES). Exit 77 = skipped.
set -euo pipefail
driver=$1
here=$(cd "$(dirname "$0")" && pwd)
gguf=${PADDOCK_FIXTURES:-}/models/stories260K.gguf
if ! command -v docker-registry >/dev/null; then echo "SKIP: docker-registry is not installed"; exit 77; fi
if [ ! -f "$gguf" ]; then echo "SKIP: fixture $gguf is missing (set PADDOCK_FIXTURES)"; exit 77; fi
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/registry.log" ] && tail -20 "$tmp/registry.log"; exit 1; }

source "$here/start_registry.sh"
start_registry "$tmp" || fail "registry did not start"
pids+=("$REGISTRY_PID")
port=$REGISTRY_PORT

store=$tmp/store
name=127.0.0.1:$port/test/stories:latest
manifest=$store/manifests/127.0.0.1:$port/test/stories/latest
"$driver" create "$store" "$name" "$gguf" || fail "create"
mkdir "$tmp/orig"
cp "$store"/blobs/sha256-* "$tmp/orig/"
cp "$manifest" "$tmp/orig.manifest"
model_hex=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print([l for l in m['layers'] if l['mediaType'].endswith('.model')][0]['digest'][7:])" "$manifest")

same_as_original() {
  cmp "$tmp/orig.manifest" "$1" || fail "manifest differs after $2"
  for f in "$tmp"/orig/*; do cmp "$f" "$store/blobs/$(basename "$f")" || fail "blob $(basename "$f") differs after $2"; done
  if ls -A "$store/blobs" | grep -q paddock-tmp; then fail "temp/partial files left after $2"; fi
}

echo "== push"
"$driver" push "$store" "$name" >"$tmp/push.log" || fail "push"
grep -q '"status":"pushing manifest"' "$tmp/push.log" || fail "no pushing manifest event"
grep -q '"status":"success"' "$tmp/push.log" || fail "push did not report success"
"$driver" push "$store" "$name" >"$tmp/push2.log" || fail "second push (all blobs exist)"

echo "== push uploads only verified blobs"
evil_store=$tmp/evil
evil=127.0.0.1:$port/test/evil:latest
"$driver" create "$evil_store" "$evil" "$gguf" || fail "create (evil)"
blob=$evil_store/blobs/sha256-$model_hex
head_status() { curl -s -o /dev/null -w '%{http_code}' -I "http://127.0.0.1:$port/v2/test/evil/blobs/sha256:$model_hex"; }
printf 'secret\n' >"$tmp/secret"
rm "$blob" && ln -s "$tmp/secret" "$blob"
if "$driver" push "$evil_store" "$evil" >"$tmp/evil.log" 2>&1; then fail "pushed a blob that is a link"; fi
grep -q "a link or missing" "$tmp/evil.log" || fail "link refusal: $(tail -2 "$tmp/evil.log")"
[ "$(head_status)" = 404 ] || fail "the link's target reached the registry"
rm "$blob" && cp "$gguf" "$blob" && chmod u+w "$blob"
printf 'X' | dd of="$blob" bs=1 seek=1000 conv=notrunc status=none  # same size, other bytes
if "$driver" push "$evil_store" "$evil" >"$tmp/evil.log" 2>&1; then fail "pushed a blob that does not match its digest"; fi
grep -q "do not match digest" "$tmp/evil.log" || fail "mismatch refusal: $(tail -2 "$tmp/evil.log")"
[ "$(head_status)" = 404 ] || fail "a corrupt blob reached the registry"

echo "== delete + pull"
"$driver" rm "$store" "$name" || fail "rm"
[ ! -e "$store/blobs/sha256-$model_hex" ] || fail "rm left the model blob"
"$driver" pull "$store" "$name" >"$tmp/pull.log" || fail "pull"
for s in 'pulling manifest' "pulling ${model_hex:0:12}" 'verifying sha256 digest' 'writing manifest' 'success'; do
  grep -q "\"status\":\"$s\"" "$tmp/pull.log" || fail "pull did not report '$s'"
done
same_as_original "$manifest" pull

echo "== unknown model"
if "$driver" pull "$store" "127.0.0.1:$port/test/nope:latest" 2>"$tmp/err.log"; then fail "pull of a missing model succeeded"; fi
grep -q "pull model manifest: file does not exist" "$tmp/err.log" || fail "unexpected 404 message: $(cat "$tmp/err.log")"

echo "== a registry that refuses connections fails in seconds (default retry delays)"
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start=$(date +%s)
if "$driver" pull "$store" "127.0.0.1:$closed/test/stories:latest" 2>"$tmp/err.log"; then fail "pull from a closed port succeeded"; fi
[ $(($(date +%s) - start)) -le 5 ] || fail "a refused registry took $(($(date +%s) - start)) s to fail"
grep -qi "connect" "$tmp/err.log" || fail "unexpected refusal message: $(cat "$tmp/err.log")"

echo "== connections cut every 300000 bytes: resumed with Range"
coproc CUT { exec python3 "$here/registry_proxy.py" "$port" cut 300000; }
pids+=($CUT_PID)
read -r cut_port <&"${CUT[0]}"
"$driver" rm "$store" "$name"
cut_name=127.0.0.1:$cut_port/test/stories:latest
"$driver" pull "$store" "$cut_name" --retry-ms 10 >"$tmp/cut.log" 2>&1 || fail "pull through a cutting proxy: $(tail -3 "$tmp/cut.log")"
same_as_original "$store/manifests/127.0.0.1:$cut_port/test/stories/latest" "a cut pull"
kill "$CUT_PID"

echo "== killed pull, then resumed"
"$driver" rm "$store" "$cut_name"
[ ! -e "$store/blobs/sha256-$model_hex" ] || fail "rm left the model blob"
coproc STALL { exec python3 "$here/registry_proxy.py" "$port" stall 300000; }
pids+=($STALL_PID)
read -r stall_port <&"${STALL[0]}"
"$driver" pull "$store" "127.0.0.1:$stall_port/test/stories:latest" >"$tmp/stall.log" 2>&1 &
puller=$!
pids+=($puller)
partial=$store/blobs/.paddock-tmp-partial-sha256-$model_hex
for _ in $(seq 300); do
  [ -s "$partial" ] && break
  sleep 0.1
done
[ -s "$partial" ] || fail "no partial file appeared"
kill -9 "$puller"
wait "$puller" 2>/dev/null || true
[ ! -e "$store/blobs/sha256-$model_hex" ] || fail "a killed pull made the blob visible"
"$driver" pull "$store" "$name" >"$tmp/resume.log" || fail "resumed pull"
python3 - "$tmp/resume.log" "$model_hex" <<'PY' || fail "resumed pull started from 0"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
first = [e for e in events if e.get("digest") == "sha256:" + sys.argv[2]][0]
sys.exit(0 if first["completed"] > 0 else 1)
PY
same_as_original "$manifest" "a resumed pull"

echo "== corrupted blob on the registry"
"$driver" rm "$store" "$name"
data=$(find "$tmp/registry" -path "*/blobs/sha256/*/$model_hex/data")
[ -f "$data" ] || fail "registry blob file not found"
python3 -c "import sys; f=open(sys.argv[1],'r+b'); f.seek(1000); b=f.read(1); f.seek(1000); f.write(bytes([b[0]^0xff]))" "$data"
if "$driver" pull "$store" "$name" >/dev/null 2>"$tmp/corrupt.log"; then fail "pull of a corrupted blob succeeded"; fi
grep -q "digest mismatch" "$tmp/corrupt.log" || fail "unexpected corruption message: $(cat "$tmp/corrupt.log")"
[ ! -e "$store/blobs/sha256-$model_hex" ] || fail "corrupted blob became visible"
[ ! -e "$partial" ] || fail "corrupted partial left behind"
[ ! -e "$manifest" ] || fail "manifest written despite a corrupted blob"
echo "== hostile registry"
coproc HOSTILE { exec python3 "$here/registry_hostile.py"; }
pids+=($HOSTILE_PID)
read -r hostile_port <&"${HOSTILE[0]}"
hostile() {  # MODEL EXPECTED-MESSAGE
  if "$driver" pull "$tmp/hostile-store" "127.0.0.1:$hostile_port/test/$1:latest" --retry-ms 1 >/dev/null 2>"$tmp/h.log"; then
    fail "pull of hostile $1 succeeded"
  fi
  grep -q "$2" "$tmp/h.log" || fail "hostile $1: expected '$2', got: $(cat "$tmp/h.log")"
}
hostile loop "too many redirects"
hostile scheme "only http and https are allowed"
hostile traversal "digest"
hostile huge "size"
hostile long "larger than the 10 bytes the manifest says"
if find "$tmp/hostile-store" -path "*manifests*" -type f | grep -q .; then fail "a hostile pull wrote a manifest"; fi
if ls -A "$tmp/hostile-store/blobs" | grep -q .; then fail "a hostile pull left blob files: $(ls -A "$tmp/hostile-store/blobs")"; fi
echo "PASS"
