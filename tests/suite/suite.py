#!/usr/bin/python3
"""Pins what `chakra suite` does (docs/suite.md) on the small suite version
tiny-1.0 (and `make` of the whole suite): the workloads are the pinned
bytes, made the same twice; a run round-trips through check (every number
re-simulated exactly) and score (speedups and geometric means recomputed
here); threads and MPI processes change nothing but the time; a changed
workload byte, a changed or rule-breaking system file and an edited number
are caught with exit 1, an invalid result is one line and exit 2.

usage: suite.py CHAKRA_BINARY SOURCE_DIR"""
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpitest import CHAKRA, ENV, check, have_mpi, run, run_tests  # noqa: E402

TINY = "tiny-1.0"
METRICS = ("ok", "time_ns", "exposed_ns", "compute_ns", "comm_bytes", "events", "exposed_share", "bus_bw_gbps",
           "compute_util")

SYSTEM_B = {
    "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 2,
    "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring", "ring"],
    "all-gather-implementation": ["ring", "ring"], "reduce-scatter-implementation": ["ring", "ring"],
    "all-to-all-implementation": ["ring", "ring"], "collective-optimization": "localBWAware",
    "local-mem-bw": 8000, "boost-mode": 0, "roofline-enabled": 1, "peak-perf": 2250}


def metrics(result):
    return {w["name"]: tuple(w[k] for k in METRICS) for w in result["workloads"]}


def workload_hash(folder, files):
    """The manifest's rule: SHA-256 over "HEX  NAME\\n" lines in name order."""
    lines = ""
    for name in sorted(files):
        lines += hashlib.sha256(open(os.path.join(folder, name), "rb").read()).hexdigest() + "  " + name + "\n"
    return hashlib.sha256(lines.encode()).hexdigest()


def test_list_shows_versions_classes_and_pins(work):
    p = run("suite", "list", "--suite-version", TINY, "-v")
    check(p.returncode == 0, "list ran: " + p.stderr)
    for cls in ("dense", "moe", "inference", "recommendation", "microbench", "collalgo"):
        check("class " + cls in p.stdout, "class %s listed" % cls)
    check("versions: 1.1 1.0 tiny-1.0" in p.stdout, "versions listed: " + p.stdout[-80:])
    full = run("suite", "list").stdout
    for n in ("gpt3-175b-n32768", "llama70b-n4096", "mixtral-8x7b-n512", "llama70b-decode-tp8", "dlrm-n512",
              "a2a-1g-n512", "ar-1g-n4096", "ar-tacos-mesh8x8"):
        check(n in full, "suite 1.0 lists " + n)
    # all-to-all stops at 512 ranks: at 4,096 every rank's ring passes n-1
    # steps, about 1.3 billion events whatever the size (docs/suite.md)
    for size in ("1k", "1m", "1g"):
        check("a2a-%s-n4096" % size not in full, "suite 1.0 has no a2a-%s-n4096" % size)
    for args, what in ((("--suite-version", "9.9"), "--suite-version"), (("--class", "nope"), "--class")):
        p = run("suite", "list", *args)
        check(p.returncode == 2 and p.stderr.count("\n") == 1 and what in p.stderr,
              "%s: one line, exit 2: %r" % (args, p.stderr))


def test_make_writes_the_pinned_bytes_twice(work):
    a, b = os.path.join(work, "mk-a"), os.path.join(work, "mk-b")
    for d in (a, b):
        p = run("suite", "make", "--suite-version", TINY, "-q", "-o", d)
        check(p.returncode == 0, "make ran: " + p.stderr)
    ma, mb = json.load(open(os.path.join(a, "suite.json"))), json.load(open(os.path.join(b, "suite.json")))
    check(ma["workloads"] == mb["workloads"], "two makes, one manifest")
    pins = run("suite", "list", "--suite-version", TINY, "-v").stdout
    for w in ma["workloads"]:
        names = [f["name"] for f in w["files"]]
        for f in w["files"]:
            got = hashlib.sha256(open(os.path.join(a, f["name"]), "rb").read()).hexdigest()
            check(got == f["sha256"], "%s: the manifest's hash" % f["name"])
        check(workload_hash(a, names) == w["sha256"], "%s: the workload hash is the documented rule" % w["name"])
        check("sha256 " + w["sha256"] in pins, "%s: the version's pin" % w["name"])
    p = run("suite", "make", "--suite-version", TINY, "--class", "collalgo", "-q", "-o", os.path.join(work, "mk-c"))
    m = json.load(open(os.path.join(work, "mk-c", "suite.json")))
    check(p.returncode == 0 and {w["class"] for w in m["workloads"]} == {"collalgo"}, "--class makes one class")
    # a make over an earlier one that fails part way (a workload file is a
    # folder, which its rename cannot replace) leaves no manifest
    victim = os.path.join(b, ma["workloads"][-1]["files"][0]["name"])
    os.remove(victim)
    os.mkdir(victim)
    p = run("suite", "make", "--suite-version", TINY, "-q", "-o", b)
    check(p.returncode == 2 and not os.path.exists(os.path.join(b, "suite.json")),
          "a failed make leaves no suite.json: %d %r" % (p.returncode, p.stderr[-200:]))


