#!/usr/bin/env python3
"""A strict checker of Prometheus' text exposition format 0.0.4, as GET /metrics serves it.

  prom_check.py FILE                 validate; exit 1 with every problem listed
  prom_check.py FILE --get SERIES    validate, then print SERIES' value (0 when absent), e.g.
                                     'paddock_http_requests_total{route="/api/generate",status="200"}'
  prom_check.py --self-test          the checker rejects broken inputs (so a pass means something)

Checks: every line is a HELP, TYPE or sample line; HELP and TYPE come once per family, before
its samples, and a family's samples are contiguous; metric and label names are valid; label
values use only the \\\\ \\" \\n escapes; values are floats; names start with paddock_;
counters end in _total and are non-negative; histograms have _bucket{le} lines per series that
are cumulative in increasing le, end with le="+Inf" equal to _count, and a _sum.
"""
import math
import re
import sys

METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
FLOAT = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?Inf|NaN")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


class Problem(Exception):
    pass


def parse_float(text, where):
    if not FLOAT.fullmatch(text):
        raise Problem(f"{where}: not a float: {text!r}")
    return float(text.replace("Inf", "inf"))


def parse_labels(text, where):
    """text: what is between the braces. Returns a dict; the escapes are undone."""
    labels, i = {}, 0
    while i < len(text):
        m = LABEL_NAME.match(text, i)
        if not m:
            raise Problem(f"{where}: bad label name at {text[i:]!r}")
        name = m.group(0)
        i = m.end()
        if text[i:i + 2] != '="':
            raise Problem(f"{where}: expected =\" after label {name}")
        i += 2
        value = []
        while True:
            if i >= len(text):
                raise Problem(f"{where}: unterminated value of label {name}")
            c = text[i]
            if c == "\\":
                nxt = text[i + 1:i + 2]
                if nxt not in ("\\", '"', "n"):
                    raise Problem(f"{where}: bad escape \\{nxt} in label {name}")
                value.append("\n" if nxt == "n" else nxt)
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                raise Problem(f"{where}: raw newline in label {name}")
            else:
                value.append(c)
                i += 1
        if name in labels:
            raise Problem(f"{where}: label {name} twice")
        labels[name] = "".join(value)
        if i < len(text):
            if text[i] != ",":
                raise Problem(f"{where}: expected , after label {name}")
            i += 1
    return labels


def split_sample(line, where):
    """'name{labels} value [timestamp]' -> (name, labels, value)."""
    m = METRIC_NAME.match(line)
    if not m:
        raise Problem(f"{where}: bad metric name in {line!r}")
    name, rest = m.group(0), line[m.end():]
    labels = {}
    if rest.startswith("{"):
        # The closing brace is the first one outside a quoted value.
        i, quoted = 1, False
        while i < len(rest) and (quoted or rest[i] != "}"):
            if quoted and rest[i] == "\\":
                i += 1
            elif rest[i] == '"':
                quoted = not quoted
            i += 1
        if i >= len(rest):
            raise Problem(f"{where}: unterminated label set")
        labels = parse_labels(rest[1:i], where)
        rest = rest[i + 1:]
    if not rest.startswith(" "):
        raise Problem(f"{where}: expected a space before the value")
    fields = rest[1:].split(" ")
    if len(fields) not in (1, 2):
        raise Problem(f"{where}: expected value [timestamp], got {rest!r}")
    value = parse_float(fields[0], where)
    if len(fields) == 2 and not re.fullmatch(r"-?\d+", fields[1]):
        raise Problem(f"{where}: bad timestamp {fields[1]!r}")
    return name, labels, value


def family_of(sample_name, types):
    for suffix in ("_bucket", "_sum", "_count"):
        base = sample_name[: -len(suffix)] if sample_name.endswith(suffix) else None
        if base and types.get(base) == "histogram":
            return base
    return sample_name


