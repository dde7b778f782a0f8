#!/usr/bin/env python3
"""Integration tests of the paddock CLI as an HTTP client.

  cli_test.py fake PADDOCK_BIN   canned Ollama API server written here (no fixtures needed)
  cli_test.py real PADDOCK_BIN   `paddock serve` over a temporary copy of fixtures/ollama-store

Each check prints what it ran; the first failure exits 1. Exit 77 = skipped (no fixtures).
"""
import http.server
import json
import os
import pty
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import termios
import threading
import time
import urllib.error
import urllib.request

BIN = ""
FAILURES = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(args, env, stdin=None, timeout=60):
    p = subprocess.run([BIN] + args, env=env, input=stdin, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what + ("" if cond else "\n     " + detail.replace("\n", "\n     ")))
    if not cond:
        FAILURES.append(what)


def line_editor_reading(fd):
    """Whether the terminal has left canonical mode, i.e. the line editor is reading keys. libedit
    prints the prompt a moment before it switches the terminal over; a Ctrl+D typed in that
    moment is taken by the kernel's line discipline as end-of-file, which reaches libedit as a
    NUL byte, and the Ctrl+D is lost (a typing person cannot hit that window, a test can)."""
    try:
        return not (termios.tcgetattr(fd)[3] & termios.ICANON)
    except termios.error:
        return True


# Ollama's hint after an empty `>>> ` (grey, the cursor moved back over it).
PLACEHOLDER = b">>> \x1b[38;5;245mSend a message (/? for help)\x1b[0m\r"


