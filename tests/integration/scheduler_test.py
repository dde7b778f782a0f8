#!/usr/bin/env python3
"""Runner processes and the scheduler, end to end, against the real `paddock serve`:
- 32 concurrent streaming clients across two models for PADDOCK_SOAK_SECONDS (default 60):
  every response completes and is well-formed NDJSON;
- OLLAMA_MAX_QUEUE: with the queue full, a request gets 503 and Ollama's "server busy" text;
- `paddock stop` answers at once while both parallel slots stream; the model unloads when
  they end;
- kill -9 of a runner mid-stream fails that request only, and the next request succeeds;
- kill -9 of the server leaves no runner process behind.
Usage: scheduler_test.py PADDOCK_BIN (env PADDOCK_FIXTURES). Exit 77 = skipped."""
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

BIN = sys.argv[1]
FIX = os.environ.get("PADDOCK_FIXTURES", "")
STORE = os.path.join(FIX, "ollama-store")
ZOO = os.path.join(FIX, "models", "tiny-zoo-q4_0.gguf")
SOAK = float(os.environ.get("PADDOCK_SOAK_SECONDS", "60"))


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, work, **env):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        e = dict(os.environ, PADDOCK_HOST=f"127.0.0.1:{self.port}", PADDOCK_MODELS=os.path.join(work, "models"))
        e.update({k: str(v) for k, v in env.items()})
        self.log = open(os.path.join(work, f"server-{self.port}.log"), "w")
        self.proc = subprocess.Popen([BIN, "serve"], env=e, stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(100):
            try:
                urllib.request.urlopen(self.base + "/", timeout=1)
                return
            except OSError:
                time.sleep(0.1)
        fail("server did not start")

    def post(self, path, body, timeout=120):
        req = urllib.request.Request(self.base + path, data=json.dumps(body).encode(), method="POST")
        return urllib.request.urlopen(req, timeout=timeout)

    def runners(self):
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


def stream_generate(server, model, prompt, num_predict, errors):
    """One streaming /api/generate; appends a message to errors unless it completes well-formed."""
    try:
        with server.post("/api/generate", {"model": model, "prompt": prompt, "raw": True,
                                            "options": {"num_predict": num_predict}}) as r:
            lines = [json.loads(line) for line in r if line.strip()]
    except (OSError, ValueError) as e:
        errors.append(f"{model}: {e}")
        return
    if not lines or not lines[-1].get("done") or any("error" in l for l in lines):
        errors.append(f"{model}: incomplete or failed stream: {lines[-1:]}")
    elif lines[-1].get("eval_count", 0) < 1:
        errors.append(f"{model}: no tokens")


def add_zoo_model(server):
    """Creates `zoo` from a second GGUF through the blob and create APIs (a second runner)."""
    data = open(ZOO, "rb").read()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    urllib.request.urlopen(urllib.request.Request(server.base + "/api/blobs/" + digest, data=data, method="POST"))
    r = server.post("/api/create", {"model": "zoo", "files": {"zoo.gguf": digest}, "stream": False})
    if json.load(r).get("status") != "success":
        fail("create zoo")


def soak(server):
    print(f"== 32 streaming clients across two models for {SOAK:.0f} s")
    errors, done = [], [0]
    lock = threading.Lock()
    deadline = time.time() + SOAK

    def client(i):
        model = "stories" if i % 2 == 0 else "zoo"
        while time.time() < deadline:
            local = []
            stream_generate(server, model, "Once upon a time", 16, local)
            with lock:
                errors.extend(local)
                done[0] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        fail(f"{len(errors)} of {done[0]} streams failed, e.g. {errors[:3]}")
    ps = json.load(urllib.request.urlopen(server.base + "/api/ps"))
    names = sorted(m["name"] for m in ps["models"])
    if names != ["stories:latest", "zoo:latest"]:
        fail(f"/api/ps after the soak: {names}")
    print(f"   {done[0]} streams, all complete")


def queue_full(work):
    print("== a full queue answers 503")
    server = Server(work, PADDOCK_MAX_QUEUE=1, PADDOCK_NUM_PARALLEL=1)
    try:
        statuses, lock = [], threading.Lock()

        def one():
            try:
                with server.post("/api/generate", {"model": "stories", "prompt": "Once", "raw": True,
                                                    "stream": False, "options": {"num_predict": 300}}) as r:
                    code = r.status
            except urllib.error.HTTPError as e:
                body = e.read().decode()
                code = e.code
                if code == 503 and "server busy, please try again.  maximum pending requests exceeded" not in body:
                    fail("503 without Ollama's text: " + body)
            with lock:
                statuses.append(code)

        threads = [threading.Thread(target=one) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if 503 not in statuses or 200 not in statuses:
            fail(f"expected some 200s and some 503s, got {statuses}")
        print(f"   statuses: {sorted(statuses)}")
    finally:
        server.stop()


def open_stream(server, body):
    """A streaming POST /api/generate on a raw socket, returned once its first token arrived."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
    data = json.dumps(body).encode()
    sock.sendall(b"POST /api/generate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(data) + data)
    got = b""
    while b'"response"' not in got:
        chunk = sock.recv(4096)
        if not chunk:
            fail("stream closed before its first token: " + got.decode(errors="replace"))
        got += chunk
    return sock


def stop_while_streaming(server):
    print("== paddock stop returns at once while both parallel slots stream")
    body = {"model": "stories", "prompt": "Once", "raw": True, "options": {"num_predict": 100000}}
    streams = [open_stream(server, body) for _ in range(2)]
    env = dict(os.environ, PADDOCK_HOST=f"127.0.0.1:{server.port}")
    t0 = time.time()
    try:
        subprocess.run([BIN, "stop", "stories"], env=env, check=True, capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        fail("paddock stop waited for the streaming requests (no answer in 30 s)")
    took = time.time() - t0
    if took >= 1:
        fail(f"paddock stop took {took:.1f} s while both slots streamed")
    ps = json.load(urllib.request.urlopen(server.base + "/api/ps"))
    if not any(m["name"] == "stories:latest" for m in ps["models"]):
        fail("stories unloaded under its running requests")
    for sock in streams:  # the clients leave: their requests end
        sock.shutdown(socket.SHUT_RDWR)
        sock.close()
    for _ in range(100):
        ps = json.load(urllib.request.urlopen(server.base + "/api/ps"))
        if not any(m["name"] == "stories:latest" for m in ps["models"]):
            print(f"   stop took {took:.2f} s; unloaded when the streams ended")
            return
        time.sleep(0.1)
    fail(f"stories still loaded after its requests ended: {ps}")


def runner_crash(server):
    print("== kill -9 of a runner mid-stream fails that request only")
    stream_generate(server, "stories", "Once", 4, [])  # loaded
    before = server.runners()
    if not before:
        fail("no runner child process")
    result = {}

    def long_stream():
        try:
            with server.post("/api/generate", {"model": "stories", "prompt": "Once", "raw": True,
                                                "options": {"num_predict": 100000, "num_ctx": 2048}}) as r:
                result["lines"] = [json.loads(l) for l in r if l.strip()]
        except (OSError, ValueError) as e:
            result["error"] = str(e)

    t = threading.Thread(target=long_stream)
    t.start()
    time.sleep(0.5)
    for pid in server.runners():
        os.kill(pid, signal.SIGKILL)
    t.join(60)
    lines = result.get("lines", [])
    if not any("error" in l for l in lines) and "error" not in result:
        fail(f"the killed stream did not report an error: {lines[-1:]}")
    errors = []
    stream_generate(server, "stories", "Once upon a time", 8, errors)
    if errors:
        fail("request after the runner crash: " + errors[0])


def server_crash(server):
    print("== kill -9 of the server leaves no runner behind")
    children = server.runners()
    if not children:
        fail("no runner to orphan")
    server.proc.kill()
    server.proc.wait()
    for _ in range(50):
        alive = [p for p in children if os.path.exists(f"/proc/{p}") and
                 open(f"/proc/{p}/stat").read().split(")")[1].split()[0] != "Z"]
        if not alive:
            return
        time.sleep(0.1)
    for p in alive:
        os.kill(p, signal.SIGKILL)
    fail(f"runners {alive} outlived the server")


def main():
    if not os.path.isdir(os.path.join(STORE, "manifests")) or not os.path.isfile(ZOO):
        print(f"SKIPPED: fixtures not found under {FIX!r}")
        return 77
    work = tempfile.mkdtemp()
    try:
        shutil.copytree(STORE, os.path.join(work, "models"))
        server = Server(work, PADDOCK_NUM_PARALLEL=2, PADDOCK_MAX_LOADED_MODELS=2)
        try:
            add_zoo_model(server)
            soak(server)
            stop_while_streaming(server)
            runner_crash(server)
            server_crash(server)
        finally:
            server.stop()
        queue_full(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("scheduler: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
