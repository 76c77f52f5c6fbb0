#!/usr/bin/python3
"""validate_shared.py - `chakra validate` on every multi-rank trace set in
../shared and on the quick start's own example, so that the sanitizer run
sees the cross-rank code paths (a workload without point-to-point nodes once
passed NULL to qsort, which UBSan aborts on).

Each set must validate cleanly: exit 0 and "0 error(s)". Our own converter's
output of the shared PyTorch traces passes `validate --strict` (a parent that
is both a data and a control dependency is legal and merged, not a warning).
The quick-start part
needs no shared data; the rest skips, saying so, when ../shared is absent.

Usage: validate_shared.py CHAKRA SOURCE_DIR
"""
import glob
import os
import subprocess
import sys
import tempfile

CHAKRA, SOURCE = sys.argv[1], sys.argv[2]
passed, failed = 0, 0


def validate(prefix, what, strict=False):
    global passed, failed
    # a set's comm-group file (STAGE writes PREFIX.json) is given, as to sim
    groups = ["--comm-group-configuration", prefix + ".json"] if os.path.exists(prefix + ".json") else []
    r = subprocess.run([CHAKRA, "validate"] + (["--strict"] if strict else []) + [prefix] + groups,
                       capture_output=True, text=True)
    ok = r.returncode == 0 and " 0 error(s)" in r.stdout
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s: exit %d\n%s%s" % (what, r.returncode, r.stdout[-2000:], r.stderr[-2000:]))


with tempfile.TemporaryDirectory() as d:
    for coll in ("all_reduce", "all_to_all"):
        prefix = os.path.join(d, coll)
        subprocess.run([CHAKRA, "gen", "microbench", "--coll", coll, "--npus", "8", "--size", "1048576",
                        "-o", prefix], check=True)
        validate(prefix, "quick-start style %s" % coll)

shared = os.environ.get("CHAKRA_SHARED") or os.path.join(SOURCE, "..", "shared")
traces = os.path.join(shared, "data", "traces")
if not os.path.isdir(traces):
    print("skip: %s absent; only the generated workloads were validated" % traces)
else:
    sets = sorted(p[:-len(".1.et")] for p in glob.glob(os.path.join(traces, "**", "*.1.et"), recursive=True))
    if not sets:
        failed += 1
        print("FAIL: no multi-rank trace set found under %s" % traces)
    for prefix in sets:
        validate(prefix, os.path.relpath(prefix, traces))
    with tempfile.TemporaryDirectory() as d:
        host = os.path.join(traces, "pytorch-host", "host_et.1.0.2-chakra.0.0.4.json")
        pair = os.path.join(traces, "kineto-pair")
        runs = [("host", [host]),
                ("linked", [os.path.join(pair, "simple_add.host_et.json.gz"),
                            os.path.join(pair, "simple_add.kineto.json.gz")])]
        for name, ins in runs:
            out = os.path.join(d, name + ".et")
            r = subprocess.run([CHAKRA, "convert", "pytorch"] + ins + ["-o", out, "-q"], capture_output=True,
                               text=True)
            if r.returncode:
                failed += 1
                print("FAIL: convert %s: %s" % (name, r.stderr))
                continue
            validate(out, "converted %s trace, --strict" % name, strict=True)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
