#!/usr/bin/env python3
"""Fails when a file under src/<lib>/ includes a header of a library it may not use, or
when code above the backends reaches into tensor memory.

The table is ARCHITECTURE.md's, with the transitive closure taken here. Test and fuzz files
beside the code follow the same rule as the library they test. model/, kv/ and engine/ move
tensor bytes only through Buffer set/get/copy_from (a GPU may own them): a view's host
address (.data, .row(), .f32()) and host() are for kernels.
"""
import os
import re
import sys

ALLOWED = {
    "base": [],
    "gguf": ["tensor"],  # validates tensor types and block sizes
    "tensor": ["base"],
    "quant": ["tensor"],
    "backend": ["quant"],
    "backend/ref": ["backend"],
    "backend/cpu": ["backend"],
    "backend/vulkan": ["backend"],
    "kv": ["backend"],
    "model": ["backend/ref", "backend/cpu", "gguf", "kv"],
    "tokenizer": ["gguf"],
    "sample": ["tokenizer"],
    "engine": ["model", "tokenizer", "sample", "kv", "backend/vulkan"],
    "chat/jinja": ["base"],
    "chat": ["base", "chat/jinja"],
    "store": ["gguf", "quant", "base"],
    "runner": ["engine"],
    "server": ["runner", "store", "chat"],
    "cli": None,  # the top: anything
    "cli/ui": ["base"],
}


def closure(lib, seen=None):
    seen = set() if seen is None else seen
    for dep in ALLOWED[lib] or []:
        if dep not in seen:
            seen.add(dep)
            closure(dep, seen)
    return seen


def lib_of(path):
    for sub in ("backend/ref", "backend/cpu", "backend/vulkan", "chat/jinja", "cli/ui"):
        if path.startswith(sub + "/"):
            return sub
    head = path.split("/", 1)[0]
    return head if head in ALLOWED else None


NO_HOST_ACCESS = ("model", "kv", "engine")
HOST_ACCESS = re.compile(r"(\.|->)data\b(?!\s*\()|\.row\(|\.f32\(|\bhost\(\)|\bhost_(view|node)\(")


def main():
    src = sys.argv[1]
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    errors = []
    for root, _, files in os.walk(src):
        for name in files:
            if not name.endswith((".h", ".cpp")):
                continue
            full = os.path.join(root, name)
            lib = lib_of(os.path.relpath(full, src))
            if lib is None or ALLOWED[lib] is None:
                continue
            ok = closure(lib) | {lib}
            with open(full, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    if lib in NO_HOST_ACCESS and HOST_ACCESS.search(line.split("//")[0]):
                        errors.append("%s:%d: %s reaches into tensor memory; use Buffer set/get" % (full, n, lib))
                    m = include.match(line)
                    if not m:
                        continue
                    target = lib_of(m.group(1))
                    if target is not None and target not in ok:
                        errors.append("%s:%d: %s may not include %s (%s)" % (full, n, lib, m.group(1), target))
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
