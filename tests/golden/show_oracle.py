#!/usr/bin/env python3
"""Independent oracle for `paddock show --json`: parses GGUF headers with the stdlib only.

Prints {"architecture", "parameters", "tensor_types", "file_type_id"} for the file given.
Written separately from src/gguf so that the golden test does not check our reader against itself.
"""
import json
import struct
import sys

# ggml type id -> (name, block size); only what the fixtures can hold needs to be right.
TYPES = {
    0: ("F32", 1), 1: ("F16", 1), 2: ("Q4_0", 32), 3: ("Q4_1", 32), 6: ("Q5_0", 32), 7: ("Q5_1", 32),
    8: ("Q8_0", 32), 9: ("Q8_1", 32), 10: ("Q2_K", 256), 11: ("Q3_K", 256), 12: ("Q4_K", 256),
    13: ("Q5_K", 256), 14: ("Q6_K", 256), 15: ("Q8_K", 256), 16: ("IQ2_XXS", 256), 17: ("IQ2_XS", 256),
    18: ("IQ3_XXS", 256), 19: ("IQ1_S", 256), 20: ("IQ4_NL", 32), 21: ("IQ3_S", 256), 22: ("IQ2_S", 256),
    23: ("IQ4_XS", 256), 24: ("I8", 1), 25: ("I16", 1), 26: ("I32", 1), 27: ("I64", 1), 28: ("F64", 1),
    29: ("IQ1_M", 256), 30: ("BF16", 1), 34: ("TQ1_0", 256), 35: ("TQ2_0", 256), 39: ("MXFP4", 32),
}
SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<B", 10: "<Q", 11: "<q", 12: "<d"}


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def unpack(self, fmt):
        (v,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def string(self):
        n = self.unpack("<Q")
        s = self.data[self.pos:self.pos + n]
        self.pos += n
        return s.decode("utf-8", "replace")

    def value(self, t):
        if t in SCALAR:
            return self.unpack(SCALAR[t])
        if t == 8:
            return self.string()
        if t == 9:
            et, n = self.unpack("<I"), self.unpack("<Q")
            return [self.value(et) for _ in range(n)]
        raise ValueError("bad value type %d" % t)


def main(path):
    with open(path, "rb") as f:
        r = Reader(f.read())
    assert r.data[:4] == b"GGUF", "not a GGUF file"
    r.pos = 4
    r.unpack("<I")
    n_tensors, n_kv = r.unpack("<Q"), r.unpack("<Q")
    kv = {}
    for _ in range(n_kv):
        key = r.string()
        kv[key] = r.value(r.unpack("<I"))
    params, types = 0, {}
    for _ in range(n_tensors):
        r.string()
        dims = [r.unpack("<Q") for _ in range(r.unpack("<I"))]
        name, _ = TYPES[r.unpack("<I")]
        r.unpack("<Q")
        n = 1
        for d in dims:
            n *= d
        params += n
        types[name] = types.get(name, 0) + 1
    json.dump({"architecture": kv.get("general.architecture"), "parameters": params, "tensor_types": types,
               "file_type_id": kv.get("general.file_type")}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
