#!/usr/bin/env bash
# curl checks of the store routes and the error forms; BASE is the server URL.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect STATUS METHOD PATH [BODY] -> prints the body
expect() {
  local want=$1 method=$2 path=$3 body=${4:-}
  local out code
  out=$(mktemp)
  if [ -n "$body" ]; then
    code=$(curl -s -o "$out" -w '%{http_code}' -X "$method" -H 'Content-Type: application/json' --data-binary "$body" "$BASE$path")
  elif [ "$method" = POST ]; then
    # An empty body still says Content-Length: 0, as every HTTP client library does.
    code=$(curl -s -o "$out" -w '%{http_code}' -X POST -H 'Content-Length: 0' "$BASE$path")
  elif [ "$method" = HEAD ]; then
    code=$(curl -s -o "$out" -w '%{http_code}' -I "$BASE$path")  # -X HEAD would wait for a body
  else
    code=$(curl -s -o "$out" -w '%{http_code}' -X "$method" "$BASE$path")
  fi
  [ "$code" = "$want" ] || fail "$method $path: expected $want, got $code: $(cat "$out")"
  cat "$out"
  rm -f "$out"
}
has() { grep -q -- "$2" <<<"$1" || fail "expected '$2' in: $1"; }

has "$(expect 200 GET /)" "Ollama is running"
[ "$(curl -s -o /dev/null -w '%{http_code}' -I "$BASE/")" = 200 ] || fail "HEAD /"
has "$(expect 200 GET /api/version)" '"version"'
tags=$(expect 200 GET /api/tags)
has "$tags" '"name":"stories:latest"'
has "$tags" '"name":"stories:chat"'
has "$tags" '"name":"example.com/alice/stories:v1"'
show=$(expect 200 POST /api/show '{"model":"stories"}')
has "$show" '"modelfile"'
has "$show" '"llama.context_length":2048'
has "$show" '"tokenizer.ggml.tokens":\[\]'
has "$(expect 200 POST /api/show '{"model":"stories","verbose":true}')" '"tokenizer.ggml.tokens":\["<unk>"'
has "$(expect 404 POST /api/show '{"model":"nope"}')" "\"model 'nope' not found\""
has "$(expect 400 POST /api/show '')" "missing request body"
has "$(expect 400 POST /api/generate '{"model":')" '"error"'
# A missing model is worded per route as Ollama words it.
has "$(expect 404 POST /api/generate '{"model":"nope","prompt":"x"}')" "\"model 'nope' not found\""
has "$(expect 404 POST /api/embed '{"model":"nope","input":"x"}')" 'model \\"nope\\" not found, try pulling it first'
has "$(expect 404 POST /api/copy '{"source":"nope","destination":"x"}')" 'model \\"nope\\" not found"'
has "$(expect 404 DELETE /api/delete '{"model":"nope"}')" "\"model 'nope' not found\""
expect 405 GET /api/generate >/dev/null
expect 404 GET /api/nothing >/dev/null
expect 200 POST /api/copy '{"source":"stories","destination":"copied:v2"}' >/dev/null
has "$(expect 200 GET /api/tags)" '"copied:v2"'
expect 200 DELETE /api/delete '{"model":"copied:v2"}' >/dev/null
expect 404 DELETE /api/delete '{"model":"copied:v2"}' >/dev/null
# Blobs: upload, HEAD, then create a model from it over the API.
blob=$(mktemp)
printf 'not a gguf' >"$blob"
digest="sha256:$(sha256sum "$blob" | cut -d' ' -f1)"
expect 404 HEAD "/api/blobs/$digest" >/dev/null
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @"$blob" "$BASE/api/blobs/$digest")
[ "$code" = 201 ] || fail "blob upload: $code"
expect 200 HEAD "/api/blobs/$digest" >/dev/null
expect 400 HEAD /api/blobs/sha256:zz >/dev/null
has "$(expect 400 POST /api/blobs/sha256:$(printf '0%.0s' $(seq 64)) 'x')" "mismatch"
rm -f "$blob"
created=$(expect 200 POST /api/create '{"model":"mine","from":"stories","system":"You are terse."}')
has "$created" '"status":"success"'
has "$(expect 200 POST /api/show '{"model":"mine"}')" "You are terse."
# A registry host that does not resolve fails at once with the reason (pull/push round trips: clients.mjs).
has "$(expect 500 POST /api/pull '{"model":"nonexistent.invalid/library/x","stream":false}')" "resolve host"
has "$(expect 200 GET /api/ps)" '"models"'
# CORS and the Host check.
curl -s -D - -o /dev/null -H 'Origin: http://localhost:3000' "$BASE/api/version" | grep -qi 'access-control-allow-origin: http://localhost:3000' || fail "CORS header"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: evil.example' "$BASE/")" = 403 ] || fail "host check"
# OpenAI model routes.
has "$(expect 200 GET /v1/models)" '"id":"stories:latest"'
has "$(expect 200 GET /v1/models/stories:latest)" '"owned_by":"library"'
v1_missing=$(expect 404 GET /v1/models/nope)
has "$v1_missing" 'not_found_error'
has "$v1_missing" "\"model 'nope' not found\""