def test_make_of_the_whole_suite_is_fast_and_pinned(work):
    t = time.time()
    p = run("suite", "make", "-q", "-o", os.path.join(work, "full"))
    took = time.time() - t
    check(p.returncode == 0, "the whole suite made and held to its pins: " + p.stderr)
    size = sum(os.path.getsize(os.path.join(work, "full", f)) for f in os.listdir(os.path.join(work, "full")))
    check(took < 30 and size < 2e9, "whole suite: %.1f s, %d bytes (floors: 30 s, 2 GB)" % (took, size))
    shutil.rmtree(os.path.join(work, "full"))


def test_result_round_trips_through_check_and_score(work):
    ref, b = os.path.join(work, "ref.json"), os.path.join(work, "b.json")
    check(run("suite", "run", "tiny", "-q", "-o", ref).returncode == 0, "reference run")
    sysb = os.path.join(work, "sysB.json")
    json.dump(SYSTEM_B, open(sysb, "w"))
    netb = os.path.join(work, "netB.yml")
    open(netb, "w").write("topology: [ Switch, Switch ]\nnpus_count: [ 8, 2 ]\nbandwidth: [ 900, 100 ]\n"
                          "latency: [ 700, 2000 ]\n")
    p = run("suite", "run", "tiny", "-q", "--system", sysb, "--network", netb, "--name", "sysB", "-o", b)
    check(p.returncode == 0, "system B run: " + p.stderr)
    rr, rb = json.load(open(ref)), json.load(open(b))
    check(rr["name"] == "reference" and rr["division"] == "closed" and rb["division"] == "closed", "names, divisions")
    check(rr["suite_version"] == TINY and rr["tool_version"].startswith("chakra-c "), "versions recorded")
    check(rb["system"]["sha256"] == hashlib.sha256(open(sysb, "rb").read()).hexdigest(), "system hash recorded")
    check(all(w["ok"] for w in rr["workloads"] + rb["workloads"]), "every workload ran")
    # the HGX-H100 all-reduce of 1 MiB on 8 GPUs: the shared reference case (57,426 ns, aware)
    ar = [w for w in rr["workloads"] if w["name"] == "ar-1m-n8"][0]
    check(ar["time_ns"] == 57426, "ar-1m-n8 on the reference: %d ns, HGX-H100's 57426" % ar["time_ns"])
    check(abs(ar["bus_bw_gbps"] - 2 * 7 / 8 * 1048576 / 57426) < 1e-9, "NCCL's bus bandwidth")
    for f in (ref, b):
        p = run("suite", "check", "--sample", 0, f)
        check(p.returncode == 0, "check %s: %s" % (f, p.stderr))
    p = run("suite", "score", "--json", ref, b)
    check(p.returncode == 0, "score: " + p.stderr)
    s = json.loads(p.stdout)
    sb = [x for x in s["results"] if x["name"] == "sysB"][0]
    sr = [x for x in s["results"] if x["name"] == "reference"][0]
    check(sr["overall"] == 1 and all(v == 1 for v in sr["classes"].values()), "the baseline scores 1")
    times = {w["name"]: w["time_ns"] for w in rr["workloads"]}
    classes = {}
    for w in rb["workloads"]:
        sp = times[w["name"]] / w["time_ns"]
        check(abs(sb["workloads"][w["name"]] - sp) < 1e-12, "%s speedup" % w["name"])
        classes.setdefault(w["class"], []).append(math.log(sp))
    gm = {c: math.exp(sum(v) / len(v)) for c, v in classes.items()}
    for c, v in gm.items():
        check(abs(sb["classes"][c] - v) < 1e-12, "class %s: geometric mean" % c)
    overall = math.exp(sum(math.log(v) for v in gm.values()) / len(gm))
    check(abs(sb["overall"] - overall) < 1e-12, "overall: geometric mean of classes")
    table = run("suite", "score", ref, b).stdout
    check("overall" in table and "%.4f" % sb["overall"] in table, "the printed table: " + table[-200:])
    p = run("suite", "score", b)
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "baseline" in p.stderr, "no baseline: " + p.stderr)


