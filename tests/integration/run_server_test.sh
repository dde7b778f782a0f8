#!/usr/bin/env bash
# Starts `paddock serve` on a free port over a temp copy of fixtures/ollama-store, runs one
# suite against it (curl | hardening | metrics | lifecycle: server_<suite>.sh, lifecycle ends
# by stopping the server itself; clients | embeddings | anthropic | responses:
# <suite>.mjs with the npm clients; BASE, SERVER_PID and SERVER_LOG exported),
# stops the server. The clients suite also gets a local docker-registry (REGISTRY=host:port)
# for pull and push when it is installed. Exit 77 = skipped (said loudly).
set -euo pipefail
suite=$1
here=$(cd "$(dirname "$0")" && pwd)
: "${PADDOCK_BIN:?PADDOCK_BIN must point at the paddock binary}"
store_src="${PADDOCK_FIXTURES:-$here/../../../shared/fixtures}/ollama-store"
if [ ! -d "$store_src/manifests" ]; then
  echo "SKIPPED: fixture store $store_src not found" >&2
  exit 77
fi
if { [ "$suite" = clients ] || [ "$suite" = embeddings ]; } && [ ! -d "$here/node_modules/ollama" ]; then
  echo "SKIPPED: npm clients not installed (run npm install in tests/integration)" >&2
  exit 77
fi
if [ "$suite" = anthropic ] && [ ! -d "$here/node_modules/@anthropic-ai/sdk" ]; then
  echo "SKIPPED: @anthropic-ai/sdk not installed (run npm install in tests/integration)" >&2
  exit 77
fi
if [ "$suite" = responses ] && [ ! -d "$here/node_modules/openai" ]; then
  echo "SKIPPED: openai not installed (run npm install in tests/integration)" >&2
  exit 77
fi

work=$(mktemp -d)
cp -r "$store_src" "$work/models"
chmod -R u+w "$work/models"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export PADDOCK_HOST="127.0.0.1:$port" PADDOCK_MODELS="$work/models" PADDOCK_KEEP_ALIVE=5m
"$PADDOCK_BIN" serve >"$work/server.log" 2>&1 &
server=$!
REGISTRY_PID=
if [ "$suite" = clients ]; then
  source "$here/start_registry.sh"
  if start_registry "$work/reg"; then export REGISTRY="127.0.0.1:$REGISTRY_PORT"; else echo "NOTE: no docker-registry: pull/push checks skipped" >&2; fi
fi
cleanup() {
  [ -n "$REGISTRY_PID" ] && kill "$REGISTRY_PID" 2>/dev/null
  kill -TERM "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 100); do
  curl -fs "http://127.0.0.1:$port/" >/dev/null 2>&1 && break
  sleep 0.1
done
export BASE="http://127.0.0.1:$port" SERVER_PID=$server SERVER_LOG="$work/server.log"
if [ "$suite" = curl ] || [ "$suite" = hardening ] || [ "$suite" = metrics ] || [ "$suite" = lifecycle ]; then
  bash "$here/server_$suite.sh"
else
  node "$here/$suite.mjs"
fi
status=$?
[ "$suite" = lifecycle ] && exit $status
# Graceful shutdown on SIGTERM: the server exits by itself.
kill -TERM "$server"
for _ in $(seq 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$server" 2>/dev/null; then echo "FAIL: server did not stop on SIGTERM" >&2; exit 1; fi
logged='GET */api/tags"$'
[ "$suite" = anthropic ] && logged='POST */v1/messages"$'
[ "$suite" = responses ] && logged='POST */v1/responses"$'
grep -q "$logged" "$work/server.log" || { echo "FAIL: no request log line" >&2; cat "$work/server.log"; exit 1; }
exit $status
