# Sourced by the integration scripts: start_registry DIR starts Debian's docker-registry on a
# free 127.0.0.1 port with its storage under DIR, waits until /v2/ answers, and sets
# REGISTRY_PORT and REGISTRY_PID. Returns 1 when docker-registry is not installed.
start_registry() {
  command -v docker-registry >/dev/null || return 1
  local dir=$1
  REGISTRY_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$dir"
  cat >"$dir/config.yml" <<YML
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $dir/registry
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$REGISTRY_PORT
YML
  docker-registry serve "$dir/config.yml" >"$dir/registry.log" 2>&1 &
  REGISTRY_PID=$!
  local url="http://127.0.0.1:$REGISTRY_PORT/v2/"
  for _ in $(seq 100); do
    python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1])" "$url" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "docker-registry did not start:" >&2
  tail -5 "$dir/registry.log" >&2
  return 2
}