def test_threads_and_mpi_change_only_the_time(work):
    one, many = os.path.join(work, "t1.json"), os.path.join(work, "t4.json")
    run("suite", "run", "tiny", "-q", "--threads", 1, "-o", one)
    run("suite", "run", "tiny", "-q", "--threads", 4, "-o", many)
    check(metrics(json.load(open(one))) == metrics(json.load(open(many))), "1 and 4 threads: the same numbers")
    if not have_mpi():
        print("skip: no MPI build; the MPI spread is not tested here")
        return
    mp = os.path.join(work, "mpi.json")
    p = run("suite", "run", "tiny", "-q", "-o", mp, mpi=2)
    check(p.returncode == 0, "2 processes: " + p.stderr)
    check(metrics(json.load(open(one))) == metrics(json.load(open(mp))), "2 MPI processes: the same numbers")
    # --replay: the workloads of as many ranks as processes, measured on this machine
    rp = os.path.join(work, "replay.json")
    p = run("suite", "run", "tiny", "-q", "--replay", "--class", "microbench", "--name", "here", "-o", rp, mpi=8)
    check(p.returncode == 0, "--replay under 8 processes: " + p.stderr)
    r = json.load(open(rp))
    check(r["mode"] == "replay" and [w["name"] for w in r["workloads"]] == ["ar-1m-n8"] and r["workloads"][0]["ok"]
          and r["workloads"][0]["time_ns"] > 0, "the 8-rank microbenchmark replayed: %s" % r["workloads"])
    p = run("suite", "check", rp)
    check(p.returncode == 0 and "nothing is re-simulated" in p.stderr, "check of a replayed result: " + p.stderr)
    p = run("suite", "run", "tiny", "--replay", "-o", rp)
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "mpirun" in p.stderr, "--replay alone: " + p.stderr)


def test_tampering_is_caught(work):
    ref = os.path.join(work, "ref.json")
    bad = os.path.join(work, "tampered")
    shutil.copytree("tiny", bad)
    victim = os.path.join(bad, "gpt-tiny-n8.class1.et")
    data = bytearray(open(victim, "rb").read())
    data[100] ^= 1
    open(victim, "wb").write(data)
    r = json.load(open(ref))
    r["dir"] = os.path.abspath(bad)
    moved = os.path.join(work, "moved.json")
    json.dump(r, open(moved, "w"))
    p = run("suite", "check", moved)
    check(p.returncode == 1 and "gpt-tiny-n8.class1.et" in p.stderr, "a changed byte: exit 1, named: " + p.stderr)
    p = run("suite", "run", bad, "-q", "-o", os.path.join(work, "x.json"))
    check(p.returncode == 2 and not os.path.exists(os.path.join(work, "x.json")), "run refuses: " + p.stderr)
    # a system file changed after the run
    sysb = os.path.join(work, "sysB2.json")
    json.dump(SYSTEM_B, open(sysb, "w"))
    res = os.path.join(work, "b2.json")
    run("suite", "run", "tiny", "-q", "--class", "microbench", "--system", sysb, "--name", "b2", "-o", res)
    json.dump(dict(SYSTEM_B, **{"peak-perf": 5000}), open(sysb, "w"))
    p = run("suite", "check", res)
    check(p.returncode == 1 and "system.sha256" in p.stderr, "changed system file: exit 1: " + p.stderr)
    # the system read once: from a pipe, which a second read finds empty, the
    # result still records (and every workload simulated) the text sent
    text = json.dumps(dict(SYSTEM_B, **{"peak-perf": 3000}))
    res = os.path.join(work, "piped.json")
    p = subprocess.run([CHAKRA, "suite", "run", "tiny", "-q", "--class", "microbench", "--system", "/dev/stdin",
                        "--name", "piped", "-o", res], input=text, capture_output=True, text=True, env=ENV,
                       timeout=600)
    r = json.load(open(res)) if p.returncode == 0 else {}
    check(p.returncode == 0 and r["system"]["text"] == text and r["declared"]["peak_tflops"] == 3000
          and r["system"]["sha256"] == hashlib.sha256(text.encode()).hexdigest()
          and all(w["ok"] for w in r["workloads"]), "a system read once, from a pipe: " + p.stderr[-300:])
    # a rule-breaking system claimed closed
    sysc = os.path.join(work, "sysC.json")
    json.dump(dict(SYSTEM_B, **{"all-reduce-implementation": ["direct", "ring"]}), open(sysc, "w"))
    res = os.path.join(work, "c.json")
    run("suite", "run", "tiny", "-q", "--class", "microbench", "--system", sysc, "--name", "c", "-o", res)
    r = json.load(open(res))
    check(r["division"] == "open", "a system outside the closed rules runs open")
    r["division"] = "closed"
    json.dump(r, open(res, "w"))
    p = run("suite", "check", res)
    check(p.returncode == 1 and "all-reduce-implementation" in p.stderr, "closed claim, broken rule: " + p.stderr)
    # an edited number
    r = json.load(open(ref))
    r["workloads"][0]["time_ns"] += 1
    edited = os.path.join(work, "edited.json")
    json.dump(r, open(edited, "w"))
    p = run("suite", "check", "--sample", 0, edited)
    check(p.returncode == 1 and "workloads[0].time_ns" in p.stderr, "an edited number: exit 1: " + p.stderr)
    # not a result
    r = json.load(open(ref))
    del r["workloads"][1]["events"]
    broken = os.path.join(work, "broken.json")
    json.dump(r, open(broken, "w"))
    for cmd in (("check",), ("score",)):
        p = run("suite", *cmd, broken)
        check(p.returncode == 2 and p.stderr.count("\n") == 1 and "broken.json: workloads[1].events" in p.stderr,
              "%s of an invalid result: one line naming file and member: %r" % (cmd, p.stderr))


