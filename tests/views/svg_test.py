#!/usr/bin/python3
"""The SVG writers (`chakra plot`, `chakra compare -o`) against hostile
reports (issue 26, items 5 and 10): every SVG they write parses as XML,
names such as `<script>` arrive as text (never markup), the largest values
a document can hold are drawn, and values that cannot be drawn are refused
with one line naming the field and the rank, exit 2, no file written.

Run reports are read into the run record (chakra/run.h, issue 22): their
numbers are whole nanoseconds, bytes and counts of at most 2^64-1 and their
collective types CollectiveCommType names, so a report naming a collective
`<script>` or timing one 1e308 ns is refused (one line, the name escaped as
messages escape names); hostile names still reach the SVG as text through
statistics documents (nodes by type, collectives, groups), whose values go
up to the largest double.

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


def rank(r, value=1000, colls=None):
    return {"rank": r, "finish_ns": value, "gpu_ns": value, "exposed_comm_ns": value, "overlap_ns": 0, "cpu_ns": 0,
            "collectives": {n: {"count": 1, "time_ns": value} for n in (colls if colls is not None else ["ALL_REDUCE"])}}


def stats(names, value=1):
    return {"total": {"nodes_by_type": {n: value for n in names},
                      "collectives": {n: {"bytes": value} for n in names},
                      "groups": {n: {"bytes": value} for n in names}}}


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
    rep = write(w, "names.json", stats(NAMES))
    svg = w.path("names-plot.svg")
    p = w.run("plot", rep, "-o", svg)
    root = parse(svg)
    check("plot of statistics with hostile names: exit 0 and the SVG parses as XML",
          p.returncode == 0 and not isinstance(root, str), (p.stderr, root))
    if not isinstance(root, str):
        t = texts(root)
        check("plot: <script> is a label's text, not an element", SCRIPT in t and no_markup(root), t[:20])
        check("plot: quotes, ampersands, newlines, tabs and non-ASCII names arrive intact",
              all(n in t for n in NAMES[1:2] + NAMES[3:]), [x for x in t if x][:40])
        check("plot: control characters and lone surrogates are replaced, not written",
              any(x.startswith("ctl\ufffd\ufffd and ") for x in t), [x for x in t if x and x.startswith("ctl")])
    # a run report's collective types are CollectiveCommType names: any
    # other is refused in one line, the name escaped, nothing written
    rep = write(w, "colls.json", {"ranks": [rank(0, colls=["ALL_REDUCE", "ctl\x01\x1b[2J"]), rank(1)]})
    for cmd in ("plot", "compare"):
        svg = w.path("colls-%s.svg" % cmd)
        p = w.run(cmd, rep, *([rep] if cmd == "compare" else []), "-o", svg)
        err = p.stderr.decode("utf-8", "replace")
        check("%s refuses a collective type that is not a CollectiveCommType name: exit 2, one line, escaped" % cmd,
              p.returncode == 2 and err.count("\n") == 1 and "ranks[0].collectives.ctl\\x01\\x1b[2J" in err
              and "not a collective type" in err and not os.path.exists(svg), (p.returncode, err))
    rep = write(w, "ok.json", {"ranks": [rank(0, colls=["ALL_REDUCE", "BROADCAST"]), rank(1)]})
    svg = w.path("ok-compare.svg")
    p = w.run("compare", rep, rep, "-o", svg)
    root = parse(svg)
    check("compare -o of a report: exit 0, the SVG parses, a row per collective type",
          p.returncode == 0 and not isinstance(root, str) and "BROADCAST time" in texts(root), (p.stderr, root))


def test_largest_values_are_drawn(w):
    top = (1 << 64) - 1
    rep = write(w, "big.json", '{"ranks": [%s, %s]}' % (json.dumps(rank(0, top, ["ALL_REDUCE"])),
                                                       json.dumps(rank(1, 1.8e19, ["ALL_REDUCE", "ALL_GATHER"]))))
    st = write(w, "bigstats.json", stats([SCRIPT, "b"], 1.7976931348623157e308))
    for cmd, src, args in (("plot", rep, ["-o"]), ("compare", rep, [rep, "-o"]), ("plot", st, ["-o"])):
        svg = w.path("big-%s.svg" % cmd)
        p = w.run(cmd, src, *args, svg)
        root = parse(svg)
        what = "%s of %s" % (cmd, "statistics up to the largest double" if src == st else "times up to 2^64-1 ns")
        ok = p.returncode == 0 and not isinstance(root, str)
        check("%s: exit 0, the SVG parses" % what, ok, (p.returncode, p.stderr, root))
        if ok:
            nums = [v for e in root.iter() for k, v in e.attrib.items() if k in ("x", "y", "width", "height")]
            bad = [v for v in nums if not v.replace(".", "").replace("-", "").replace("%", "").isdigit()]
            check("%s: every coordinate and width is a finite number" % what, not bad, bad[:5])
            t = " ".join(texts(root))
            check("%s: no inf or nan in the labels" % what, "inf" not in t and "nan" not in t, t[:500])
            if cmd == "plot" and src == rep:
                vals = [float(r.get("data-value")) for r in root.iter(NS + "rect") if r.get("class") == "bar"]
                check("plot: 2^64-1 ns is drawn as itself", float(top) in vals, vals[:8])


REFUSED = [
    ("gpu_ns 1e309", '{"ranks":[{"rank":0,"finish_ns":1,"gpu_ns":1e309,"exposed_comm_ns":0,"collectives":{}}]}',
     "ranks[0].gpu_ns", ["plot"]),
    ("finish_ns 1e309", '{"ranks":[{"rank":0,"finish_ns":1e309,"gpu_ns":1,"exposed_comm_ns":0,"collectives":{}}]}',
     "ranks[0].finish_ns", ["compare"]),
    ("finish_ns 1e308 (more than 2^64-1 ns)", '{"ranks":[{"rank":0,"finish_ns":1e308}]}', "ranks[0].finish_ns",
     ["plot", "compare"]),
    ("finish_ns 2^64", '{"ranks":[{"rank":0,"finish_ns":18446744073709551616}]}', "ranks[0].finish_ns",
     ["plot", "compare"]),
    ("gpu_ns 1.5 (not whole)", '{"ranks":[{"rank":0,"finish_ns":1,"gpu_ns":1.5}]}', "ranks[0].gpu_ns", ["plot"]),
    ("exposed_comm_ns -1e308 on rank 1",
     '{"ranks":[{"rank":0,"finish_ns":1,"exposed_comm_ns":1},{"rank":1,"finish_ns":1,"exposed_comm_ns":-1e308}]}',
     "ranks[1].exposed_comm_ns", ["plot", "compare"]),
    ("overlap_ns -1", '{"ranks":[{"rank":0,"finish_ns":1,"overlap_ns":-1}]}', "ranks[0].overlap_ns", ["plot"]),
    ("a collective's time_ns -1e308",
     '{"ranks":[{"rank":0,"finish_ns":1,"collectives":{"ALL_REDUCE":{"time_ns":-1e308}}}]}',
     "ranks[0].collectives.ALL_REDUCE.time_ns", ["plot", "compare"]),
    ("a collective type that is not one", '{"ranks":[{"rank":0,"finish_ns":1,"collectives":{"AR":{"time_ns":1}}}]}',
     "ranks[0].collectives.AR", ["plot", "compare"]),
    ("rank 1e309", '{"ranks":[{"rank":1e309,"finish_ns":1}]}', "ranks[0].rank", ["plot"]),
    ("ranks out of order", '{"ranks":[{"rank":1,"finish_ns":1},{"rank":0,"finish_ns":1}]}', "ranks[0].rank",
     ["plot", "compare"]),
    ("npus that is not the ranks listed", '{"npus":3,"ranks":[{"rank":0,"finish_ns":1}]}', "npus", ["plot", "compare"]),
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
    sys.exit(main([test_names_become_text, test_largest_values_are_drawn, test_undrawable_values_are_refused]))
