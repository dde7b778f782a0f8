#!/usr/bin/env python3
"""A hostile registry for the registry test: redirect loops, redirects to other schemes,
manifests with traversal digests or absurd sizes, and a blob longer than its manifest says.
Prints its port on stdout once ready."""
import http.server
import json
import sys

HEX = "ab" * 32
MEDIA = "application/vnd.docker.distribution.manifest.v2+json"


def manifest(digest, size):
    layer = {"mediaType": "application/vnd.ollama.image.model", "digest": digest, "size": size}
    cfg = {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": digest, "size": size}
    return json.dumps({"schemaVersion": 2, "mediaType": MEDIA, "config": cfg, "layers": [layer]}).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, code, body=b"", headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        p = self.path
        if p.startswith("/v2/test/loop/"):
            self.reply(302, headers=[("Location", p)])
        elif p.startswith("/v2/test/scheme/"):
            self.reply(302, headers=[("Location", "file:///etc/passwd")])
        elif p.startswith("/v2/test/traversal/manifests/"):
            self.reply(200, manifest("sha256:../../../../etc/passwd", 10), [("Content-Type", MEDIA)])
        elif p.startswith("/v2/test/huge/manifests/"):
            self.reply(200, manifest("sha256:" + HEX, 1 << 50), [("Content-Type", MEDIA)])
        elif p.startswith("/v2/test/long/manifests/"):
            self.reply(200, manifest("sha256:" + HEX, 10), [("Content-Type", MEDIA)])
        elif p.startswith("/v2/test/long/blobs/"):
            self.reply(200, b"x" * 100000)
        else:
            self.reply(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}')

    do_HEAD = do_GET


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
