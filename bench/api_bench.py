#!/usr/bin/env python3
"""Decode speed through the API against the engine's own (a benchmark, never a test):
  1. `paddock bench --model FILE -n 128` tg tokens/s (the engine alone);
  2. `paddock serve` over a temporary store holding FILE: one /api/generate stream of 128
     tokens (eval_count / eval_duration), which should be within 5% of (1);
  3. N concurrent streams with OLLAMA_NUM_PARALLEL=N: their total tokens/s against (2).
(2) and (3) alternate for --rounds rounds, each round's ratio taken within the round, so a
host whose speed drifts between minutes still gives a fair ratio (the median is reported).
Usage: bench/api_bench.py PADDOCK_BIN MODEL.gguf [--threads T] [--parallel N] [--rounds R]"""
import argparse
import hashlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(base, path, body, data=None):
    req = urllib.request.Request(base + path, data=data if data is not None else json.dumps(body).encode(),
                                 method="POST")
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r) if data is None else None


def engine_tg(binary, model, threads):
    out = subprocess.run([binary, "bench", "--model", model, "-p", "16", "-n", "128", "-r", "3", "-t",
                          str(threads), "--json"], capture_output=True, text=True, check=True).stdout
    j = json.loads(out)
    key = next(k for k in j if k.startswith("tg"))
    return j[key][0]


def stream_tps(base, threads, results, i):
    r = post(base, "/api/generate", {"model": "bench", "prompt": "Once upon a time", "raw": True, "stream": False,
                                     "options": {"temperature": 0, "num_predict": 128, "num_thread": threads}})
    results[i] = (r["eval_count"], r["eval_duration"] / 1e9)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()

    tg = engine_tg(a.binary, a.model, a.threads)
    print(f"engine  tg128: {tg:8.2f} tokens/s  (paddock bench, {a.threads} threads)")

    work = tempfile.mkdtemp()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, PADDOCK_HOST=f"127.0.0.1:{port}", PADDOCK_MODELS=os.path.join(work, "models"),
               PADDOCK_NUM_PARALLEL=str(a.parallel))
    server = subprocess.Popen([a.binary, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        data = open(a.model, "rb").read()
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        post(base, "/api/blobs/" + digest, None, data=data)
        del data
        post(base, "/api/create", {"model": "bench", "files": {"model.gguf": digest}, "stream": False})
        warm = [None]
        stream_tps(base, a.threads, warm, 0)  # loads the model
        ratios = []
        for rnd in range(1, a.rounds + 1):
            one = [None]
            stream_tps(base, a.threads, one, 0)
            n, secs = one[0]
            api = n / secs
            many = [None] * a.parallel
            t0 = time.time()
            threads = [threading.Thread(target=stream_tps, args=(base, a.threads, many, i)) for i in range(a.parallel)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.time() - t0
            total = sum(n for n, _ in many) / wall
            ratios.append(total / api)
            print(f"round {rnd}: 1 stream {api:8.2f} tokens/s ({api / tg:.3f} of the engine's); {a.parallel} streams "
                  f"{total:8.2f} in total ({total / api:.2f}x; {sum(n for n, _ in many)} tokens in {wall:.2f} s)")
        print(f"median {a.parallel}-stream / 1-stream ratio over {a.rounds} rounds: {statistics.median(ratios):.2f}x")
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
