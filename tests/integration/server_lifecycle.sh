#!/usr/bin/env bash
# Work nobody waits for stops, the HTTP layer cannot be starved, shutdown has a deadline
# (issue 28). BASE is the server URL, SERVER_PID its pid, SERVER_LOG its log. Ends by
# stopping the server with SIGTERM.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
stalled_pid=
trap '[ -n "$stalled_pid" ] && kill "$stalled_pid" 2>/dev/null; rm -rf "$work"' EXIT
now_ms() { date +%s%3N; }
# Output the fixture model can never finish: only num_predict's bound ends it.
endless='"format":{"type":"array","items":{"type":"string","minLength":2000},"minItems":2000}'
# Waits up to $2 ms for a log line matching $1 that was not there before; prints the wait.
wait_log() {
  local start before
  start=$(now_ms)
  before=$3
  while [ "$(grep -c -- "$1" "$SERVER_LOG" || true)" -le "$before" ]; do
    [ $(($(now_ms) - start)) -lt "$2" ] || return 1
    sleep 0.02
  done
  echo $(($(now_ms) - start))
}

[ "$(curl -s "$BASE/health")" = '{"status":"ok"}' ] || fail "/health: $(curl -s "$BASE/health")"

# 1. num_predict unset, -1 or 0 ends at 10 x num_ctx with done_reason "length".
for n in '' ',"num_predict":-1' ',"num_predict":0'; do
  out=$(curl -s "$BASE/api/generate" \
    -d "{\"model\":\"stories\",\"prompt\":\"Once\",\"stream\":false,$endless,\"options\":{\"num_ctx\":64$n}}")
  python3 - "$out" <<'PY' || fail "num_predict bound ($n): $out"
import json, sys
j = json.loads(sys.argv[1])
assert j["done_reason"] == "length" and j["eval_count"] == 640, j
PY
done

# 2. A stream:false request whose client leaves stops within a second (logged as 499).
for route in generate chat; do
  if [ $route = generate ]; then body='"prompt":"Once"'; else body='"messages":[{"role":"user","content":"Once"}]'; fi
  before=$(grep -c "| 499 |.*POST *\/api\/$route" "$SERVER_LOG" || true)
  curl -s --max-time 1 "$BASE/api/$route" \
    -d "{\"model\":\"stories\",$body,\"stream\":false,$endless,\"options\":{\"num_ctx\":2048}}" >/dev/null || true
  waited=$(wait_log "| 499 |.*POST *\/api\/$route" 1000 "$before") ||
    fail "/api/$route: the abandoned request still ran a second after its client left"
  echo "abandoned /api/$route stopped ${waited} ms after its client left"
done

# 3. A registry that accepts connections and never answers.
stalled_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 - "$stalled_port" <<'PY' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
held = []
while True:
    c, _ = s.accept()
    held.append(c)
PY
stalled_pid=$!
for _ in $(seq 100); do
  python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])))' "$stalled_port" \
    2>/dev/null && break
  sleep 0.05
done
pull="{\"model\":\"127.0.0.1:$stalled_port/library/stalled:latest\",\"insecure\":true"
before=$(grep -c "| 499 |.*POST *\/api\/pull" "$SERVER_LOG" || true)
curl -s --max-time 1 "$BASE/api/pull" -d "$pull,\"stream\":false}" >/dev/null || true
waited=$(wait_log "| 499 |.*POST *\/api\/pull" 2000 "$before") ||
  fail "a pull from a stalled registry ran on after its client left"
echo "abandoned pull stopped ${waited} ms after its client left"

# 4. 100 idle connections (half a request line each) do not starve the server.
python3 - "$BASE" <<'PY' || fail "the server is starved by idle connections"
import socket, sys, time, urllib.request
host, port = sys.argv[1].split("//")[1].split(":")
idle = []
for _ in range(100):
    c = socket.create_connection((host, int(port)))
    c.sendall(b"GET /api/version HTTP/1.1\r\nHost: x\r\n")
    idle.append(c)
t0 = time.time()
with urllib.request.urlopen(sys.argv[1] + "/api/version", timeout=5) as r:
    assert r.status == 200
elapsed = time.time() - t0
print(f"/api/version answered in {elapsed * 1000:.0f} ms with 100 idle connections open")
assert elapsed < 1.0, elapsed
PY

# 5. SIGTERM with a runaway stream and a stalled pull running: the stream's last line says
# why it ended, and the server exits within 10 s.
curl -sN "$BASE/api/generate" -d "{\"model\":\"stories\",\"prompt\":\"Once\",$endless,\"options\":{\"num_ctx\":2048}}" \
  >"$work/stream" &
stream_pid=$!
curl -sN "$BASE/api/pull" -d "$pull}" >"$work/pull" &
pull_pid=$!
for _ in $(seq 100); do [ -s "$work/stream" ] && break; sleep 0.05; done
[ -s "$work/stream" ] || fail "the runaway stream did not start"
start=$(now_ms)
kill -TERM "$SERVER_PID"
while kill -0 "$SERVER_PID" 2>/dev/null; do
  [ $(($(now_ms) - start)) -lt 10000 ] || fail "the server still runs 10 s after SIGTERM"
  sleep 0.05
done
echo "server exited $(($(now_ms) - start)) ms after SIGTERM"
wait "$stream_pid" "$pull_pid" || true
tail -n 1 "$work/stream" | grep -F '{"error":"server is shutting down"}' >/dev/null ||
  fail "the runaway stream did not end with the shutdown error: $(tail -c 300 "$work/stream")"
echo "server_lifecycle: all checks passed"
