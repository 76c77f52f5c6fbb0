#!/usr/bin/python3
"""Runs every case of shared/data/reference/sim/cases.jsonl through `chakra sim`
and compares each rank's finish and exposed-communication times with the
reference (ASTRA-sim's analytical backends), exactly.

usage: sim_cases.py CHAKRA_BINARY [SHARED_DIR] [--only SUBSTRING] [--verbose]
Exit 0 all pass, 1 some fail, 77 shared data absent (CTest skip)."""
import json
import os
import re
import subprocess
import sys

LINE = re.compile(r"^sys\[(\d+)\] finished, (\d+) cycles, exposed communication (\d+) cycles\.$")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    only = None
    if "--only" in sys.argv:
        only = sys.argv[sys.argv.index("--only") + 1]
        args.remove(only)
    verbose = "--verbose" in sys.argv
    binary = os.path.abspath(args[0])
    shared = args[1] if len(args) > 1 else os.environ.get("CHAKRA_SHARED") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared")
    suite = os.path.join(shared, "data", "reference", "sim")
    manifest = os.path.join(suite, "cases.jsonl")
    if not os.path.exists(manifest):
        print("SKIP: %s not found (shared reference data absent)" % manifest)
        return 77
    passed = failed = 0
    with open(manifest) as f:
        cases = [json.loads(l) for l in f if l.strip()]
    for c in cases:
        if only and only not in c["name"]:
            continue
        cmd = [binary, "sim", "-q",
               "--workload-configuration=" + c["workload"],
               "--system-configuration=" + c["system"],
               "--network-configuration=" + c["network"],
               "--remote-memory-configuration=" + c["remote_memory"],
               "--network-model=" + c["backend"]]
        if c.get("groups"):
            cmd.append("--comm-group-configuration=" + c["groups"])
        p = subprocess.run(cmd, cwd=suite, capture_output=True, text=True, timeout=600)
        got = {}
        for line in p.stdout.splitlines():
            m = LINE.match(line)
            if m:
                got[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
        exp_f = c["expected"]["finish_ns"]
        exp_e = c["expected"]["exposed_comm_ns"]
        problem = None
        if p.returncode != 0:
            problem = "exit %d: %s" % (p.returncode, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "")
        else:
            for r in range(len(exp_f)):
                if r not in got:
                    problem = "rank %d printed no finished line" % r
                    break
                if got[r] != (exp_f[r], exp_e[r]):
                    problem = "rank %d: finish %d exposed %d, expected %d and %d" % (
                        r, got[r][0], got[r][1], exp_f[r], exp_e[r])
                    break
            if not problem and len(got) != len(exp_f):
                problem = "%d ranks reported, expected %d" % (len(got), len(exp_f))
        if problem:
            failed += 1
            print("FAIL %s (%s): %s" % (c["name"], c["backend"], problem))
        else:
            passed += 1
            if verbose:
                print("ok   %s" % c["name"])
    print("%d passed, %d failed" % (passed, failed))
    if passed + failed == 0:
        print("FAIL: no case ran (%s)" % ("none matches --only %r" % only if only else "the manifest is empty"))
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