def check_histogram(name, samples, where):
    series = {}
    for sname, labels, value in samples:
        key = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
        s = series.setdefault(key, {"buckets": [], "sum": None, "count": None})
        if sname == name + "_bucket":
            if "le" not in labels:
                raise Problem(f"{where}: {name}_bucket without le")
            s["buckets"].append((parse_float(labels["le"], where), value))
        elif sname == name + "_sum":
            s["sum"] = value
        elif sname == name + "_count":
            s["count"] = value
        else:
            raise Problem(f"{where}: {sname} is not a sample of histogram {name}")
    for key, s in series.items():
        b = s["buckets"]
        if not b or not math.isinf(b[-1][0]):
            raise Problem(f"{name}{dict(key)}: buckets must end with le=\"+Inf\"")
        if s["sum"] is None or s["count"] is None:
            raise Problem(f"{name}{dict(key)}: _sum and _count are required")
        for (le0, c0), (le1, c1) in zip(b, b[1:]):
            if not le0 < le1:
                raise Problem(f"{name}{dict(key)}: le not increasing ({le0} then {le1})")
            if c1 < c0:
                raise Problem(f"{name}{dict(key)}: buckets not cumulative ({c0} at le={le0}, {c1} at le={le1})")
        if b[-1][1] != s["count"]:
            raise Problem(f"{name}{dict(key)}: +Inf bucket {b[-1][1]} != _count {s['count']}")
        if s["count"] < 0:
            raise Problem(f"{name}{dict(key)}: negative count")


def parse(text):
    """Validates `text`; returns {(name, frozenset(labels.items())): value}."""
    if text and not text.endswith("\n"):
        raise Problem("the last line must end with a newline")
    helps, types, done = set(), {}, set()
    current, family_samples, out = None, [], {}

    def close(family):
        if family is None:
            return
        if types.get(family) == "histogram":
            check_histogram(family, family_samples, family)
        done.add(family)

    for n, line in enumerate(text.split("\n")[:-1], 1):
        where = f"line {n}"
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not METRIC_NAME.fullmatch(name):
                    raise Problem(f"{where}: bad metric name {name!r}")
                if name != current:
                    close(current)
                    current, family_samples = name, []
                if name in done:
                    raise Problem(f"{where}: {parts[1]} for {name} after its samples ended")
                if parts[1] == "HELP":
                    if name in helps:
                        raise Problem(f"{where}: second HELP for {name}")
                    if family_samples:
                        raise Problem(f"{where}: HELP for {name} after its samples")
                    text_ = parts[3] if len(parts) > 3 else ""
                    if re.search(r"\\[^\\n]", text_.replace("\\\\", "")):
                        raise Problem(f"{where}: bad escape in HELP of {name}")
                    helps.add(name)
                else:
                    if name in types:
                        raise Problem(f"{where}: second TYPE for {name}")
                    if family_samples:
                        raise Problem(f"{where}: TYPE for {name} after its samples")
                    if len(parts) != 4 or parts[3] not in TYPES:
                        raise Problem(f"{where}: bad TYPE line {line!r}")
                    types[name] = parts[3]
            continue
        if not line.strip():
            raise Problem(f"{where}: empty line")
        name, labels, value = split_sample(line, where)
        family = family_of(name, types)
        if family != current:
            close(current)
            current, family_samples = family, []
        if family in done:
            raise Problem(f"{where}: samples of {family} are not contiguous")
        if family not in types or family not in helps:
            raise Problem(f"{where}: sample of {family} before its HELP and TYPE")
        if not family.startswith("paddock_"):
            raise Problem(f"{where}: {family} does not start with paddock_")
        if types[family] == "counter":
            if not family.endswith("_total"):
                raise Problem(f"{where}: counter {family} does not end in _total")
            if not value >= 0:
                raise Problem(f"{where}: counter {family} is {value}")
        key = (name, frozenset(labels.items()))
        if key in out:
            raise Problem(f"{where}: duplicate sample {line!r}")
        out[key] = value
        family_samples.append((name, labels, value))
    close(current)
    for name in types:
        if name not in helps:
            raise Problem(f"{name}: TYPE without HELP")
    return out


