#!/usr/bin/env python3
"""Compares two per-rank ET workloads up to node ids and file order.

For every rank: the same multiset of nodes (type, name, attributes with their
value kinds, pg_name), the same data and control dependencies after mapping
ids to node names. Pipeline tags may be ignored (STAGE draws them at random).
Usage: compare_et.py --chakra BIN A_PREFIX B_PREFIX RANKS [--ignore-attr NAME]...
Exit 0 when equal, 1 with the first differences listed."""
import argparse
import collections
import json
import subprocess
import sys


def load(chakra, path, ignore):
    out = subprocess.run([chakra, "jsonize", path], check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    meta = json.loads(lines[0])
    nodes = [json.loads(l) for l in lines[1:]]
    names = {n.get("id", "0"): n["name"] for n in nodes}
    items = []
    for n in nodes:
        attrs = sorted(json.dumps(a, sort_keys=True) for a in n.get("attr", []) if a["name"] not in ignore)
        data = sorted(names.get(d, "<missing %s>" % d) for d in n.get("data_deps", []))
        ctrl = sorted(names.get(d, "<missing %s>" % d) for d in n.get("ctrl_deps", []))
        items.append(json.dumps([n["type"], n["name"], attrs, data, ctrl]))
    return meta, collections.Counter(items)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chakra", required=True)
    ap.add_argument("--ignore-attr", action="append", default=[])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("ranks", type=int)
    args = ap.parse_args()
    bad = 0
    for r in range(args.ranks):
        ma, a = load(args.chakra, "%s.%d.et" % (args.a, r), set(args.ignore_attr))
        mb, b = load(args.chakra, "%s.%d.et" % (args.b, r), set(args.ignore_attr))
        if ma != mb:
            print("rank %d: global metadata differs: %s vs %s" % (r, ma, mb))
            bad += 1
        if a != b:
            bad += 1
            only_a, only_b = a - b, b - a
            print("rank %d: %d nodes only in %s, %d only in %s" % (r, sum(only_a.values()), args.a,
                                                                 sum(only_b.values()), args.b))
            for x in list(only_a)[:3]:
                print("  < " + x[:600])
            for x in list(only_b)[:3]:
                print("  > " + x[:600])
    if bad:
        return 1
    print("equal: %d ranks" % args.ranks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
