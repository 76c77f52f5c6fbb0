#!/usr/bin/python3
"""chakra timeline: as-soon-as-possible schedule with recorded durations,
recorded start times where present, one process per rank, one track per
resource kind with lanes where nodes overlap, microseconds, and names that
need escaping.

usage: timeline_test.py CHAKRA_BINARY   (exit 0 pass, 1 fail)"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtest import check, comp, coll, main  # noqa: E402


def load(w, *args):
    out = w.path("tl.json")
    if os.path.exists(out):
        os.remove(out)
    p = w.run("timeline", "-q", *args, "-o", out)
    if p.returncode != 0:
        return p, None
    with open(out, encoding="utf-8") as f:
        return p, json.load(f)


def slices(doc):
    return {e["args"]["node_id"]: e for e in doc["traceEvents"] if e["ph"] == "X"}


def tracks(doc):
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
            if e["ph"] == "M" and e["name"] == "thread_name"}


def test_asap_schedule_uses_recorded_durations(w):
    # 1 (10 us) -> 2 (20 us), 1 -> 3 (5 us, CPU), {2, 3} -> 4 all-reduce (dur 0), 4 -> 5 (7 us)
    t = w.trace("diamond", [comp(1, 10), comp(2, 20, [1]), comp(3, 5, [1], cpu=True), coll(4, 4096, [2, 3]),
                            comp(5, 7, [4])])
    p, doc = load(w, t)
    if not doc:
        check("timeline of a diamond", False, p.stderr)
        return
    s = slices(doc)
    got = {i: (s[i]["ts"], s[i]["dur"]) for i in s}
    check("ASAP: each node starts when its last dependency ends, for its duration in microseconds",
          got == {1: (0, 10), 2: (10, 20), 3: (10, 5), 4: (30, 0), 5: (30, 7)}, got)
    names = {s[i]["tid"]: tracks(doc)[(0, s[i]["tid"])] for i in s}
    kinds = {i: tracks(doc)[(0, s[i]["tid"])] for i in s}
    check("tracks by resource kind: CPU, GPU compute, GPU communication",
          kinds == {1: "GPU compute", 2: "GPU compute", 3: "CPU", 4: "GPU communication", 5: "GPU compute"},
          (kinds, names))
    check("slices carry type and id", s[4]["cat"] == "COMM_COLL_NODE" and s[4]["name"] == "ar4", s[4])
    check("displayTimeUnit and one process named rank 0",
          doc["displayTimeUnit"] == "ns" and [e["args"]["name"] for e in doc["traceEvents"]
                                              if e["name"] == "process_name"] == ["rank 0"], doc["traceEvents"][:3])


def test_recorded_start_times_win(w):
    n = [comp(1, 10), comp(2, 20, [1]), comp(3, 5, [2])]
    n[0]["start_time_micros"] = "1000"
    n[1]["start_time_micros"] = "1050"  # recorded later than its dependency's end
    p, doc = load(w, w.trace("starts", n))
    s = slices(doc) if doc else {}
    got = {i: (s[i]["ts"], s[i]["dur"]) for i in s}
    check("recorded starts are used; unrecorded nodes follow their dependencies",
          got == {1: (1000, 10), 2: (1050, 20), 3: (1070, 5)}, (got, p.stderr))


def test_overlapping_nodes_get_lanes_and_never_overlap_partially(w):
    # three independent computes at time 0 and a fourth after the shortest
    t = w.trace("wide", [comp(1, 10), comp(2, 4), comp(3, 6), comp(4, 3, [2])])
    p, doc = load(w, t)
    s = slices(doc)
    tr = tracks(doc)
    used = sorted(tr[(0, s[i]["tid"])] for i in s)
    check("three overlapping computes use three lanes; the fourth reuses a freed one",
          sorted(set(used)) == ["GPU compute", "GPU compute 2", "GPU compute 3"] and s[4]["tid"] == s[2]["tid"], used)
    ok = True
    by_tid = {}
    for e in s.values():
        by_tid.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_tid.values():
        spans.sort()
        ok &= all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    check("no two slices of one track overlap", ok, by_tid)


def test_recorded_nested_slices_share_a_track(w):
    n = [comp(1, 100), comp(2, 20), comp(3, 10), comp(4, 5)]
    for node, start in zip(n, (1000, 1010, 1040, 1200)):
        node["start_time_micros"] = str(start)
    p, doc = load(w, w.trace("nested", n))
    s = slices(doc)
    check("recorded slices inside a recorded slice nest on its track; later ones reuse it",
          len({e["tid"] for e in s.values()}) == 1 and len(tracks(doc)) == 1, (s, tracks(doc)))


def test_one_process_per_rank_from_a_prefix(w):
    for r in range(3):
        w.trace("ranks.%d" % r, [comp(1, 5 + r), coll(2, 1024, [1])])
    p, doc = load(w, w.path("ranks"))
    procs = sorted((e["pid"], e["args"]["name"]) for e in doc["traceEvents"] if e["name"] == "process_name")
    ends = sorted((e["pid"], e["ts"]) for e in doc["traceEvents"] if e["ph"] == "X" and e["args"]["node_id"] == 2)
    check("PREFIX: a process per rank, each scheduled on its own durations",
          procs == [(0, "rank 0"), (1, "rank 1"), (2, "rank 2")] and ends == [(0, 5), (1, 6), (2, 7)], (procs, ends))


def test_names_are_escaped_json(w):
    t = w.trace("names", [comp(1, 1, name='a "quoted", comma\nand \\ backslash \u2713')])
    p, doc = load(w, t)
    check("any name survives as JSON", doc is not None and slices(doc)[1]["name"] ==
          'a "quoted", comma\nand \\ backslash \u2713', p.stderr)


def test_bad_input_fails_without_output(w):
    bad = w.path("bad.et")
    with open(bad, "wb") as f:
        f.write(b"\x05\x0a\x03")
    out = w.path("never.json")
    p = w.run("timeline", bad, "-o", out)
    check("a truncated trace: exit 2, one line naming the file, no output",
          p.returncode == 2 and bad.encode() in p.stderr and not os.path.exists(out), (p.returncode, p.stderr))


def test_simulator_timeline_is_this_writers_format(w):
    """chakra sim --timeline re-emitted through chakra_timeline_* is byte-identical,
    so the simulator can use this writer without changing its output."""
    rewrite = os.environ.get("TIMELINE_REWRITE")
    if not rewrite:
        print("skip simulator-format check: TIMELINE_REWRITE not set")
        return
    for r in range(2):
        w.trace("sim.%d" % r, [comp(1, 3, name="c,1"), coll(2, 65536, [1]), comp(3, 2, [1], cpu=True)])
    with open(w.path("sys.json"), "w") as f:
        json.dump({"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
                   "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring"],
                   "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
                   "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware",
                   "local-mem-bw": 1600}, f)
    with open(w.path("net.yml"), "w") as f:
        f.write("topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n")
    tl = w.path("sim-tl.json")
    p = w.run("sim", "-q", "--workload-configuration=" + w.path("sim"), "--system-configuration=" + w.path("sys.json"),
              "--network-configuration=" + w.path("net.yml"), "--network-model=unaware", "--timeline=" + tl)
    if p.returncode != 0:
        check("chakra sim --timeline runs", False, p.stderr)
        return
    out = w.path("rewritten.json")
    r = subprocess.run([rewrite, tl, out], capture_output=True)
    same = r.returncode == 0 and open(tl, "rb").read() == open(out, "rb").read()
    check("the simulator's timeline re-emitted through chakra_timeline_* is byte-identical", same, r.stderr)


if __name__ == "__main__":
    sys.exit(main([test_asap_schedule_uses_recorded_durations, test_recorded_start_times_win,
                   test_overlapping_nodes_get_lanes_and_never_overlap_partially, test_recorded_nested_slices_share_a_track,
                   test_one_process_per_rank_from_a_prefix,
                   test_names_are_escaped_json, test_bad_input_fails_without_output,
                   test_simulator_timeline_is_this_writers_format]))