def get(parsed, series):
    name, labels, _ = split_sample(series + " 0", "query")
    return parsed.get((name, frozenset(labels.items())), 0.0)


BAD = {
    "sample before TYPE": "# HELP paddock_a_total A.\npaddock_a_total 1\n# TYPE paddock_a_total counter\n",
    "no HELP": "# TYPE paddock_a_total counter\npaddock_a_total 1\n",
    "negative counter": "# HELP paddock_a_total A.\n# TYPE paddock_a_total counter\npaddock_a_total -1\n",
    "counter without _total": "# HELP paddock_a A.\n# TYPE paddock_a counter\npaddock_a 1\n",
    "bad escape": '# HELP paddock_g G.\n# TYPE paddock_g gauge\npaddock_g{m="a\\tb"} 1\n',
    "unescaped quote": '# HELP paddock_g G.\n# TYPE paddock_g gauge\npaddock_g{m="a"b"} 1\n',
    "bad label name": '# HELP paddock_g G.\n# TYPE paddock_g gauge\npaddock_g{1m="a"} 1\n',
    "bad value": "# HELP paddock_g G.\n# TYPE paddock_g gauge\npaddock_g one\n",
    "not cumulative": "# HELP paddock_h H.\n# TYPE paddock_h histogram\n"
                      'paddock_h_bucket{le="1"} 2\npaddock_h_bucket{le="+Inf"} 1\npaddock_h_sum 1\npaddock_h_count 1\n',
    "+Inf != count": "# HELP paddock_h H.\n# TYPE paddock_h histogram\n"
                     'paddock_h_bucket{le="1"} 1\npaddock_h_bucket{le="+Inf"} 2\npaddock_h_sum 1\npaddock_h_count 3\n',
    "no +Inf": "# HELP paddock_h H.\n# TYPE paddock_h histogram\n"
               'paddock_h_bucket{le="1"} 1\npaddock_h_sum 1\npaddock_h_count 1\n',
    "split family": "# HELP paddock_g G.\n# TYPE paddock_g gauge\npaddock_g{a=\"1\"} 1\n"
                    "# HELP paddock_f F.\n# TYPE paddock_f gauge\npaddock_f 1\npaddock_g{a=\"2\"} 1\n",
    "no final newline": "# HELP paddock_g G.\n# TYPE paddock_g gauge\npaddock_g 1",
}
GOOD = ("# HELP paddock_h H \\\\ \\n.\n# TYPE paddock_h histogram\n"
        'paddock_h_bucket{m="a\\"b\\\\c\\nd",le="1"} 1\npaddock_h_bucket{m="a\\"b\\\\c\\nd",le="+Inf"} 2\n'
        'paddock_h_sum{m="a\\"b\\\\c\\nd"} 5.5\npaddock_h_count{m="a\\"b\\\\c\\nd"} 2\n'
        "# HELP paddock_n_total N.\n# TYPE paddock_n_total counter\npaddock_n_total 3e+00\n")


def self_test():
    for why, text in BAD.items():
        try:
            parse(text)
        except Problem:
            continue
        print(f"FAIL: self-test: accepted {why}", file=sys.stderr)
        return 1
    parsed = parse(GOOD)
    if get(parsed, 'paddock_h_count{m="a\\"b\\\\c\\nd"}') != 2 or get(parsed, "paddock_n_total") != 3:
        print("FAIL: self-test: values of the good input", file=sys.stderr)
        return 1
    print("prom_check self-test: ok")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--get"):
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        text = f.read()
    try:
        parsed = parse(text)
    except Problem as e:
        print(f"FAIL: {argv[1]}: {e}", file=sys.stderr)
        return 1
    if len(argv) == 4:
        v = get(parsed, argv[3])
        print(int(v) if v.is_integer() else v)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
