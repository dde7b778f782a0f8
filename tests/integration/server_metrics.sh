#!/usr/bin/env bash
# GET /metrics of the real server: every scrape passes prom_check.py (the exposition format,
# strictly), and a generate request moves the request and token counters by what it did.
# BASE is the server URL.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
check="$here/prom_check.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 "$check" --self-test >/dev/null || fail "prom_check.py accepts broken input"
# scrape FILE: GET /metrics into FILE, checked.
scrape() {
  local headers="$work/headers"
  code=$(curl -s -D "$headers" -o "$1" -w '%{http_code}' "$BASE/metrics")
  [ "$code" = 200 ] || fail "GET /metrics: $code: $(cat "$1")"
  grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$headers" ||
    fail "content type: $(grep -i '^content-type' "$headers")"
  python3 "$check" "$1" || { cat "$1" >&2; fail "/metrics is not valid exposition format"; }
}
value() { python3 "$check" "$1" --get "$2"; }

generate_ok='paddock_http_requests_total{route="/api/generate",status="200"}'
tokens='paddock_generated_tokens_total{model="stories:latest"}'
scrape "$work/before"
# A raw path and an unknown one are labelled by pattern and "other", never by the path.
curl -s -o /dev/null "$BASE/v1/models/stories:latest"
curl -s -o /dev/null "$BASE/no/such/path"
curl -s -o /dev/null "$BASE/api/tags"
out=$(curl -s -X POST -H 'Content-Type: application/json' "$BASE/api/generate" \
  --data-binary '{"model":"stories","prompt":"Once upon a time","stream":false,"options":{"num_predict":8,"temperature":0}}')
eval_count=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["eval_count"])' "$out") ||
  fail "generate: $out"
[ "$eval_count" -gt 0 ] || fail "generate produced no tokens: $out"
scrape "$work/after"

b=$(value "$work/before" "$generate_ok")
a=$(value "$work/after" "$generate_ok")
[ "$a" -eq $((b + 1)) ] || fail "$generate_ok: $b before, $a after one generate"
b=$(value "$work/before" "$tokens")
a=$(value "$work/after" "$tokens")
[ "$a" -eq $((b + eval_count)) ] || fail "$tokens: $b before, $a after a generate of $eval_count tokens"
[ "$(value "$work/after" 'paddock_model_loaded{model="stories:latest"}')" = 1 ] || fail "stories not reported loaded"
[ "$(value "$work/after" 'paddock_model_memory_bytes{model="stories:latest"}')" -gt 0 ] || fail "no model memory"
[ "$(value "$work/after" 'paddock_model_loads_total{model="stories:latest"}')" -ge 1 ] || fail "no model load counted"
[ "$(value "$work/after" 'paddock_time_to_first_token_seconds_count{model="stories:latest"}')" -ge 1 ] ||
  fail "no time to first token observed"
[ "$(value "$work/after" 'paddock_http_requests_total{route="/v1/models/:model",status="200"}')" -ge 1 ] ||
  fail "no /v1/models/:model request"
[ "$(value "$work/after" 'paddock_http_requests_total{route="/api/tags",status="200"}')" -ge 1 ] ||
  fail "no /api/tags request"
[ "$(value "$work/after" 'paddock_http_requests_total{route="other",status="404"}')" -ge 1 ] ||
  fail "no route=other request"
if grep -q 'stories:latest",status=\|no/such' "$work/after"; then fail "a raw path is a route label"; fi
echo "metrics: ok"
