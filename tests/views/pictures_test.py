#!/usr/bin/python3
"""The pictures (issue 25): every kind chakra plot and chakra timeline --svg
draw, rendered to PNG and checked.

For each picture: the SVG parses; rendered to PNG (rsvg-convert, or
Debian's headless chromium) it has the SVG's size, is not blank, and no
ink touches its border (a label cut off at an edge would); every chart has
a title and its value axis a name; a value axis ends at or above the
largest bar and at most 20% beyond it; the numbers drawn are the inputs'.
Pictures: where each rank's time went (GPU compute, exposed communication,
pipeline bubble) of a pipelined job; two reports side by side; compare's
bars; a sweep
table (configurations in numeric order); a link report's heat map; a
timeline as SVG. The PNGs are kept in $PICTURES_DIR when it is set.

usage: pictures_test.py CHAKRA_BINARY   (exit 0 pass, 1 fail, 77 no renderer)"""
import json
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtest import NS, SYSTEM, Work, check, comp, finish  # noqa: E402



# ---- rendering ------------------------------------------------------------------

def renderer():
    if shutil.which("rsvg-convert"):
        return "rsvg-convert"
    for c in ("chromium", "chromium-browser"):
        if shutil.which(c):
            return c
    return None


def render(tool, svg, png, width, height):
    if tool == "rsvg-convert":
        p = subprocess.run([tool, svg, "-o", png], capture_output=True, text=True)
    else:
        p = subprocess.run([tool, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            "--screenshot=" + png, "--window-size=%d,%d" % (width, height), "file://" + svg],
                           capture_output=True, text=True)
    return p.returncode == 0 and os.path.exists(png), p.stderr


