#!/usr/bin/env bash
# Hostile requests against the running server (issue 28): deep JSON, huge and mistyped bodies,
# a corrupt GGUF, absurd options, log forging. BASE is the server URL, SERVER_PID its pid,
# SERVER_LOG its log, PADDOCK_MODELS its store.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# post PATH FILE -> "STATUS BYTES" (the body is left in $work/out, the headers in $work/headers)
post() {
  curl -s -D "$work/headers" -o "$work/out" -w '%{http_code} %{size_download}' \
    -H 'Content-Type: application/json' --data-binary @"$2" "$BASE$1"
}
alive() { [ "$(curl -s -o /dev/null -w "%{http_code}" "$BASE/api/tags")" = 200 ] || fail "server died after $1"; }

# 1. JSON nested 50k levels, in each place that used to take the server down: a 400, and the
# server answers the next request.
python3 - "$work" <<'PY'
import sys
d = "[" * 50000 + "]" * 50000
user = '[{"role":"user","content":"x"}]'
bodies = {
    "generate_format": ("/api/generate", '{"model":"stories","prompt":"x","format":{"a":%s}}' % d),
    "generate_keep_alive": ("/api/generate", '{"model":"stories","keep_alive":%s}' % d),
    "create_parameters": ("/api/create", '{"model":"m","from":"stories","parameters":{"stop":%s}}' % d),
    "create_messages": ("/api/create", '{"model":"m","from":"stories","messages":%s}' % d),
    "v1_stop": ("/v1/chat/completions", '{"model":"stories","messages":%s,"stop":%s}' % (user, d)),
    "v1_tools": ("/v1/chat/completions", '{"model":"stories","messages":%s,"tools":%s}' % (user, d)),
    "v1_response_format": ("/v1/chat/completions",
        '{"model":"stories","messages":%s,"response_format":{"type":"json_schema","json_schema":{"schema":%s}}}' % (user, d)),
}
with open(sys.argv[1] + "/deep.list", "w") as index:
    for name, (path, body) in bodies.items():
        open(sys.argv[1] + "/" + name, "w").write(body)
        index.write(name + " " + path + "\n")
PY
while read -r name path; do
  read -r code _ <<<"$(post "$path" "$work/$name")"
  [ "$code" = 400 ] || fail "deep JSON $name: expected 400, got $code: $(head -c 300 "$work/out")"
  grep -q 'nested deeper than 512 levels' "$work/out" || fail "deep JSON $name: $(head -c 300 "$work/out")"
  alive "deep JSON $name"
done <"$work/deep.list"
grep -q '"type":"invalid_request_error"' "$work/out" || fail "a /v1 error keeps OpenAI's shape: $(cat "$work/out")"

# 2. A 30 MB invalid body is not echoed back.
python3 -c 'import sys; sys.stdout.write("{\"model\":\"" + "x" * (30 << 20))' >"$work/big"
read -r code size <<<"$(post /api/generate "$work/big")"
[ "$code" = 400 ] || fail "30 MB invalid body: expected 400, got $code"
[ "$size" -lt 1024 ] || fail "30 MB invalid body: the error is $size bytes"
rm -f "$work/big"

# 3. Wrong JSON types on /v1: a 400 in OpenAI's shape, no EXCEPTION_WHAT header.
printf '%s' '{"model":"stories","messages":[{"role":5,"content":"x"}]}' >"$work/typed"
read -r code _ <<<"$(post /v1/chat/completions "$work/typed")"
[ "$code" = 400 ] || fail "wrong type on /v1: expected 400, got $code: $(cat "$work/out")"
grep -q '"type":"invalid_request_error"' "$work/out" || fail "wrong type on /v1: $(cat "$work/out")"
if grep -qi 'exception_what' "$work/headers"; then fail "EXCEPTION_WHAT header: $(cat "$work/headers")"; fi

# 4. A corrupt GGUF at create is a 400 whose message names no store path.
printf 'GGUF\003\000\000\000' >"$work/bad.gguf"
head -c 24 /dev/zero | tr '\0' '\377' >>"$work/bad.gguf"
digest="sha256:$(sha256sum "$work/bad.gguf" | cut -d' ' -f1)"
code=$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"$work/bad.gguf" "$BASE/api/blobs/$digest")
[ "$code" = 201 ] || fail "blob upload: $code"
printf '{"model":"broken","files":{"m.gguf":"%s"},"stream":false}' "$digest" >"$work/create"
read -r code _ <<<"$(post /api/create "$work/create")"
[ "$code" = 400 ] || fail "corrupt GGUF at create: expected 400, got $code: $(cat "$work/out")"
if grep -qF "${PADDOCK_MODELS:?}" "$work/out"; then fail "store path in an error: $(cat "$work/out")"; fi

# 5. num_thread 2147483647 runs, with at most the machine's CPUs.
printf '%s' '{"model":"stories","prompt":"Once","stream":false,"options":{"num_predict":2,"num_thread":2147483647}}' >"$work/threads"
read -r code _ <<<"$(post /api/generate "$work/threads")"
[ "$code" = 200 ] || fail "num_thread 2147483647: expected 200, got $code: $(cat "$work/out")"
threads=$(python3 - "${SERVER_PID:?}" <<'PY'
import os, sys
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        stat = open(f"/proc/{pid}/stat").read()
        args = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    if stat.rsplit(")", 1)[1].split()[1] == sys.argv[1] and b"--threads" in args:
        print(int(args[args.index(b"--threads") + 1]))
PY
)
cpus=$(getconf _NPROCESSORS_ONLN)
[ -n "$threads" ] || fail "no runner with --threads found"
for t in $threads; do [ "$t" -le "$cpus" ] || fail "runner started with $t threads on $cpus CPUs"; done

# 6. Option keys cannot forge log lines, and unknown keys give one warning per request.
python3 - "$work/forge" <<'PY'
import json, sys
opts = {"x\ntime=2026-01-01T00:00:00 level=ERROR msg=\"forged-line\"": 1}
opts.update({"unknown_%d" % i: i for i in range(2000)})
body = {"model": "stories", "prompt": "Once", "stream": False, "options": dict(opts, num_predict=1)}
open(sys.argv[1], "w").write(json.dumps(body))
PY
before=$(grep -c 'invalid options provided' "${SERVER_LOG:?}" || true)
read -r code _ <<<"$(post /api/generate "$work/forge")"
[ "$code" = 200 ] || fail "unknown options: expected 200, got $code: $(cat "$work/out")"
after=$(grep -c 'invalid options provided' "$SERVER_LOG" || true)
[ $((after - before)) = 1 ] || fail "expected one warning for 2001 unknown options, got $((after - before))"
if grep -q '^time=2026-01-01T00:00:00 level=ERROR' "$SERVER_LOG"; then fail "a request forged a log line"; fi
alive "all checks"
echo "server_hardening: all checks passed"