# Generation. Greedy raw text must be exactly llama.cpp's golden continuation.
golden=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["prompt"] == "Once upon a time": print(d["text"], end="")' "${PADDOCK_FIXTURES:?}/golden/stories260K.logits.jsonl")
gen=$(expect 200 POST /api/generate '{"model":"stories","prompt":"Once upon a time","raw":true,"stream":false,"options":{"temperature":0,"num_predict":32}}')
[ "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["response"], end="")' "$gen")" = "$golden" ] || fail "greedy text differs from golden: $gen"
has "$gen" '"done":true'
has "$gen" '"eval_count":32'
stream=$(curl -s -d '{"model":"stories","prompt":"Once","options":{"num_predict":4}}' "$BASE/api/generate")
[ "$(tail -n1 <<<"$stream" | grep -c '"done":true')" = 1 ] || fail "stream must end with done:true"
sse=$(curl -s -d '{"model":"stories","stream":true,"max_tokens":4,"messages":[{"role":"user","content":"hi"}]}' "$BASE/v1/chat/completions")
has "$sse" 'data: \[DONE\]'
# The same chat twice counts the whole prompt both times; the OpenAI route also reports the
# part the KV cache served the second time.
chat='{"model":"stories:chat","stream":false,"messages":[{"role":"user","content":"Tell me a story"}],"options":{"num_predict":2}}'
count() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])["prompt_eval_count"])' "$1"; }
first_chat=$(expect 200 POST /api/chat "$chat")
first=$(count "$first_chat")
! grep -q '"truncated"' <<<"$first_chat" || fail "a chat that fits says it was truncated: $first_chat"
second=$(count "$(expect 200 POST /api/chat "$chat")")
[ "$first" = "$second" ] && [ "$first" -gt 1 ] || fail "prompt_eval_count of the same chat: $first then $second"
usage=$(expect 200 POST /v1/chat/completions '{"model":"stories:chat","max_tokens":2,"messages":[{"role":"user","content":"Tell me a story"}]}')
python3 -c '
import json, sys
u = json.loads(sys.argv[1])["usage"]
assert u["prompt_tokens"] == int(sys.argv[2]), u
assert u["prompt_tokens_details"]["cached_tokens"] == u["prompt_tokens"] - 1, u' "$usage" "$first" || fail "usage: $usage"
# A conversation longer than num_ctx drops whole messages from the front, keeping the system
# prompt and the last message, and says so; truncate:false makes it a 400 naming both lengths.
long_chat() {  # $1: the request's truncate (true|false)
  python3 -c '
import json, sys
turn = "Lily and Tom went to the park and played with a big red ball all day long. "
msgs = [{"role": "system", "content": "You are terse."}]
for i in range(4):
    msgs += [{"role": "user", "content": turn * 2}, {"role": "assistant", "content": turn * 2}]
msgs.append({"role": "user", "content": "Tell me a story"})
print(json.dumps({"model": "stories:chat", "stream": False, "truncate": sys.argv[1] == "true",
                  "messages": msgs, "options": {"num_ctx": 64, "num_predict": 2}}))' "$1"
}
headers=$(mktemp)
truncated=$(curl -s -D "$headers" -H 'Content-Type: application/json' --data-binary "$(long_chat true)" "$BASE/api/chat")
python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["truncated"] is True and r["prompt_tokens_dropped"] > 0, r
assert r["prompt_eval_count"] <= 64, r' "$truncated" || fail "truncated chat: $truncated"
dropped=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["prompt_tokens_dropped"])' "$truncated")
grep -qi "^x-paddock-truncated: $dropped" "$headers" || fail "X-Paddock-Truncated: $(cat "$headers")"
rm -f "$headers"
too_long=$(expect 400 POST /api/chat "$(long_chat false)")
has "$too_long" 'the input length ([0-9]* tokens) exceeds the context length (64 tokens)'
long_prompt=$(python3 -c 'print("Lily and Tom went to the park. " * 20)')
has "$(expect 400 POST /api/generate "{\"model\":\"stories\",\"prompt\":\"$long_prompt\",\"truncate\":false,\"options\":{\"num_ctx\":64}}")" \
  'exceeds the context length (64 tokens)'
has "$(expect 400 POST /api/embed "{\"model\":\"stories\",\"input\":\"$long_prompt\",\"truncate\":false,\"options\":{\"num_ctx\":64}}")" \
  'the input length ([0-9]* tokens) exceeds the context length (64 tokens)'
echo "server_curl: all checks passed"