def png_pixels(path):
    """(width, height, rows of (r, g, b, a)) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and not interlace, "PNG form %d/%d" % (depth, colour)
            bpp = 4 if colour == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, rows, prev = zlib.decompress(idat), [], bytearray(w * bpp)
    stride = w * bpp
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[i:i + bpp]) + ((255,) if bpp == 3 else ()) for i in range(0, stride, bpp)])
        prev = line
    return w, h, rows


def ink(px):
    r, g, b, a = px
    return a > 40 and min(r, g, b) < 200


def rendered_well(w, tool, svg, name):
    """Renders svg; checks size, ink, clean border. Returns the root."""
    root = ET.parse(svg).getroot()
    width, height = int(float(root.get("width"))), int(float(root.get("height")))
    png = svg[:-4] + ".png"
    ok, err = render(tool, svg, png, width, height)
    check("%s: rendered to PNG by %s" % (name, tool), ok, err)
    if not ok:
        return root
    keep = os.environ.get("PICTURES_DIR")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(png, os.path.join(keep, os.path.basename(png)))
    pw, ph, rows = png_pixels(png)
    check("%s: the PNG has the SVG's size %dx%d" % (name, width, height), (pw, ph) == (width, height) or
          (tool != "rsvg-convert" and pw == width), (pw, ph))
    inked = sum(ink(p) for row in rows[::4] for p in row[::4])
    check("%s: the picture is drawn (%d sampled pixels inked)" % (name, inked), inked > 200, inked)
    border = [(x, y) for y in (0, 1, ph - 2, ph - 1) for x in range(pw) if ink(rows[y][x])] + \
             [(x, y) for y in range(ph) for x in (0, 1, pw - 2, pw - 1) if ink(rows[y][x])]
    check("%s: no ink on the border (nothing cut off)" % name, not border, border[:10])
    return root


# ---- what the charts say ---------------------------------------------------------

def charts(root):
    out = []
    for g in root.iter(NS + "g"):
        texts = [t for t in g.iter(NS + "text")]
        out.append({"kind": g.get("data-kind"), "title": texts[0].text if texts else "",
                    "axis_max": float(g.get("data-axis-max") or 0), "scale": float(g.get("data-scale") or 0),
                    "axisname": [t.text for t in texts if t.get("class") == "axisname"],
                    "labels": [t.text for t in texts if t.get("text-anchor") == "end" and t.get("class") is None],
                    "bars": [r for r in g.iter(NS + "rect") if r.get("class") == "bar"],
                    "cells": [r for r in g.iter(NS + "rect") if r.get("class") == "cell"],
                    "slices": [r for r in g.iter(NS + "rect") if r.get("class") == "slice"]})
    return out


def axes_are_right(name, cs):
    for c in cs:
        check("%s: chart %r has a title" % (name, c["title"]), bool(c["title"] and c["title"].strip()))
        if c["kind"] == "heat":
            continue
        check("%s: %r names its axis" % (name, c["title"]), bool(c["axisname"] and c["axisname"][0]), c["axisname"])
        ends = {}
        for r in c["bars"]:
            key = r.get("data-label") if "where the time went" in c["title"] else (r.get("data-label"),
                                                                                    r.get("data-series"))
            ends[key] = ends.get(key, 0) + float(r.get("data-value"))
        top = max(ends.values()) if ends else max([float(s.get("data-end")) for s in c["slices"]] or [0])
        check("%s: %r: the axis ends at %.6g, at or above the data (%.6g) and within 20%%" % (
            name, c["title"], c["axis_max"], top), top <= c["axis_max"] * (1 + 1e-9) and
            (top == 0 or c["axis_max"] <= top * 1.2 * (1 + 1e-9)))


# ---- the workloads ---------------------------------------------------------------

def p2p(i, kind, peer, size, deps=()):
    a = [{"name": "comm_dst" if kind == "SEND" else "comm_src", "int32_val": peer},
         {"name": "comm_size", "int64_val": str(size)}, {"name": "comm_tag", "int32_val": 7}]
    n = {"id": str(i), "name": "%s%d" % (kind.lower(), i), "type": "COMM_%s_NODE" % kind, "attr": a}
    if deps:
        n["data_deps"] = [str(d) for d in deps]
    return n


def allreduce(i, size, deps=()):
    return {"id": str(i), "name": "ar%d" % i, "type": "COMM_COLL_NODE", "data_deps": [str(d) for d in deps],
            "attr": [{"name": "is_cpu_op", "bool_val": False}, {"name": "comm_type", "int64_val": "0"},
                     {"name": "comm_size", "int64_val": str(size)}]}


def pipeline(w, npus):
    """npus stages in a line: each waits for the previous stage's
    activation, computes, passes it on, then all all-reduce."""
    for r in range(npus):
        nodes, deps = [], []
        if r > 0:
            nodes.append(p2p(1, "RECV", r - 1, 1 << 20))
            deps = [1]
        nodes.append(comp(2, 40 + 10 * r, deps))
        last = 2
        if r + 1 < npus:
            nodes.append(p2p(3, "SEND", r + 1, 1 << 20, [2]))
            last = 3
        nodes.append(allreduce(4, 4 << 20, [last]))
        w.trace("pp.%d" % r, nodes)
    with open(w.path("sys.json"), "w") as f:
        json.dump(SYSTEM, f)
    with open(w.path("net.yml"), "w") as f:
        f.write("topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n" % npus)


def sim(w, *extra):
    p = w.run("sim", "-q", "--workload-configuration=" + w.path("pp"), "--system-configuration=" + w.path("sys.json"),
              "--network-configuration=" + w.path("net.yml"), *extra)
    check("chakra sim %s: exit 0" % " ".join(extra), p.returncode == 0, p.stderr)
    return p


# ---- the pictures ----------------------------------------------------------------

def report_picture(w, tool):
    sim(w, "--network-model=unaware", "--report=" + w.path("a.json"))
    p = w.run("plot", w.path("a.json"), "-o", w.path("report.svg"))
    check("plot of a report: exit 0", p.returncode == 0, p.stderr)
    root = rendered_well(w, tool, w.path("report.svg"), "report")
    rep, cs = json.load(open(w.path("a.json"))), charts(root)
    axes_are_right("report", cs)
    split = [c for c in cs if "where the time went" in c["title"]]
    got = {(b.get("data-label"), b.get("data-series")): float(b.get("data-value")) for b in split[0]["bars"]} \
        if split else {}
    want = {}
    for k in rep["ranks"]:
        lab = "rank %d" % k["rank"]
        want[(lab, "GPU compute")] = k["gpu_ns"]
        want[(lab, "exposed communication")] = k["exposed_comm_ns"] - k["bubble_ns"]
        want[(lab, "pipeline bubble")] = k["bubble_ns"]
    check("report: each rank's bar is its GPU compute, exposed communication and bubble", got == want, (got, want))
    check("report: later stages wait longer (the bubble grows along the pipeline)",
          [k["bubble_ns"] for k in rep["ranks"]] == sorted(k["bubble_ns"] for k in rep["ranks"]) and
          rep["ranks"][-1]["bubble_ns"] > rep["ranks"][0]["bubble_ns"], [k["bubble_ns"] for k in rep["ranks"]])
    labels = [b.get("data-label") for b in split[0]["bars"][::3]] if split else []
    check("report: ranks in numeric order", labels == ["rank %d" % i for i in range(len(rep["ranks"]))], labels)


def side_by_side(w, tool):
    sim(w, "--network-model=aware", "--report=" + w.path("b.json"), "--link-report=" + w.path("links.json"))
    p = w.run("plot", w.path("a.json"), w.path("b.json"), "-o", w.path("side.svg"))
    check("plot A.json B.json: exit 0", p.returncode == 0, p.stderr)
    root = rendered_well(w, tool, w.path("side.svg"), "side by side")
    cs = charts(root)
    axes_are_right("side by side", cs)
    a, b = json.load(open(w.path("a.json"))), json.load(open(w.path("b.json")))
    first = {(r.get("data-label"), r.get("data-series")): float(r.get("data-value")) for r in cs[0]["bars"]}
    check("side by side: each report's iteration time", first.get((w.path("a.json"), "iteration time")) ==
          a["max_finish_ns"] and first.get((w.path("b.json"), "iteration time")) == b["max_finish_ns"], first)
    labels = [r.get("data-label") for r in cs[1]["bars"][::3]]
    want = ["rank %d: %s" % (k, n) for k in range(len(a["ranks"])) for n in (w.path("a.json"), w.path("b.json"))]
    check("side by side: each rank's split, the two reports next to each other", labels == want, labels[:4])
    p = w.run("compare", w.path("a.json"), w.path("b.json"), "-o", w.path("compare.svg"))
    check("compare -o: exit 0", p.returncode == 0, p.stderr)
    cs = charts(rendered_well(w, tool, w.path("compare.svg"), "compare"))
    axes_are_right("compare", cs)
    got = {(r.get("data-label"), r.get("data-series")): float(r.get("data-value")) for r in cs[0]["bars"]}
    check("compare: rank 3's finish, predicted and measured", got.get(("rank 3 finish", "predicted")) ==
          a["ranks"][3]["finish_ns"] and got.get(("rank 3 finish", "measured")) == b["ranks"][3]["finish_ns"], got)
    p = w.run("plot", w.path("a.json"), w.path("links.json"))
    check("side by side of a report and something else: exit 2 naming it", p.returncode == 2 and
          b"links.json" in p.stderr, p.stderr)


def link_picture(w, tool):
    p = w.run("plot", w.path("links.json"), "-o", w.path("links.svg"))
    check("plot of a link report: exit 0", p.returncode == 0, p.stderr)
    root = rendered_well(w, tool, w.path("links.svg"), "links")
    cs = charts(root)
    axes_are_right("links", cs)
    rep = json.load(open(w.path("links.json")))
    want = {(l["src"], l["dst"]): l["utilisation"] for l in rep["links"]}
    got = {(int(c.get("data-row")), int(c.get("data-col"))): float(c.get("data-value")) for c in cs[0]["cells"]}
    check("links: a cell per link, its utilisation", got == want and len(got) == 2 * rep["npus"], (got, want))
    check("links: some link was busy, none beyond 100%", 0 < max(want.values()) <= 1, want)
    busiest = [r.get("data-label") for r in cs[1]["bars"]]
    order = sorted(rep["links"], key=lambda l: (-l["utilisation"], l["src"], l["dst"]))[:12]
    check("links: the busiest links, ties in numeric order", busiest == ["%d \u2192 %d (dimension %d)" % (
        l["src"], l["dst"], l["dim"]) for l in order], busiest)
    p = subprocess.run([w.chakra, "sim", "-q", "--workload-configuration=" + w.path("pp"),
                        "--system-configuration=" + w.path("sys.json"), "--network-configuration=" + w.path("net.yml"),
                        "--network-model=unaware", "--link-report=" + w.path("none.json")], capture_output=True)
    check("--link-report with the unaware model: exit 2, one line, nothing written",
          p.returncode == 2 and p.stderr.count(b"\n") == 1 and b"congestion-aware" in p.stderr and
          not os.path.exists(w.path("none.json")), p.stderr)


def sweep_picture(w, tool):
    p = w.run("sweep", "--workload", w.path("pp"), "--system", w.path("sys.json"), "--network", w.path("net.yml"),
              "--vary", "bandwidth=100,25,200,50", "--vary", "latency=5000,500", "-o", w.path("grid.json"))
    check("sweep: exit 0", p.returncode == 0, p.stderr)
    p = w.run("plot", w.path("grid.json"), "-o", w.path("grid.svg"))
    check("plot of a sweep table: exit 0", p.returncode == 0, p.stderr)
    root = rendered_well(w, tool, w.path("grid.svg"), "sweep")
    cs = charts(root)
    axes_are_right("sweep", cs)
    labels = [r.get("data-label") for r in cs[0]["bars"][::3]]
    want = ["bandwidth=%d, latency=%d" % (b, l) for b in (25, 50, 100, 200) for l in (500, 5000)]
    check("sweep: configurations in numeric order", labels == want, labels)
    rows = {", ".join("%s=%s" % kv for kv in r["config"].items()): r for r in json.load(open(w.path("grid.json")))["rows"]}
    got = {r.get("data-label"): float(r.get("data-value")) for r in cs[0]["bars"]
           if r.get("data-series") == "iteration time"}
    check("sweep: each bar is its row's max_finish_ns", got == {k: v["max_finish_ns"] for k, v in rows.items()}, got)


def timeline_picture(w, tool):
    p = w.run("timeline", "--svg", w.path("pp"), "-o", w.path("tl.svg"))
    check("timeline --svg: exit 0", p.returncode == 0, p.stderr)
    p = w.run("timeline", w.path("pp"), "-o", w.path("tl.json"))
    root = rendered_well(w, tool, w.path("tl.svg"), "timeline")
    cs = charts(root)
    axes_are_right("timeline", cs)
    ev = json.load(open(w.path("tl.json")))["traceEvents"]
    spans = [e for e in ev if e.get("ph") == "X"]
    tracks = [e for e in ev if e.get("name") == "thread_name"]
    lanes = cs[0]["labels"]
    check("timeline: a lane per track of the JSON timeline, labelled rank then track",
          len(lanes) == len(tracks) and lanes[0].startswith("rank 0: "), (len(lanes), len(tracks), lanes[:3]))
    drawn = sum(int(s.get("data-count")) for s in cs[0]["slices"])
    ends = max(float(s.get("data-end")) for s in cs[0]["slices"])
    check("timeline: every slice drawn, ending where the JSON timeline ends",
          drawn == len(spans) and abs(ends / 1000 - max(e["ts"] + e["dur"] for e in spans)) < 1e-3,
          (drawn, len(spans), ends))


def long_labels_are_not_cut(w, tool):
    """Names far longer than the default margin widen the picture."""
    stats = {"total": {"nodes_by_type": {"COMP_NODE": 3}, "collectives": {},
                       "groups": {"g" * 90: {"bytes": 5}, "10": {"bytes": 7}, "9": {"bytes": 1}, "100": {"bytes": 2}}}}
    with open(w.path("st.json"), "w") as f:
        json.dump(stats, f)
    p = w.run("plot", w.path("st.json"), "-o", w.path("st.svg"))
    check("plot of statistics with a 90-character group: exit 0", p.returncode == 0, p.stderr)
    root = rendered_well(w, tool, w.path("st.svg"), "long labels")
    groups = [r.get("data-label") for r in charts(root)[2]["bars"]]
    check("statistics: groups in numeric order", groups == ["9", "10", "100", "g" * 90], groups)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    tool = renderer()
    if not tool:
        print("SKIP: neither rsvg-convert (Debian librsvg2-bin, scripts/install-deps.sh) nor chromium is installed: "
              "the pictures are not rendered")
        return 77
    w = Work(sys.argv[1])
    try:
        pipeline(w, 4)
        for t in (report_picture, side_by_side, link_picture, sweep_picture, timeline_picture,
                  long_labels_are_not_cut):
            t(w, tool)
    finally:
        w.close()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
