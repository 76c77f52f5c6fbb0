#!/usr/bin/python3
"""The SVG writers (`chakra plot`, `chakra compare -o`) against hostile
reports (issue 26, items 5 and 10): every SVG they write parses as XML,
names such as `<script>` arrive as text (never markup), values near the
largest double are drawn, and values that cannot be drawn (beyond a
double's range, negative) are refused with one line naming the field and
the rank, exit 2, no file written.

usage: svg_test.py CHAKRA_BINARY   (exit 0 pass, 1 fail)"""
import json
import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtest import check, main  # noqa: E402

NS = "{http://www.w3.org/2000/svg}"
SCRIPT = "<script>alert('x')</script>"
NAMES = [SCRIPT, 'q"uote & amp', "ctl\x01\x1f and \ud800 lone", "new\nline\ttab", "\u00fcn\u00efc\u00f8d\u00e9 \u2713",
         "long " + "y" * 5000]


def rank(r, value=1000.0, colls=None):
    return {"rank": r, "finish_ns": value, "gpu_ns": value, "exposed_comm_ns": value, "overlap_ns": 0, "cpu_ns": 0,
            "collectives": {n: {"time_ns": value} for n in (colls if colls is not None else ["ALL_REDUCE"])}}


def write(w, name, doc):
    path = w.path(name)
    with open(path, "w") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def parse(path):
    """The document's root, or the parse error's text."""
    try:
        return ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        return str(e)


def texts(root):
    return [t.text or "" for t in root.iter(NS + "text")] + [t.get("data-label") or "" for t in root.iter(NS + "rect")]


def no_markup(root):
    return not any(e.tag.endswith("script") for e in root.iter())


def test_names_become_text(w):
    rep = write(w, "names.json", {"ranks": [rank(0, colls=NAMES), rank(1, colls=NAMES)]})
    svg = w.path("names-plot.svg")
    p = w.run("plot", rep, "-o", svg)
    root = parse(svg)
    check("plot with hostile collective names: exit 0 and the SVG parses as XML",
          p.returncode == 0 and not isinstance(root, str), (p.stderr, root))
    if not isinstance(root, str):
        t = texts(root)
        check("plot: <script> is a label's text, not an element", SCRIPT in t and no_markup(root), t[:20])
        check("plot: quotes, ampersands, newlines, tabs and non-ASCII names arrive intact",
              all(n in t for n in NAMES[1:2] + NAMES[3:]), [x for x in t if x][:40])
        check("plot: control characters and lone surrogates are replaced, not written",
              any(x.startswith("ctl\ufffd\ufffd and ") for x in t), [x for x in t if x and x.startswith("ctl")])
    svg = w.path("names-compare.svg")
    p = w.run("compare", rep, rep, "-o", svg)
    root = parse(svg)
    check("compare -o with hostile collective names: exit 0 and the SVG parses as XML",
          p.returncode == 0 and not isinstance(root, str), (p.stderr, root))
    if not isinstance(root, str):
        t = texts(root)
        check("compare: <script> is a row's text, not an element", SCRIPT + " time" in t and no_markup(root), t[:20])


def test_largest_doubles_are_drawn(w):
    big = 1.7976931348623157e308
    rep = write(w, "big.json", {"ranks": [rank(0, 1e308, [SCRIPT]), rank(1, big, ["ALL_GATHER"])]})
    for cmd, args in (("plot", ["-o"]), ("compare", [rep, "-o"])):
        svg = w.path("big-%s.svg" % cmd)
        p = w.run(cmd, rep, *args, svg)
        root = parse(svg)
        ok = p.returncode == 0 and not isinstance(root, str)
        check("%s of values up to the largest double: exit 0, the SVG parses" % cmd, ok, (p.returncode, p.stderr, root))
        if ok:
            nums = [v for e in root.iter() for k, v in e.attrib.items() if k in ("x", "y", "width", "height")]
            bad = [v for v in nums if not v.replace(".", "").replace("-", "").replace("%", "").isdigit()]
            check("%s: every coordinate and width is a finite number" % cmd, not bad, bad[:5])
            t = " ".join(texts(root))
            check("%s: no inf or nan in the labels" % cmd, "inf" not in t and "nan" not in t, t[:500])


REFUSED = [
    ("gpu_ns 1e309", '{"ranks":[{"rank":0,"finish_ns":1,"gpu_ns":1e309,"exposed_comm_ns":0,"collectives":{}}]}',
     "ranks[0].gpu_ns", ["plot"]),
    ("finish_ns 1e309", '{"ranks":[{"rank":0,"finish_ns":1e309,"gpu_ns":1,"exposed_comm_ns":0,"collectives":{}}]}',
     "ranks[0].finish_ns", ["compare"]),
    ("exposed_comm_ns -1e308 on rank 1",
     '{"ranks":[{"rank":0,"finish_ns":1,"exposed_comm_ns":1},{"rank":1,"finish_ns":1,"exposed_comm_ns":-1e308}]}',
     "ranks[1].exposed_comm_ns", ["plot", "compare"]),
    ("overlap_ns -1", '{"ranks":[{"rank":0,"finish_ns":1,"overlap_ns":-1}]}', "ranks[0].overlap_ns", ["plot"]),
    ("a collective's time_ns -1e308",
     '{"ranks":[{"rank":0,"finish_ns":1,"collectives":{"AR":{"time_ns":-1e308}}}]}',
     "ranks[0].collectives.AR.time_ns", ["plot", "compare"]),
    ("rank 1e309", '{"ranks":[{"rank":1e309,"finish_ns":1}]}', "ranks[0].rank", ["plot"]),
    ("collective times whose sum overflows",
     '{"ranks":[{"rank":0,"finish_ns":1,"collectives":{"AR":{"time_ns":1.7e308}}},'
     '{"rank":1,"finish_ns":1,"collectives":{"AR":{"time_ns":1.7e308}}}]}', "collectives.AR.time_ns",
     ["plot", "compare"]),
    ("stats nodes_by_type 1e309", '{"total":{"nodes_by_type":{"COMP_NODE":1e309}}}',
     "total.nodes_by_type.COMP_NODE", ["plot"]),
    ("stats collective bytes -5", '{"total":{"nodes_by_type":{},"collectives":{"AR":{"bytes":-5}}}}',
     "total.collectives.AR.bytes", ["plot"]),
]


def test_undrawable_values_are_refused(w):
    for what, doc, field, cmds in REFUSED:
        rep = write(w, "bad.json", doc)
        for cmd in cmds:
            svg = w.path("bad-%s.svg" % cmd)
            args = [rep, "-o", svg] if cmd == "plot" else [rep, rep, "-o", svg]
            p = w.run(cmd, *args)
            err = p.stderr.decode("utf-8", "replace")
            check("%s refuses %s: exit 2, one line naming %s, no file" % (cmd, what, field),
                  p.returncode == 2 and field in err and err.count("\n") == 1 and "bad.json" in err
                  and not os.path.exists(svg), (p.returncode, err))


if __name__ == "__main__":
    sys.exit(main([test_names_become_text, test_largest_doubles_are_drawn, test_undrawable_values_are_refused]))