def drive_pty(args, env, inputs, timeout=60, typeahead=None, final_lflag=None):
    """Runs the binary on a pseudo-terminal, sending each input once the prompt shows and the
    line editor reads keys; `typeahead` is typed before the prompt, once the load spinner shows.
    The terminal's local modes once the process is gone are appended to `final_lflag`."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(BIN, [BIN] + args, env)
    out = b""
    deadline = time.time() + timeout
    pending = list(inputs)

    def read_some(wait):
        nonlocal out
        r, _, _ = select.select([fd], [], [], wait)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return False
            if not data:
                return False
            out += data
        return True

    alive = True
    while alive and time.time() < deadline:
        if typeahead is not None and out and b">>>" not in out:
            os.write(fd, typeahead.encode())
            out += b"<<typed ahead>>"
            typeahead = None
        shown = out.replace(PLACEHOLDER, b"").rstrip()
        if pending and (shown.endswith(b">>>") or shown.endswith(b"...")) and line_editor_reading(fd):
            item = pending.pop(0)
            if isinstance(item, tuple):  # (text, signal, marker): the signal once the marker shows
                os.write(fd, item[0].encode())
                start = len(out)
                while item[2].encode() not in out[start:] and time.time() < deadline and read_some(0.2):
                    pass
                os.kill(pid, item[1])
            else:
                os.write(fd, item.encode())
            out += b"\n<<sent>>"
        alive = read_some(0.2)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _, status = os.waitpid(pid, 0)
    if final_lflag is not None:
        final_lflag.append(termios.tcgetattr(fd)[3])
    os.close(fd)
    return out.decode("utf-8", "replace"), status


# ---------------------------------------------------------------------------- fake server

MANIFEST_DIGEST = "a80c4f17acd55265feec47e68cbc0d9cda6f7a1c2ba2e2e4b1a1f0c1d2e3f4a5"


class FakeOllama(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    requests = []
    pulled = False  # "pulled" exists only after a pull
    slow_answer = threading.Event()

    def log_message(self, *a):
        pass

    def send_json(self, code, obj):
        body = b"" if obj is None else json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def stream(self, objs, delay=0.0):
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for o in objs:
                line = (json.dumps(o) + "\n").encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
                time.sleep(delay)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            FakeOllama.requests.append(("CANCELLED", self.path, None))

    def body(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw

    def do_HEAD(self):
        FakeOllama.requests.append(("HEAD", self.path, None))
        self.send_response(200 if self.path == "/" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        FakeOllama.requests.append(("GET", self.path, None))
        now = time.time()
        if self.path == "/api/tags":
            self.send_json(200, {"models": [
                {"name": "stories:latest", "model": "stories:latest", "size": 4_661_224_676, "digest": MANIFEST_DIGEST,
                 "modified_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 2 * 3600 - 60)),
                 "details": {"family": "llama"}},
                {"name": "other:v1", "model": "other:v1", "size": 1500, "digest": "b" * 64,
                 "modified_at": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(now - 4 * 60 - 5)),
                 "details": {}}]})
        elif self.path == "/api/ps":
            self.send_json(200, {"models": [
                {"name": "stories:latest", "model": "stories:latest", "size": 100, "size_vram": 0,
                 "digest": MANIFEST_DIGEST, "context_length": 4096,
                 "expires_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 4 * 60 + 30))}]})
        else:
            self.send_json(404, {"error": "404 page not found"})

    def do_DELETE(self):
        b = self.body()
        FakeOllama.requests.append(("DELETE", self.path, b))
        if b.get("model") == "missing":
            self.send_json(404, {"error": "model 'missing' not found"})
        else:
            self.send_json(200, None)

    def do_POST(self):
        b = self.body()
        FakeOllama.requests.append(("POST", self.path, b))
        model = b.get("model") if isinstance(b, dict) else None
        final = {"done": True, "done_reason": "stop", "total_duration": 2_500_000_000, "load_duration": 1_000_000,
                 "prompt_eval_count": 10, "prompt_eval_duration": 500_000_000, "eval_count": 20,
                 "eval_duration": 1_000_000_000}
        if self.path == "/api/show":
            if model in ("stories", "stories:latest", "slowload") or (model == "pulled" and FakeOllama.pulled):
                self.send_json(200, {"license": "MIT License\nline two\nline three", "parameters": "stop \"<s>\"",
                                     "template": "{{ .Prompt }}", "system": "", "modelfile": "FROM stories\n",
                                     "details": {"family": "llama", "parameter_size": "260K",
                                                 "quantization_level": "F32"},
                                     "model_info": {"general.architecture": "llama", "llama.context_length": 128,
                                                    "llama.embedding_length": 64},
                                     "capabilities": ["completion"]})
            else:
                self.send_json(404, {"error": "model '%s' not found" % model})
        elif self.path == "/api/pull":
            if model == "pulled":
                FakeOllama.pulled = True
                self.stream([{"status": "pulling manifest"},
                             {"status": "pulling 8eeb52dfb3bb", "digest": "sha256:8eeb52dfb3bb", "total": 1000,
                              "completed": 500},
                             {"status": "pulling 8eeb52dfb3bb", "digest": "sha256:8eeb52dfb3bb", "total": 1000,
                              "completed": 1000},
                             {"status": "verifying sha256 digest"}, {"status": "writing manifest"},
                             {"status": "success"}])
            else:
                self.stream([{"status": "pulling manifest"},
                             {"error": "pull model manifest: file does not exist"}])
        elif self.path == "/api/generate":
            if model == "missing":
                self.send_json(404, {"error": "model 'missing' not found"})
            elif "prompt" not in b:
                self.send_json(200, {"model": model, "done": True, "done_reason": "unload"})
            else:
                words = ["Once", " upon", " a", " time", " echo:", " " + b["prompt"].replace("\n", "|")]
                self.stream([{"model": model, "response": w, "done": False} for w in words] +
                            [dict(final, model=model, response="")])
        elif self.path == "/api/chat":
            msgs = b.get("messages", [])
            if not msgs:
                if model == "slowload":  # keys typed while a model loads are the test
                    time.sleep(2)
                self.stream([{"model": model, "message": {"role": "assistant", "content": ""}, "done": True,
                              "done_reason": "load"}])
                return
            last = msgs[-1]["content"]
            if last == "slow":
                self.stream([{"model": model, "message": {"role": "assistant", "content": " tick"}, "done": False}
                             for _ in range(200)], delay=0.1)
                return
            reply = "turns=%d last=%s" % (len([m for m in msgs if m["role"] == "user"]), last.replace("\n", "|"))
            self.stream([{"model": model, "message": {"role": "assistant", "content": reply}, "done": False},
                         dict(final, model=model, message={"role": "assistant", "content": ""})])
        elif self.path == "/api/copy":
            if b.get("source") == "missing":
                self.send_json(404, {"error": 'model "missing" not found'})
            else:
                self.send_json(200, None)
        elif self.path == "/api/create":
            self.send_json(200, {"status": "success"})
        else:
            self.send_json(404, {"error": "404 page not found"})


def fake_tests(env):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeOllama)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = dict(env, PADDOCK_HOST="127.0.0.1:%d" % server.server_address[1])

    # Every command prints its usage for --help (and `help CMD`), on stdout, with exit 0.
    rc, out, err = run(["--help"], env)
    listed = out.split("Available Commands:\n")[-1].split("\n\n")[0]
    commands = [l.split()[0] for l in listed.splitlines() if l.strip()]
    check(rc == 0 and len(commands) > 10 and "eval" in commands, "--help lists the commands", out + err)
    for name in commands:
        for args in ([name, "--help"], ["help", name]):
            rc, out, err = run(args, env)
            check(rc == 0 and "sage" in out and "Error" not in err, " ".join(args) + " prints its usage", out + err)

    rc, out, err = run(["list"], env)
    lines = out.splitlines()
    check(rc == 0 and lines[0].split() == ["NAME", "ID", "SIZE", "MODIFIED"], "list prints the header", out + err)
    check(len(lines) == 3 and lines[1].split()[:2] == ["stories:latest", MANIFEST_DIGEST[:12]]
          and "4.7 GB" in lines[1] and "2 hours ago" in lines[1], "list row: name, 12-hex id, size, age", out)
    check("1.5 KB" in lines[2] and "4 minutes ago" in lines[2], "list row 2: KB and minutes", out)
    check(lines[0].index("ID") == lines[1].index(MANIFEST_DIGEST[:12]), "list columns are aligned", out)
    rc, out, _ = run(["ls", "OTH"], env)
    check(rc == 0 and len(out.splitlines()) == 2 and "other:v1" in out, "ls PREFIX filters case-insensitively", out)

    rc, out, err = run(["ps"], env)
    check(rc == 0 and out.split()[:6] == ["NAME", "ID", "SIZE", "PROCESSOR", "CONTEXT", "UNTIL"], "ps header", out)
    check("100% CPU" in out and "4096" in out and "4 minutes from now" in out and "100 B" in out,
          "ps row: processor, context, until", out)

    rc, out, err = run(["cp", "stories", "copy1"], env)
    check(rc == 0 and "copied 'stories' to 'copy1'" in out, "cp reports the copy", out + err)
    check(("POST", "/api/copy", {"source": "stories", "destination": "copy1"}) in FakeOllama.requests,
          "cp sends /api/copy")
    rc, out, err = run(["cp", "missing", "x"], env)
    check(rc == 1 and err.strip() == 'Error: model "missing" not found', "cp of a missing model fails", err)

    rc, out, err = run(["rm", "copy1", "copy2"], env)
    check(rc == 0 and out == "deleted 'copy1'\ndeleted 'copy2'\n", "rm several names", out + err)
    rc, out, err = run(["rm", "missing"], env)
    check(rc == 1 and "Error: model 'missing' not found" in err, "rm of a missing model fails", err)

    rc, out, err = run(["stop", "missing"], env)
    check(rc == 1 and 'couldn\'t find model "missing" to stop' in err, "stop of an unknown model", err)
    rc, out, err = run(["stop", "stories"], env)
    check(rc == 0, "stop sends keep_alive 0", err)

    rc, out, err = run(["run", "stories", "hello", "there"], env)
    check(rc == 0 and out == "Once upon a time echo: hello there\n", "run with a prompt prints the answer", out + err)
    rc, out, err = run(["run", "--verbose", "stories", "x"], env)
    check(rc == 0 and "total duration:       2.5s" in err and "eval rate:            20.00 tokens/s" in err
          and "prompt eval count:    10 token(s)" in err, "run --verbose prints Ollama's timings", err)
    rc, out, err = run(["run", "stories"], env, stdin="piped text\nline 2")
    check(rc == 0 and "echo: piped text|line 2" in out, "run takes a piped prompt", out + err)
    rc, out, err = run(["run", "stories", "tail"], env, stdin="head")
    check(rc == 0 and "echo: head tail" in out, "piped input is prepended to the prompt", out)
    gen = [r[2] for r in FakeOllama.requests if r[1] == "/api/generate" and r[2] and "prompt" in r[2]]
    rc, out, err = run(["run", "--format", "json", "--keepalive", "10m", "--think=high", "stories", "q"], env)
    last = [r[2] for r in FakeOllama.requests if r[1] == "/api/generate"][-1]
    check(rc == 0 and last.get("format") == "json" and last.get("keep_alive") == "10m" and last.get("think") == "high",
          "run flags reach the request", json.dumps(last))
    check(len(gen) >= 3, "generate was called for each run")

    rc, out, err = run(["run", "pulled", "hi"], env)
    check(rc == 0 and "pulling manifest" in err and "success" in err and "Once upon a time" in out,
          "run pulls a missing model first", out + err)
    rc, out, err = run(["run", "nosuch", "hi"], env)
    check(rc == 1 and err.strip().endswith("Error: pull model manifest: file does not exist"),
          "run of an unknown model: one clear error line", err)
    rc, out, err = run(["pull", "pulled"], env)
    check(rc == 0 and "pulling 8eeb52dfb3bb: 100%" in err and "1 KB" in err, "pull shows per-layer bars", err)

    # The interactive prompt on a pseudo-terminal, in a UTF-8 locale.
    out, status = drive_pty(["run", "stories"], dict(env, LC_ALL="C.UTF-8"), [
        "/set verbose\n", "first question\n", '"""multi\n', 'line"""\n', "/show info\n", "/show license\n",
        "/set parameter temperature 0.5\n", "/set parameter top_k abc\n", "/show parameters\n",
        "/set system Be brief.\n", "/clear\n", "after clear\n", "/nonsense\n", "/?\n",
        ("slow\n", signal.SIGINT, " tick"), "still here\n", "/load nosuch\n", "/load stories\n",
        "after load\n", "h\u00e9llo w\u00f6rld \u65e5\u672c\n", "/bye\n"])
    check(PLACEHOLDER.decode() + ">>> \n<<sent>>\x1b[K/set verbose" in out,
          "the prompt shows Ollama's placeholder, erased by the first key", out[:300])
    check("Set 'verbose' mode." in out, "REPL /set verbose", out)
    check("turns=1 last=first question" in out, "REPL answers a prompt", out)
    check("total duration:" in out, "REPL verbose timings", out)
    check("turns=2 last=multi|line" in out, '""" multi-line input, history kept across turns', out)
    check("architecture" in out and "llama" in out and "context length" in out and "Capabilities" in out,
          "REPL /show info", out)
    check("MIT License" in out, "REPL /show license", out)
    check("Set parameter 'temperature' to '0.5'" in out and "Couldn't set parameter" in out,
          "REPL /set parameter typed", out)
    check("User defined parameters:" in out and "temperature" in out, "REPL /show parameters", out)
    check("Set system message." in out and "Cleared session context" in out, "REPL /set system, /clear", out)
    check("turns=1 last=after clear" in out, "/clear forgets the conversation", out)
    check("Unknown command '/nonsense'. Type /? for help" in out and "/? shortcuts" in out, "REPL unknown + help", out)
    # Ctrl+C once the slow answer streams (it would take 20 s): the answer stops, the request
    # is dropped, and the prompt comes back.
    check(out.count(" tick") < 200, "Ctrl+C stops the answer", out)
    for _ in range(50):  # the fake server notices the closed connection on a later write
        if any(r[0] == "CANCELLED" for r in FakeOllama.requests):
            break
        time.sleep(0.1)
    check(any(r[0] == "CANCELLED" for r in FakeOllama.requests), "Ctrl+C closes the stream", out)
    check("turns=1 last=still here" in out or "last=still here" in out, "the REPL goes on after Ctrl+C", out)
    check("Couldn't find model 'nosuch'" in out, "/load of an unknown model says so", out)
    check("Loading model 'stories'" in out and "turns=1 last=after load" in out,
          "/load loads the model and starts a new conversation", out)
    check("last=h\u00e9llo w\u00f6rld \u65e5\u672c" in out, "UTF-8 typed at the prompt arrives whole", out[-400:])
    check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "/bye leaves with status 0", str(status))
    chats = [r[2] for r in FakeOllama.requests if r[0] == "POST" and r[1] == "/api/chat" and r[2].get("messages")]
    loads = [r for r in FakeOllama.requests if r[0] == "POST" and r[1] == "/api/chat" and not r[2].get("messages")]
    check(len(loads) == 2, "the model is loaded before the prompt and again by /load", str(loads))
    check(any(r.get("options", {}).get("temperature") == 0.5 for r in chats), "/set parameter reaches options")
    check(any(r["messages"][0] == {"role": "system", "content": "Be brief."} for r in chats), "system message sent")

    out, status = drive_pty(["run", "stories"], env, ["\x04"])
    check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "Ctrl+D leaves", out)

    # Keys typed while the model loads: a line becomes the first prompt (echoed once, by the
    # line editor), and a Ctrl+D then still leaves (in canonical mode it became a NUL byte
    # that made libedit quote the next key, so the prompt never left).
    out, status = drive_pty(["run", "slowload"], env, ["/bye\n"], timeout=20, typeahead="typed early\n")
    check("turns=1 last=typed early" in out and out.count("typed early") == 2,
          "a line typed while the model loads is the first prompt", out)
    check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "then /bye leaves", str(status))
    out, status = drive_pty(["run", "slowload"], env, [], timeout=20, typeahead="\x04")
    check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "Ctrl+D typed while the model loads leaves", out)
    # Killed while an answer streams (the terminal out of canonical mode and echo): the
    # terminal's settings come back before the signal ends the process.
    lflag = []
    out, status = drive_pty(["run", "stories"], env, [("slow\n", signal.SIGTERM, " tick")], timeout=20,
                            final_lflag=lflag)
    check(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM, "SIGTERM ends the session", str(status))
    check(lflag and lflag[0] & termios.ECHO and lflag[0] & termios.ICANON,
          "a session killed mid-answer leaves the terminal with echo and line mode", str(lflag))

    server.shutdown()
    dead = dict(env, PADDOCK_HOST="127.0.0.1:%d" % free_port(), PADDOCK_NOAUTOSTART="1")
    rc, out, err = run(["list"], dead)
    check(rc == 1 and err.startswith("Error: could not connect") and len(err.splitlines()) == 1,
          "server unreachable: one clear error line", err)


