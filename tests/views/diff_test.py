#!/usr/bin/python3
"""chakra diff: node changes by id and by name and position, summary
figures, prefixes with different rank counts, JSON, and diff's exit
statuses (0 equal, 1 different, 2 error).

usage: diff_test.py CHAKRA_BINARY   (exit 0 pass, 1 fail)"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtest import check, comp, coll, main  # noqa: E402


def base(shift=0):
    """Names do not depend on ids, so that renumbered copies match by name."""
    return [comp(1 + shift, 10, name="comp1"), comp(2 + shift, 20, [1 + shift], name="comp2"),
            coll(3 + shift, 1024, [2 + shift], pg="1", name="ar3"), comp(4 + shift, 5, [3 + shift], name="comp4"),
            comp(5 + shift, 7, [4 + shift], name="comp5")]


def test_identical_traces_are_equal(w):
    a, b = w.trace("same_a", base()), w.trace("same_b", base())
    p = w.run("diff", a, b)
    check("identical traces: exit 0, 'equal'", p.returncode == 0 and b"equal (5 nodes)" in p.stdout, p)


def changed():
    n = base()
    n[1]["duration_micros"] = "25"                                   # duration
    n[2]["attr"][2]["int64_val"] = "4096"                            # comm_size
    n[4]["data_deps"] = ["2"]                                        # deps 4 -> 2
    del n[3]                                                         # node 4 removed
    n.append(comp(6, 3, [5], name="new one"))                        # node 6 added
    return n


def test_changes_are_listed_and_summarised(w):
    a, b = w.trace("ch_a", base()), w.trace("ch_b", changed())
    p = w.run("diff", a, b)
    out = p.stdout.decode()
    check("different traces: exit 1", p.returncode == 1, (p.returncode, p.stderr))
    check("counts: 1 added, 1 removed, 3 changed, 1 same", "5 vs 5 nodes: 1 added, 1 removed, 3 changed, 1 same" in out,
          out)
    check("duration change named with both values", '~ node 2 "comp2" COMP_NODE: duration 20 -> 25 us' in out, out)
    check("attribute change named with both values", "attr comm_size 1024 -> 4096" in out, out)
    check("dependency change named with the ids", "data deps +{2} -{4} (1 -> 1)" in out, out)
    check("added and removed nodes listed", '+ node 6 "new one" COMP_NODE' in out and '- node 4 "comp4" COMP_NODE' in out,
          out)
    check("summary: collective and group bytes, critical path",
          "collective ALL_REDUCE bytes: 1024 -> 4096" in out and "group 1 bytes: 1024 -> 4096" in out
          and "critical path us: 42 -> 45" in out, out)


def test_json_report(w):
    a, b = w.trace("js_a", base()), w.trace("js_b", changed())
    p = w.run("diff", "--json", a, b)
    try:
        d = json.loads(p.stdout)
    except ValueError as e:
        check("--json is one JSON document", False, e)
        return
    r = d["ranks"][0]
    kinds = sorted((n["change"], n.get("id_a"), n.get("id_b")) for n in r["nodes"])
    check("--json: equal false, counts, node list",
          p.returncode == 1 and d["equal"] is False and (r["added"], r["removed"], r["changed"]) == (1, 1, 3)
          and kinds == [("added", None, 6), ("changed", 2, 2), ("changed", 3, 3), ("changed", 5, 5),
                        ("removed", 4, None)], (d, kinds))
    fig = {f["figure"]: (f["a"], f["b"]) for f in r["summary"]}
    check("--json summary figures", fig == {"collective ALL_REDUCE bytes": (1024, 4096), "group 1 bytes": (1024, 4096),
                                            "GPU compute us": (42, 45), "critical path us": (42, 45)}, fig)
    check("--json what lists the changed fields", {tuple(n["what"]) for n in r["nodes"] if n["change"] == "changed"} ==
          {("duration",), ("attributes",), ("data deps",)}, r["nodes"])


def test_by_name_matches_renumbered_traces(w):
    a, b = w.trace("rn_a", base()), w.trace("rn_b", base(shift=100))
    p = w.run("diff", a, b)
    check("renumbered ids: by id everything is added and removed",
          p.returncode == 1 and b"5 added, 5 removed, 0 changed" in p.stdout, p.stdout)
    p = w.run("diff", "--by-name", a, b)
    check("renumbered ids: --by-name finds them equal", p.returncode == 0 and b"equal" in p.stdout, p.stdout)
    n = base(shift=100)
    n[3]["data_deps"] = ["101"]  # comp4 now depends on comp1 instead of ar3
    p = w.run("diff", "--by-name", a, w.trace("rn_c", n))
    check("--by-name sees a dependency moved to another named node",
          p.returncode == 1 and b'~ node 104 (was 4) "comp4" COMP_NODE: data deps differ (1 -> 1)' in p.stdout, p.stdout)


def test_prefixes_with_different_rank_counts(w):
    for r in range(3):
        w.trace("pa.%d" % r, base())
        if r < 2:
            w.trace("pb.%d" % r, base())
    p = w.run("diff", w.path("pa"), w.path("pb"))
    check("prefixes of 3 and 2 ranks: exit 1, the count is reported, the shared ranks compared",
          p.returncode == 1 and b"ranks: 3 vs 2" in p.stdout and p.stdout.count(b"equal (5 nodes)") == 2, p.stdout)


def test_limit_and_errors(w):
    a = w.trace("lim_a", [comp(i, 1, [i - 1] if i > 1 else []) for i in range(1, 31)])
    b = w.trace("lim_b", [comp(i, 2, [i - 1] if i > 1 else []) for i in range(1, 31)])
    p = w.run("diff", "--limit", 3, a, b)
    check("--limit 3 lists three changes and counts the rest",
          p.stdout.count(b"\n  ~ ") == 3 and b"... 27 more node changes" in p.stdout, p.stdout)
    p = w.run("diff", "-q", a, b)
    check("-q: no output, exit 1", p.returncode == 1 and not p.stdout, p)
    p = w.run("diff", a, w.path("absent.et"))
    check("a missing input: exit 2 naming it", p.returncode == 2 and b"absent.et" in p.stderr, p)
    p = w.run("diff", a)
    check("one input: usage error 2", p.returncode == 2, p)


if __name__ == "__main__":
    sys.exit(main([test_identical_traces_are_equal, test_changes_are_listed_and_summarised, test_json_report,
                   test_by_name_matches_renumbered_traces, test_prefixes_with_different_rank_counts,
                   test_limit_and_errors]))
