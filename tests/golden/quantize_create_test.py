#!/usr/bin/env python3
"""`paddock create --quantize` end to end against a real `paddock serve` on a free port.

  quantize_create_test.py PADDOCK_BIN

Creates zoo-q8 from fixtures/models/tiny-zoo-f32.gguf with --quantize q8_0: the progress shows
the quantizing line, the model layer is byte-identical to llama-quantize's tiny-zoo-q8_0.gguf
(same sha256), show reports Q8_0, and /api/generate runs on it. Refusals: an IQ type and an
already-quantized source get Ollama's messages. Exit 77 (skipped, loudly) without fixtures.
"""
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = sys.argv[1]
FAILED = []


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILED.append(what)
        if detail:
            print("     " + detail.replace("\n", "\n     ")[:3000])


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run(args, env, timeout=120):
    p = subprocess.run([BIN] + args, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def model_layer_digest(models, name):
    path = os.path.join(models, "manifests", "registry.ollama.ai", "library", name, "latest")
    with open(path) as f:
        manifest = json.load(f)
    return [l["digest"] for l in manifest["layers"] if l["mediaType"] == "application/vnd.ollama.image.model"]


def main():
    fixtures = os.environ.get("PADDOCK_FIXTURES", "")
    src = os.path.join(fixtures, "models", "tiny-zoo-f32.gguf")
    if not os.path.isfile(src):
        print("SKIPPED LOUDLY: no fixtures at %r (set PADDOCK_FIXTURES)" % fixtures)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        models = os.path.join(tmp, "models")
        env = dict(os.environ, PADDOCK_HOST="127.0.0.1:%d" % port, PADDOCK_MODELS=models, HOME=tmp,
                   PADDOCK_NOAUTOSTART="1")
        serve = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            base = "http://127.0.0.1:%d" % port
            for _ in range(300):
                try:
                    urllib.request.urlopen(base + "/", timeout=1)
                    break
                except OSError:
                    if serve.poll() is not None:
                        break
                    time.sleep(0.1)
            check(serve.poll() is None, "paddock serve starts")

            def modelfile(name, text):
                path = os.path.join(tmp, name)
                with open(path, "w") as f:
                    f.write(text)
                return path

            f32 = modelfile("Modelfile.f32", "FROM %s\n" % src)
            rc, out, err = run(["create", "zoo-q8", "-f", f32, "--quantize", "q8_0"], env)
            check(rc == 0, "create --quantize q8_0 succeeds", out + err)
            check("quantizing F32 model to Q8_0" in err and "success" in err, "progress shows the quantizing line",
                  err)
            want = "sha256:" + sha256(os.path.join(fixtures, "models", "tiny-zoo-q8_0.gguf"))
            check(model_layer_digest(models, "zoo-q8") == [want],
                  "the model layer is byte-identical to llama-quantize's tiny-zoo-q8_0.gguf",
                  str(model_layer_digest(models, "zoo-q8")) + " vs " + want)
            rc, out, err = run(["show", "zoo-q8"], env)
            check(rc == 0 and "Q8_0" in out, "show reports Q8_0", out + err)

            body = json.dumps({"model": "zoo-q8", "prompt": "Once upon a time", "stream": False,
                               "options": {"temperature": 0, "num_predict": 8, "seed": 1}}).encode()
            req = urllib.request.Request(base + "/api/generate", data=body,
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=120) as r:
                gen = json.loads(r.read())
            check(gen.get("done") is True and gen.get("eval_count", 0) > 0 and gen.get("response"),
                  "generate runs on the quantized model", json.dumps(gen))

            rc, out, err = run(["create", "zoo-iq", "-f", f32, "--quantize", "iq4_xs"], env)
            check(rc != 0 and "unsupported quantization type iq4_xs - supported types are" in err,
                  "an IQ type is refused with Ollama's message", out + err)
            q4 = modelfile("Modelfile.q4", "FROM %s\n" % os.path.join(fixtures, "models", "tiny-zoo-q4_0.gguf"))
            rc, out, err = run(["create", "zoo-requant", "-f", q4, "--quantize", "q8_0"], env)
            check(rc != 0 and "quantization is only supported for F16, BF16 and F32 models" in err,
                  "a quantized source is refused with Ollama's message", out + err)
            rc, out, err = run(["list"], env)
            check("zoo-iq" not in out and "zoo-requant" not in out, "refused creates leave no model", out)
        finally:
            serve.terminate()
            serve.wait(timeout=10)
    print("%d checks failed" % len(FAILED) if FAILED else "all checks passed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
