#!/usr/bin/python3
"""chakra plot: the SVG of a `chakra sim --report` and of `chakra stats
--json` parses as XML, and its bars carry (data-value) and are drawn to
(width = value x the chart's data-scale) the numbers of the report.

usage: plot_test.py CHAKRA_BINARY   (exit 0 pass, 1 fail)"""
import json
import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtest import NS, SYSTEM, check, comp, coll, main  # noqa: E402



def bars(svg_path):
    """{(chart title, label, series): (value, width, scale)}"""
    root = ET.parse(svg_path).getroot()
    out = {}
    for g in root.iter(NS + "g"):
        title = g.find(NS + "text").text
        scale = float(g.get("data-scale"))
        for r in g.iter(NS + "rect"):
            if r.get("class") == "bar":
                out[(title, r.get("data-label"), r.get("data-series"))] = (float(r.get("data-value")),
                                                                          float(r.get("width")), scale)
    return out


def drawn_to_scale(b):
    return all(abs(w - v * s) < 1e-3 for v, w, s in b.values())


def workload(w):
    for r in range(4):
        w.trace("wl.%d" % r, [comp(1, 10 + r), coll(2, 1 << 20, [1]), comp(3, 5, [1], cpu=True),
                              coll(4, 1 << 16, [2], comm_type=2), comp(5, 20, [2])])
    with open(w.path("sys.json"), "w") as f:
        json.dump(SYSTEM, f)
    with open(w.path("net.yml"), "w") as f:
        f.write("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n")


def test_sim_report_bars_match_the_report(w):
    workload(w)
    rep, svg = w.path("report.json"), w.path("report.svg")
    p = w.run("sim", "-q", "--workload-configuration=" + w.path("wl"), "--system-configuration=" + w.path("sys.json"),
              "--network-configuration=" + w.path("net.yml"), "--network-model=unaware", "--report=" + rep)
    if p.returncode:
        check("chakra sim --report runs", False, p.stderr)
        return
    p = w.run("plot", rep, "-o", svg)
    check("plot of a sim report: exit 0", p.returncode == 0, p.stderr)
    try:
        b = bars(svg)
    except ET.ParseError as e:
        check("the SVG parses as XML", False, e)
        return
    report = json.load(open(rep))
    per_rank = "Per rank: GPU compute, exposed communication, overlap"
    ok = True
    for r in report["ranks"]:
        lab = "rank %d" % r["rank"]
        ok &= b.get((per_rank, lab, "GPU compute"), (None,))[0] == r["gpu_ns"]
        ok &= b.get((per_rank, lab, "exposed communication"), (None,))[0] == r["exposed_comm_ns"]
        ok &= b.get((per_rank, lab, "overlap"), (None,))[0] == r["overlap_ns"]
        ok &= b.get((per_rank, lab, "CPU"), (None,))[0] == r["cpu_ns"]
    check("per-rank bars carry the report's gpu_ns, exposed_comm_ns, overlap_ns, cpu_ns",
          ok and len([k for k in b if k[0] == per_rank]) == 16, b)
    coll_time = {}
    for r in report["ranks"]:
        for t, c in r["collectives"].items():
            coll_time[t] = coll_time.get(t, 0) + c["time_ns"]
    got = {k[1]: v[0] for k, v in b.items() if k[0].startswith("Collective time")}
    check("collective time by type is the report's time_ns summed over ranks", got == coll_time and len(got) == 2,
          (got, coll_time))
    check("every bar is drawn to its chart's scale", drawn_to_scale(b), b)


def test_stats_bars_match_the_statistics(w):
    workload(w)
    st, svg = w.path("stats.json"), w.path("stats.svg")
    p = w.run("stats", "--json", w.path("wl"))
    with open(st, "wb") as f:
        f.write(p.stdout)
    p = w.run("plot", st, "-o", svg)
    b = bars(svg)
    total = json.load(open(st))["total"]
    nodes = {k[1]: v[0] for k, v in b.items() if k[0].startswith("Nodes by type")}
    colls = {k[1]: v[0] for k, v in b.items() if k[0].startswith("Collective bytes")}
    groups = {k[1]: v[0] for k, v in b.items() if k[0].startswith("Communication volume")}
    check("nodes by type are the totals", p.returncode == 0 and nodes == total["nodes_by_type"] and
          nodes == {"COMP_NODE": 12, "COMM_COLL_NODE": 8}, nodes)
    check("collective bytes by type are the totals",
          colls == {k: v["bytes"] for k, v in total["collectives"].items()} and colls["ALL_GATHER"] == 4 << 16, colls)
    check("communication volume per group", groups == {"(all ranks)": total["groups"][""]["bytes"]}, groups)
    check("stats bars drawn to scale", drawn_to_scale(b), b)


def test_bad_reports_are_refused(w):
    bad = w.path("bad.json")
    with open(bad, "w") as f:
        f.write('{"ranks": [1, 2')
    p = w.run("plot", bad, "-o", w.path("bad.svg"))
    check("truncated JSON: exit 2 naming the file, nothing written",
          p.returncode == 2 and bad.encode() in p.stderr and not os.path.exists(w.path("bad.svg")), p.stderr)
    other = w.path("other.json")
    with open(other, "w") as f:
        f.write('{"hello": "world"}')
    p = w.run("plot", other)
    check("another JSON document: exit 2 saying what was expected", p.returncode == 2 and b"neither" in p.stderr,
          p.stderr)


if __name__ == "__main__":
    sys.exit(main([test_sim_report_bars_match_the_report, test_stats_bars_match_the_statistics,
                   test_bad_reports_are_refused]))