# ---------------------------------------------------------------------------- real server

def started_pid(err):
    """The pid in "started a server in the background (pid N)", else 0."""
    return int(err.split("(pid ")[1].split(")")[0]) if "(pid " in err else 0


def wait_up(port, proc, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def real_tests(env):
    fixtures = os.environ.get("PADDOCK_FIXTURES", "")
    store = os.path.join(fixtures, "ollama-store")
    if not os.path.isdir(store):
        print("SKIPPED: no fixtures at %r (set PADDOCK_FIXTURES)" % fixtures)
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="paddock-cli-")
    try:
        models = os.path.join(tmp, "models")
        shutil.copytree(store, models)
        port = free_port()
        env = dict(env, PADDOCK_HOST="127.0.0.1:%d" % port, PADDOCK_MODELS=models, HOME=tmp)
        # An unreferenced blob and a stale partial download, older than prune's grace hour.
        junk = [os.path.join(models, "blobs", "sha256-" + "ab" * 32),
                os.path.join(models, "blobs", ".paddock-tmp-partial-sha256-" + "cd" * 32)]
        for path in junk:
            with open(path, "wb") as f:
                f.write(b"junk")
            os.utime(path, (time.time() - 7200, time.time() - 7200))
        keep = subprocess.Popen([BIN, "serve"], env=dict(env, OLLAMA_NOPRUNE="1"), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        up = wait_up(port, keep)
        keep.terminate()
        keep.wait(timeout=10)
        check(up and all(os.path.exists(p) for p in junk), "OLLAMA_NOPRUNE keeps unused blobs")
        serve = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            if not wait_up(port, serve):
                check(False, "paddock serve starts", serve.stderr.read().decode() if serve.poll() is not None else "")
                return
            check(not any(os.path.exists(p) for p in junk), "serve prunes unused blobs and stale partials at start")
            check(os.path.exists(os.path.join(models, "blobs")) and len(os.listdir(os.path.join(models, "blobs"))) > 2,
                  "prune keeps the blobs manifests use")
            rc, out, err = run(["list"], env)
            check(rc == 0 and out.splitlines()[0].split() == ["NAME", "ID", "SIZE", "MODIFIED"]
                  and "stories" in out, "list against the real server", out + err)
            rc, out, err = run(["cp", "stories", "copied:v2"], env)
            check(rc == 0, "cp against the real server", err)
            rc, out, err = run(["list", "copied"], env)
            check(rc == 0 and "copied:v2" in out, "the copy is listed", out + err)
            rc, out, err = run(["rm", "copied:v2"], env)
            check(rc == 0 and "deleted 'copied:v2'" in out, "rm against the real server", out + err)
            rc, out, err = run(["list", "copied"], env)
            check(rc == 0 and "copied:v2" not in out, "the removed copy is gone", out)
            rc, out, err = run(["ps"], env)
            check(rc == 0 and "PROCESSOR" in out, "ps against the real server", out + err)
            # A missing model: the server's message, worded per route as Ollama's.
            rc, out, err = run(["rm", "nosuchmodel"], env)
            check(rc == 1 and err == "Error: model 'nosuchmodel' not found\n", "rm unknown: one error line", err)
            rc, out, err = run(["show", "nosuchmodel"], env)
            check(rc == 1 and err == "Error: model 'nosuchmodel' not found\n", "show unknown", err)
            rc, out, err = run(["cp", "nosuch", "x"], env)
            check(rc == 1 and err == 'Error: model "nosuch" not found\n', "cp unknown", err)
            rc, out, err = run(["stop", "nosuchmodel"], env)
            check(rc == 1 and err == 'Error: couldn\'t find model "nosuchmodel" to stop\n', "stop unknown", err)
            # stories never says </s> and the context shifts, so it needs a length limit.
            modelfile = os.path.join(tmp, "Modelfile")
            with open(modelfile, "w") as f:
                f.write("FROM stories\nPARAMETER num_predict 24\nPARAMETER temperature 0\n")
            rc, out, err = run(["create", "short", "-f", modelfile], env)
            check(rc == 0 and "success" in err + out, "create from a Modelfile against the real server", out + err)
            rc, out, err = run(["run", "short"], env, stdin="Once upon a time", timeout=120)
            check(rc == 0 and len(out.strip()) > 0, "run with a piped prompt prints text", out + err)
            rc, out, err = run(["run", "short", "--verbose"], env, stdin="Once upon a time", timeout=120)
            check(rc == 0 and "load duration:" in err + out,
                  "run --verbose of a loaded model prints the scheduler's load duration", out + err)
            rc, out, err = run(["show", "short", "--parameters"], env)
            check(rc == 0 and "num_predict" in out and "24" in out, "show --parameters of the created model", out + err)
            with open(modelfile, "w") as f:
                f.write("FROM stories\nPARAMETER num_predict lots\n")
            rc, out, err = run(["create", "bad", "-f", modelfile], env)
            check(rc == 1 and err.strip().splitlines()[-1].startswith("Error:") and "num_predict" in err,
                  "a bad Modelfile: one clear error", out + err)
            # An embedding model: run prints the input's vector as a JSON array, as Ollama does.
            with open(modelfile, "w") as f:
                f.write("FROM %s\n" % os.path.join(fixtures, "models", "tiny-bert-f16.gguf"))
            rc, out, err = run(["create", "bert", "-f", modelfile], env)
            check(rc == 0, "create an embedding model from its GGUF", out + err)
            rc, out, err = run(["run", "bert", "hello", "world"], env)
            vec = json.loads(out) if rc == 0 and out.startswith("[") else []
            check(len(vec) == 128 and abs(sum(x * x for x in vec) - 1) < 1e-4,
                  "run on an embedding model prints a unit vector", out[:200] + err)
            rc, out, err = run(["run", "bert", "--dimensions", "8", "hello"], env)
            check(rc == 0 and len(json.loads(out)) == 8, "run --dimensions 8", out + err)
            rc, out, err = run(["run", "bert"], env, stdin="")
            check(rc == 1 and "embedding models require input text" in err, "run on an embedding model needs text", err)
            rc, out, err = run(["show", "bert"], env)
            check(rc == 0 and "embedding" in out.split("Capabilities")[-1] and "completion" not in out,
                  "show lists the embedding capability only", out + err)
            # GGUFs with only a Jinja chat template: show reports what the template takes and prints it.
            for name, gguf, caps in [("tolstoy", "tiny-tolstoy-chat-q4_k_m.gguf", ["completion", "tools"]),
                                     ("qwen3", "tiny-qwen3-q4_k_m.gguf", ["completion", "tools", "thinking"])]:
                with open(modelfile, "w") as f:
                    f.write("FROM %s\n" % os.path.join(fixtures, "models", gguf))
                rc, out, err = run(["create", name, "-f", modelfile], env, timeout=120)
                check(rc == 0, "create %s from its GGUF" % name, out + err)
                rc, out, err = run(["show", name], env)
                shown = out.split("Capabilities")[1].split("\n\n")[0].split() if "Capabilities" in out else []
                check(rc == 0 and shown == caps, "show %s lists %s" % (name, caps), out + err)
                rc, out, err = run(["show", name, "--template"], env)
                check(rc == 0 and "tools" in out and "{%" in out, "show %s --template prints its Jinja template" % name,
                      out + err)
        finally:
            serve.terminate()
            serve.wait(timeout=10)

        # Starting a server in the background when none runs.
        port = free_port()
        env = dict(env, PADDOCK_HOST="127.0.0.1:%d" % port)
        rc, out, err = run(["list"], env)
        check(rc == 0 and "started a server in the background (pid" in err and "stories" in out,
              "a command with no server running starts one", out + err)
        pid = started_pid(err)
        rc, out, err = run(["list"], env)
        check(rc == 0 and "started a server" not in err, "the background server is reused", err)
        check(os.path.exists(os.path.join(tmp, ".paddock", "logs", "server.log")), "background server log written")
        if pid:
            os.kill(pid, signal.SIGTERM)

        # API keys: a server started with PADDOCK_API_KEYS answers 401 without one; the CLI
        # sends PADDOCK_API_KEY; a use key may not pull (403).
        port = free_port()
        keyed = dict(env, PADDOCK_HOST="127.0.0.1:%d" % port, PADDOCK_NOAUTOSTART="1",
                     PADDOCK_API_KEYS="use-key-0123456789,admin-key-0123456789:admin")
        serve = subprocess.Popen([BIN, "serve"], env=keyed, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_up(port, serve)
            def status(path, key=None, method="GET"):
                req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method=method,
                                             data=b"{}" if method == "POST" else None)
                if key:
                    req.add_header("Authorization", "Bearer " + key)
                try:
                    return urllib.request.urlopen(req, timeout=10).status
                except urllib.error.HTTPError as e:
                    return e.code
            check(status("/") == 200 and status("/api/tags") == 401 and status("/api/tags", "use-key-0123456789") == 200
                  and status("/v1/models", "wrong-key-0123456789") == 401
                  and status("/api/pull", "use-key-0123456789", "POST") == 403,
                  "API keys: 401 without a valid key, 403 for a use key on pull")
            rc, out, err = run(["list"], keyed)
            check(rc == 1 and "API key" in err, "the CLI without PADDOCK_API_KEY is refused", out + err)
            rc, out, err = run(["list"], dict(keyed, PADDOCK_API_KEY="use-key-0123456789"))
            check(rc == 0 and "stories" in out, "the CLI sends PADDOCK_API_KEY", out + err)
        finally:
            serve.terminate()
            serve.wait(timeout=10)

        # OLLAMA_HOST=0.0.0.0 (the server address clients use) starts a loopback-only server.
        port = free_port()
        env = dict(env, PADDOCK_HOST="0.0.0.0:%d" % port)
        rc, out, err = run(["list"], env)
        pid = started_pid(err)
        with open("/proc/net/tcp") as f:
            listening = [line.split()[1] for line in f.readlines()[1:]
                         if line.split()[3] == "0A" and line.split()[1].endswith(":%04X" % port)]
        check(rc == 0 and listening == ["0100007F:%04X" % port],
              "an auto-started server listens on loopback only, whatever OLLAMA_HOST says", str(listening) + err)
        if pid:
            os.kill(pid, signal.SIGTERM)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    global BIN
    mode, BIN = sys.argv[1], os.path.abspath(sys.argv[2])
    env = dict(os.environ, PADDOCK_NOHISTORY="1", TERM="dumb", COLUMNS="80")
    env.pop("OLLAMA_HOST", None)
    home = tempfile.mkdtemp(prefix="paddock-cli-home-")
    env["HOME"] = home
    try:
        if mode == "fake":
            fake_tests(env)
        else:
            real_tests(env)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print("%d failure(s)" % len(FAILURES))
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