def test_open_division_declares_its_rules(work):
    res = os.path.join(work, "open.json")
    p = run("suite", "run", "tiny", "-q", "--class", "microbench", "--algo", "allreduce=direct", "--name", "direct",
            "-o", res)
    check(p.returncode == 0, "--algo run: " + p.stderr)
    r = json.load(open(res))
    check(r["division"] == "open" and r["rules"] == ["allreduce=direct"], "open, rules declared")
    p = run("suite", "check", "--sample", 0, res)
    check(p.returncode == 0, "the expanded workloads re-simulate exactly: " + p.stderr)


def test_every_subcommand_has_help_and_bad_input_is_one_line(work):
    for sub in ("list", "make", "run", "score", "check", "board"):
        p = run("suite", sub, "--help")
        check(p.returncode == 0 and "usage: chakra suite " + sub in p.stdout, "suite %s --help" % sub)
    p = run("suite", "run", os.path.join(work, "nowhere"), "-o", os.path.join(work, "n.json"))
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "nowhere/suite.json" in p.stderr,
          "a missing folder: one line naming the manifest: %r" % p.stderr)
    p = run("suite", "run", "tiny", "--network", "mesh:3x3@50,500", "-o", os.path.join(work, "m.json"))
    check(p.returncode == 1, "a network no workload fits: the workloads fail, exit 1: %r" % p.stderr[-200:])


def test_v11_dense_is_simulated_by_class_and_exactly(work):
    """Version 1.1's dense class (ranks tp first, the unaware model): every
    workload runs; the 32,768-GPU GPT is simulated one NPU per pipeline stage
    and a 512-GPU one NPU by NPU gives the run's numbers exactly."""
    d, res = os.path.join(work, "d11"), os.path.join(work, "d11.json")
    p = run("suite", "make", "--suite-version", "1.1", "--class", "dense", "-q", "-o", d)
    check(p.returncode == 0, "1.1 dense made: " + p.stderr)
    p = run("suite", "run", d, "--threads", "1", "-q", "-o", res)
    r = json.load(open(res))
    check(p.returncode == 0 and len(r["workloads"]) == 6 and all(w["ok"] for w in r["workloads"]),
          "1.1 dense: 6 workloads ran: %r" % p.stderr[-300:])
    by = {w["name"]: w for w in r["workloads"]}
    for k in ("system", "network"):
        with open(os.path.join(work, "ref." + k), "w") as f:
            f.write(r[k]["text"])
    for name, ranks, mode in (("gpt3-175b-n512", 512, "off"), ("gpt3-175b-n32768", 32768, "auto")):
        net = os.path.join(work, "net%d.yml" % ranks)
        with open(net, "w") as f:
            f.write(r["network"]["text"].replace("npus_count: [ 8, 64 ]", "npus_count: [ 8, %d ]" % (ranks // 8)))
        rep = os.path.join(work, name + ".report.json")
        p = run("sim", "--workload-configuration=" + os.path.join(d, name),
                "--system-configuration=" + os.path.join(work, "ref.system"), "--network-configuration=" + net,
                "--network-model=unaware", "--symmetry=" + mode, "-q", "--report=" + rep)
        check(p.returncode == 0, "%s simulated with --symmetry=%s: %s" % (name, mode, p.stderr[-300:]))
        if p.returncode:
            continue
        sim = json.load(open(rep))
        check(sim["max_finish_ns"] == by[name]["time_ns"],
              "%s: the suite's %d ns is chakra sim --symmetry=%s's %d" % (name, by[name]["time_ns"], mode,
                                                                       sim["max_finish_ns"]))
        if mode == "auto":
            check(sim["simulated_npus"] == 16, "%s: one NPU per stage simulated: %r" % (name, sim["symmetry"]))
    shutil.rmtree(d)


def setup(work):
    os.chdir(work)
    p = run("suite", "make", "--suite-version", TINY, "-q", "-o", "tiny")
    check(p.returncode == 0, "make: " + p.stderr)
    run("suite", "run", "tiny", "-q", "-o", os.path.join(work, "ref.json"))


if __name__ == "__main__":
    run_tests(globals(), "suite", setup)
