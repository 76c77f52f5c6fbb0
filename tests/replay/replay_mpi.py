#!/usr/bin/python3
"""Pins what `mpirun -np N chakra replay PREFIX` does (docs/replay.md): every
node of every rank runs, each collective moves the bytes its trace says, the
report carries every field of `chakra sim --report` plus the replay's own,
the timeline has one event per node, iterations give their spread, compute
stand-ins take the time they should, and broken trace sets fail before
anything is posted (the same message on every rank) or, when they stall at
run time, name the stuck nodes of each rank and end the job.

Runs 2-8 processes on one machine (oversubscribed). Skips, saying so, when
chakra was built without MPI or mpirun is missing; the shared STAGE and
MSCCL traces are used when ../shared (or $CHAKRA_SHARED) is there.

usage: replay_mpi.py CHAKRA_BINARY SOURCE_DIR [NAME_PART]  (runs the tests whose name has it)"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CHAKRA = os.path.abspath(sys.argv[1])
SOURCE = os.path.abspath(sys.argv[2])
SKIP = 77
BASE = None
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
COLL = {"ALL_REDUCE": 0, "REDUCE": 1, "ALL_GATHER": 2, "GATHER": 3, "SCATTER": 4, "BROADCAST": 5,
        "ALL_TO_ALL": 6, "REDUCE_SCATTER": 7, "REDUCE_SCATTER_BLOCK": 8, "BARRIER": 9}
COLL_NAME = {v: k for k, v in COLL.items()}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def mpirun(n, *args, timeout=300):
    # mpirun ends a job that hangs, ranks included; the process group kill
    # below is the backstop.
    cmd = ["mpirun", "--oversubscribe", "--timeout", str(timeout), "-np", str(n), CHAKRA, "replay"] + [str(a) for a in args]
    t = time.time()
    # Its own process group: a hung job is killed whole, ranks included.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout + 30)
    except subprocess.TimeoutExpired:  # a hang is a failure of its test, not of the others
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        err += "\n(killed after %d s)" % timeout
    p = subprocess.CompletedProcess(cmd, proc.returncode if proc.returncode >= 0 else -1, out, err)
    p.seconds = time.time() - t
    return p


def shared_dir():
    d = os.environ.get("CHAKRA_SHARED") or os.path.join(SOURCE, "..", "shared")
    return d if os.path.isdir(os.path.join(d, "data", "traces")) else None


# ---- traces --------------------------------------------------------------------

def attr_int(name, v):
    return {"name": name, "uint64_val" if v >= 2**63 else "int64_val": str(v)}


def node(i, kind, deps=(), **kw):
    n = {"id": str(i), "name": "%s%d" % (kind.lower(), i), "type": kind, "attr": [{"name": "is_cpu_op", "bool_val": kw.pop("cpu", False)}]}
    if "us" in kw:
        n["duration_micros"] = str(kw.pop("us"))
    for k, v in kw.items():
        if k == "pg_name":
            n["attr"].append({"name": k, "string_val": v})
        elif k == "inputs":
            n["inputs"] = {"values": v}
        else:
            n["attr"].append(attr_int(k, v) if k in ("comm_type", "comm_size", "tensor_size") else {"name": k, "int32_val": v})
    if deps:
        n["data_deps"] = [str(d) for d in deps]
    return n


def write_set(prefix, nranks, make):
    for r in range(nranks):
        jl = "%s.%d.jsonl" % (prefix, r)
        with open(jl, "w") as f:
            f.write(json.dumps({"version": "1.0.0"}) + "\n")
            for n in make(r):
                f.write(json.dumps(n) + "\n")
        subprocess.run([CHAKRA, "pack", jl, "-o", "%s.%d.et" % (prefix, r)], check=True)
        os.remove(jl)


def trace_facts(prefix, nranks):
    """Per rank: node count, bytes and count per collective type, sends, from the trace itself."""
    facts = []
    for r in range(nranks):
        out = os.path.join(BASE, "facts.jsonl")
        subprocess.run([CHAKRA, "jsonize", "%s.%d.et" % (prefix, r), "-o", out], check=True)
        nodes, colls, sends, send_bytes = 0, {}, 0, 0
        with open(out) as f:
            next(f)
            for line in f:
                n = json.loads(line)
                nodes += 1
                attrs = {a["name"]: a for a in n.get("attr", [])}
                size = int(next(iter(v for k, v in attrs.get("comm_size", {}).items() if k != "name"), 0))
                if n.get("type") == "COMM_COLL_NODE":
                    t = COLL_NAME[int(attrs["comm_type"]["int64_val"])]
                    c = colls.setdefault(t, [0, 0])
                    c[0] += 1
                    c[1] += size
                elif n.get("type") == "COMM_SEND_NODE":
                    sends += 1
                    send_bytes += size
        facts.append((nodes, colls, sends, send_bytes))
    return facts


def sim_report_keys():
    """The keys `chakra sim --report` writes, top level and per rank."""
    d = tempfile.mkdtemp(dir=BASE)
    prefix = os.path.join(d, "ar")
    subprocess.run([CHAKRA, "gen", "microbench", "--coll", "all_reduce", "--npus", "8", "--size", "1M", "-o", prefix], check=True)
    rep = os.path.join(d, "sim.json")
    subprocess.run([CHAKRA, "sim", "-q", "--workload-configuration=" + prefix,
                    "--system-configuration=" + os.path.join(SOURCE, "examples", "system.json"),
                    "--network-configuration=" + os.path.join(SOURCE, "examples", "ring8.yml"), "--report=" + rep],
                   check=True, capture_output=True)
    r = json.load(open(rep))
    # how the simulator ran (one NPU per rank class, and why: docs/sim.md);
    # a replay runs every rank
    sim_only = {"classes", "simulated_npus", "symmetry"}
    return set(r) - sim_only, set(r["ranks"][0]), set(r["ranks"][0]["collectives"]["ALL_REDUCE"])


def check_run(name, p, prefix, nranks, report, extra_check=None):
    check(p.returncode == 0, "%s: exit %d\n%s" % (name, p.returncode, p.stderr[-3000:]))
    if p.returncode != 0:
        return None
    r = json.load(open(report))
    top, per_rank, per_coll = SIM_KEYS
    check(top <= set(r), "%s: report lacks sim report keys %s" % (name, top - set(r)))
    check(r["npus"] == nranks and len(r["ranks"]) == nranks, "%s: %d ranks in the report" % (name, len(r["ranks"])))
    facts = trace_facts(prefix, nranks)
    instances = {}
    for x in r["collective_instances"]:
        instances.setdefault(x["rank"], []).append(x)
    for k, (nodes, colls, sends, send_bytes) in zip(r["ranks"], facts):
        rk = k["rank"]
        check(per_rank <= set(k), "%s: rank %d lacks %s" % (name, rk, per_rank - set(k)))
        check(k["finished"] and k["nodes"] == nodes and k["nodes_done"] == nodes,
              "%s: rank %d ran %s of %d nodes" % (name, rk, k["nodes_done"], nodes))
        got = {t: [c["count"], c["bytes"]] for t, c in k["collectives"].items()}
        check(got == colls, "%s: rank %d collectives %s, trace says %s" % (name, rk, got, colls))
        for c in k["collectives"].values():
            check(per_coll <= set(c), "%s: rank %d collective entry lacks %s" % (name, rk, per_coll - set(c)))
        check((k["p2p_sends"], k["p2p_bytes"]) == (sends, send_bytes),
              "%s: rank %d sent %s, trace says %s" % (name, rk, (k["p2p_sends"], k["p2p_bytes"]), (sends, send_bytes)))
        inst = instances.get(rk, [])
        check(len(inst) == sum(c[0] for c in colls.values()), "%s: rank %d has %d collective instances" % (name, rk, len(inst)))
        check(sum(x["bytes"] for x in inst) == sum(c[1] for c in colls.values()), "%s: rank %d instance bytes" % (name, rk))
        check(all(x["time_min_ns"] <= x["time_median_ns"] <= x["time_max_ns"] for x in inst), "%s: instance spread" % name)
        check(k["finish_ns"] >= k["comm_ns"] and k["overlap_ns"] >= 0, "%s: rank %d times inconsistent" % (name, rk))
    if extra_check:
        extra_check(r)
    return r


# ---- cases ---------------------------------------------------------------------

def test_microbench_every_collective():
    for coll, n in (("all_reduce", 2), ("all_gather", 4), ("reduce_scatter", 3), ("all_to_all", 4)):
        d = tempfile.mkdtemp(dir=BASE)
        prefix = os.path.join(d, coll)
        subprocess.run([CHAKRA, "gen", "microbench", "--coll", coll, "--npus", str(n), "--size", "1M", "-o", prefix], check=True)
        rep = os.path.join(d, "r.json")
        p = mpirun(n, prefix, "--report", rep)
        check_run("microbench %s on %d" % (coll, n), p, prefix, n, rep)
        check(p.stdout.count("finished,") == n, "microbench %s: %d result lines" % (coll, p.stdout.count("finished,")))


def test_synthesised_workload():
    """Compute on both slots, every collective type on a METADATA group and
    on all ranks, point-to-point both ways, memory copies, iterations,
    timeline."""
    n = 4
    d = tempfile.mkdtemp(dir=BASE)
    prefix = os.path.join(d, "w")
    groups = json.dumps([{"pg_name": "7", "ranks": [0, 2]}, {"pg_name": "8", "ranks": [1, 3]}])

    def make(r):
        pg = "7" if r % 2 == 0 else "8"
        peer = r ^ 1
        v = [node(1, "METADATA_NODE", inputs="['%s']" % groups),
             node(2, "COMP_NODE", deps=[1], us=200),
             node(3, "COMP_NODE", deps=[1], us=100, cpu=True)]
        i = 4
        for t in range(10):
            size = 4096 * (t + 1) if t not in (3, 4) else 1000 * (t + 1)
            v.append(node(i, "COMM_COLL_NODE", deps=[2], comm_type=t, comm_size=size, pg_name=pg if t % 2 else ""))
            i += 1
        v.append(node(i, "COMM_SEND_NODE", deps=[3], comm_dst=peer, comm_size=65536, comm_tag=5))
        v.append(node(i + 1, "COMM_RECV_NODE", comm_src=peer, comm_size=65536, comm_tag=5))
        v.append(node(i + 2, "COMM_SEND_NODE", deps=[i + 1], comm_dst=peer, comm_size=3 << 20, comm_tag=6))
        v.append(node(i + 3, "COMM_RECV_NODE", deps=[i], comm_src=peer, comm_size=3 << 20, comm_tag=6))
        v.append(node(i + 4, "MEM_LOAD_NODE", deps=[i + 3], tensor_size=1 << 20))
        v.append(node(i + 5, "COMP_NODE", deps=[i + 4, i - 1], us=50))
        return v

    write_set(prefix, n, make)
    rep, tl = os.path.join(d, "r.json"), os.path.join(d, "tl.json")
    p = mpirun(n, prefix, "--report", rep, "--timeline", tl, "--iterations", 3, "--warmup", 1)

    def more(r):
        check(r["replay"]["iterations"] == 3 and len(r["replay"]["makespan_ns"]) == 3, "synth: 3 measured iterations")
        check(r["replay"]["makespan_min_ns"] <= r["replay"]["makespan_median_ns"] <= r["replay"]["makespan_max_ns"],
              "synth: makespan spread ordered")
        for k in r["ranks"]:
            check(k["gpu_ns"] >= 250000, "synth: rank %d GPU compute %d ns < 250 us" % (k["rank"], k["gpu_ns"]))
            check(k["cpu_ns"] >= 100000, "synth: rank %d CPU compute %d ns" % (k["rank"], k["cpu_ns"]))
            check(k["remote_mem_ns"] > 0, "synth: rank %d memory copy took no time" % k["rank"])
            check(k["finish_min_ns"] <= k["finish_median_ns"] <= k["finish_max_ns"], "synth: finish spread")
        pgs = {x["pg"] for x in r["collective_instances"]}
        check(pgs == {"", "7", "8"}, "synth: instance groups %s" % pgs)
        t = json.load(open(tl))
        ev = [e for e in t["traceEvents"] if e["ph"] == "X"]
        ids = {}
        for e in ev:
            ids.setdefault(e["pid"], set()).add(e["args"]["node_id"])
        check(len(ev) == n * 19, "synth: timeline has %d node events, expected %d: %s" % (len(ev), n * 19, ids))
        check({e["tid"] for e in ev} == {0, 1, 2, 3}, "synth: timeline tracks %s" % {e["tid"] for e in ev})

    check_run("synthesised workload", p, prefix, n, rep, more)


def test_compute_stand_ins():
    d = tempfile.mkdtemp(dir=BASE)
    prefix = os.path.join(d, "c")
    write_set(prefix, 2, lambda r: [node(1, "COMP_NODE", us=40000),
                                    node(2, "COMM_COLL_NODE", deps=[1], comm_type=0, comm_size=1024)])
    for mode, lo, hi in (("wait", 40e6, None), ("sleep", 40e6, None), ("scale:0.5", 20e6, 40e6), ("skip", 0, 20e6)):
        rep = os.path.join(d, mode.replace(":", "_") + ".json")
        p = mpirun(2, prefix, "--compute", mode, "--report", rep, "-q")
        check(p.returncode == 0, "compute %s: exit %d %s" % (mode, p.returncode, p.stderr[-500:]))
        if p.returncode:
            continue
        r = json.load(open(rep))
        # The compute node's own time: the machine may be busy, so not the finish.
        f = min(k["gpu_ns"] for k in r["ranks"])
        check(f >= lo and (hi is None or f < hi), "compute %s: compute took %d ns, outside [%s, %s)" % (mode, f, lo, hi))
        check(r["replay"]["compute"] == mode.split(":")[0].replace("scale", "wait"), "compute %s: mode in report" % mode)


def test_job_size_mismatch():
    d = tempfile.mkdtemp(dir=BASE)
    prefix = os.path.join(d, "ar")
    subprocess.run([CHAKRA, "gen", "microbench", "--coll", "all_reduce", "--npus", "4", "--size", "1K", "-o", prefix], check=True)
    p = mpirun(2, prefix, timeout=120)
    check(p.returncode != 0, "job size: exit 0")
    want = "the trace set has 4 ranks"
    check(p.stderr.count(want) == 1, "job size: expected one line saying '%s' (rank 0), got:\n%s" % (want, p.stderr[-2000:]))
    check("mpirun -np 4" in p.stderr, "job size: the error says how to run it")


def test_broken_set_fails_before_posting_on_every_rank():
    d = tempfile.mkdtemp(dir=BASE)
    prefix = os.path.join(d, "b")
    # Rank 1 never receives rank 0's message; rank 2 has a different collective.
    write_set(prefix, 3, lambda r: [node(1, "COMM_COLL_NODE", comm_type=0 if r < 2 else 2, comm_size=1024)] +
              ([node(2, "COMM_SEND_NODE", comm_dst=1, comm_size=64, comm_tag=1)] if r == 0 else []))
    p = mpirun(3, prefix, timeout=120)
    check(p.returncode != 0, "broken set: exit 0")
    lines = [l for l in p.stderr.splitlines() if "cannot be replayed" in l]
    check(len(lines) == 1 and lines[0].startswith("chakra replay: "),
          "broken set: expected one line for the job, 'chakra replay: ...', got %s" % lines)
    check("finished," not in p.stdout, "broken set: something ran")


def test_node_rules_are_the_simulators():
    """Replay classifies nodes through the one node vocabulary (chakra/node.h):
    a send naming another rank as its comm_src, which the simulator always
    refused and replay ran, is now refused by replay too (validation
    skipped, so the planner itself must see it)."""
    d = tempfile.mkdtemp(dir=BASE)
    prefix = os.path.join(d, "own")
    write_set(prefix, 2, lambda r: [node(1, "COMM_SEND_NODE", comm_src=1, comm_dst=1, comm_size=64, comm_tag=1)] if r == 0
              else [node(1, "COMM_RECV_NODE", comm_src=0, comm_size=64, comm_tag=1)])
    p = mpirun(2, prefix, "--no-validate", timeout=120)
    check(p.returncode != 0 and "node 1: comm_src is 1 but this file is rank 0" in p.stderr,
          "send with another rank's comm_src: expected a refusal naming it, got %d:\n%s" % (p.returncode, p.stderr[-2000:]))
    check("finished," not in p.stdout, "send with another rank's comm_src: something ran")


def test_stall_names_stuck_nodes_and_aborts():
    d = tempfile.mkdtemp(dir=BASE)
    prefix = os.path.join(d, "s")
    # Rank 0 waits for a message rank 1 never sends (validation skipped).
    write_set(prefix, 2, lambda r: [node(1, "COMM_COLL_NODE", comm_type=0, comm_size=256)] +
              ([node(9, "COMM_RECV_NODE", deps=[1], comm_src=1, comm_size=128, comm_tag=3)] if r == 0 else []))
    rep = os.path.join(d, "stall.json")
    p = mpirun(2, prefix, "--no-validate", "--timeout", "2", "--report", rep, timeout=120)
    check(p.returncode != 0, "stall: exit 0")
    check(os.path.exists(rep) and json.load(open(rep)).get("stuck"),
          "stall: the report (with the stuck ranks) is in place before the job is aborted")
    check("rank 0: 1 of 2 nodes done; issued and unfinished: 9 (recv from 1)" in p.stderr,
          "stall: rank 0's stuck node not named:\n%s" % p.stderr[-2000:])
    check("rank 1: finished" in p.stderr, "stall: rank 1's line missing")
    check(p.seconds < 60, "stall: took %.0f s" % p.seconds)
    v = subprocess.run([CHAKRA, "replay", "--help"], capture_output=True, text=True)
    check(v.returncode == 0 and "--timeout" in v.stdout, "replay --help")
    bad = subprocess.run([CHAKRA, "replay", prefix, "--compute", "fast"], capture_output=True, text=True)
    check(bad.returncode == 2 and "--compute" in bad.stderr, "bad --compute: %d %s" % (bad.returncode, bad.stderr))


def replay_lines(stderr):
    """The lines chakra printed (not mpirun's)."""
    return [l for l in stderr.splitlines() if l.startswith("chakra")]


def test_one_rank_cannot_allocate():
    """Issue 26: rank 0 could not allocate and returned, rank 1 went on into
    a collective rank 0 never made and spun for ever (--timeout ignored).
    Now every rank learns of the failure first; rank 0 says it, once."""
    d = tempfile.mkdtemp(dir=BASE)
    prefix = os.path.join(d, "big")
    write_set(prefix, 2, lambda r: [node(1, "MEM_LOAD_NODE", tensor_size=2**64 - 1)] if r == 0 else
              [node(1, "COMP_NODE", us=1)])
    for n in (2, 4):
        if n == 4:  # the other ranks too: all but rank 0 have nothing to fail on
            for r in (2, 3):
                shutil.copy(prefix + ".1.et", "%s.%d.et" % (prefix, r))
        p = mpirun(n, prefix, "--timeout", "5", timeout=60)
        lines = replay_lines(p.stderr)
        check(p.returncode == 2, "allocation failure on %d ranks: exit %d, %s" % (n, p.returncode, p.stderr[-1500:]))
        check(p.seconds < 20, "allocation failure on %d ranks: took %.0f s" % (n, p.seconds))
        check(len(lines) == 1 and lines[0].startswith("chakra replay: ") and "node 1: cannot allocate" in lines[0]
              and "18446744073709551615 bytes" in lines[0],
              "allocation failure on %d ranks: expected rank 0's one line, got %s" % (n, lines))


def test_timeout_bounds_waits_for_other_ranks():
    """A rank done with its nodes waited for the others without bound; now
    --timeout ends the job from the waiting rank, which says so once."""
    d = tempfile.mkdtemp(dir=BASE)
    prefix = os.path.join(d, "late")
    write_set(prefix, 2, lambda r: [node(1, "COMP_NODE", us=1 if r == 0 else 60000000)])
    p = mpirun(2, prefix, "--timeout", "2", "--compute", "sleep", timeout=120)
    lines = replay_lines(p.stderr)
    check(p.returncode == 2, "waiting rank: exit %d" % p.returncode)
    check(p.seconds < 30, "waiting rank: the job took %.0f s, --timeout 2" % p.seconds)
    check(len(lines) == 1 and lines[0] == "chakra replay: rank 0: waited 2 s for the other ranks to end iteration 1 "
          "(--timeout); ending the job", "waiting rank: got %s" % lines)


def test_duration_that_does_not_fit_nanoseconds():
    """duration_micros * 1000 wrapped: 2^64 / 1000 + 1 us "finished" in
    0.5 us. The replayer refuses it as the simulator does, same words."""
    d = tempfile.mkdtemp(dir=BASE)
    prefix = os.path.join(d, "long")
    us = 2**64 // 1000 + 1
    write_set(prefix, 2, lambda r: [node(1, "COMP_NODE", us=us if r == 1 else 1)])
    p = mpirun(2, prefix, "--timeout", "5", timeout=60)
    lines = replay_lines(p.stderr)
    sim = subprocess.run([CHAKRA, "sim", "--workload-configuration=" + prefix,
                          "--system-configuration=" + os.path.join(SOURCE, "examples", "system.json"),
                          "--network-configuration=ring:2@50,500"], capture_output=True, text=True)
    said = sim.stderr.strip().split("node 1: ")[-1]
    check(sim.returncode == 2 and "duration_micros" in said, "sim no longer refuses the duration: %s" % sim.stderr)
    check(p.returncode == 2 and "finished," not in p.stdout, "long duration: exit %d, %s" % (p.returncode, p.stdout))
    check(len(lines) == 1 and lines[0].endswith("long.1.et: rank 1: node 1: " + said),
          "long duration: expected sim's words '%s', got %s" % (said, lines))
    # The largest duration that fits runs (skipped, not waited for).
    write_set(prefix, 2, lambda r: [node(1, "COMP_NODE", us=2**64 // 1000)])
    p = mpirun(2, prefix, "--compute", "skip", timeout=60)
    check(p.returncode == 0, "largest duration: exit %d %s" % (p.returncode, p.stderr[-800:]))


def test_messages_once_and_in_the_command_form():
    """Usage errors and warnings: 'chakra replay: ...', once per job; the
    pre-check validates with the comm groups the run uses."""
    d = tempfile.mkdtemp(dir=BASE)
    prefix = os.path.join(d, "g")
    write_set(prefix, 4, lambda r: [node(1, "COMM_COLL_NODE", comm_type=0, comm_size=1024, pg_name="5")])
    groups = os.path.join(d, "groups.json")
    with open(groups, "w") as f:
        f.write('{"5": [0, 1, 2, 3]}')
    p = mpirun(4, prefix, "--comm-group-configuration", groups, timeout=120)
    check(p.returncode == 0 and not replay_lines(p.stderr),
          "comm groups given: exit %d, said %s" % (p.returncode, replay_lines(p.stderr)))
    # The same groups as PREFIX.json beside the traces: the trace set takes
    # them, and rank 0 says so once, as a note.
    shutil.copy(groups, prefix + ".json")
    p = mpirun(4, prefix, timeout=120)
    lines = replay_lines(p.stderr)
    check(p.returncode == 0 and lines == ["chakra replay: note: communicator groups from %s.json, found beside the "
                                          "traces (--comm-group-configuration names another file)" % prefix],
          "comm groups beside the traces: exit %d, said %s" % (p.returncode, lines))
    os.remove(prefix + ".json")
    # A warning about the files: validation on rank 0 says it, once per file,
    # not again from each rank's own load.
    warned = os.path.join(d, "w")
    write_set(warned, 2, lambda r: [dict(node(1, "COMP_NODE", us=1), ctrl_deps=["77"])])
    p = mpirun(2, warned, "-q", timeout=120)
    lines = replay_lines(p.stderr)
    check(p.returncode == 0 and len(lines) == 2 and all(l.startswith("chakra replay: warning: ") for l in lines)
          and len({l.split(": ")[2] for l in lines}) == 2, "warnings once per file: got %s" % lines)
    for args, want in (([prefix, "--compute", "fast"], "chakra replay: --compute: expected"),
                       ([prefix, "--iterations", "0"], "chakra replay: --iterations:"),
                       ([], "chakra replay: expected PREFIX")):
        p = mpirun(4, *args, timeout=120)
        lines = replay_lines(p.stderr)
        check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith(want),
              "usage error %s: expected one line '%s...', got %s" % (args, want, lines))


def test_outputs_over_rank_traces_are_refused():
    """--report PREFIX.0.et and --timeline PREFIX.1.et replaced rank traces
    (issue 26 item 3): now one line, exit 2, every file as it was."""
    d = tempfile.mkdtemp(dir=BASE)
    prefix = os.path.join(d, "ar")
    subprocess.run([CHAKRA, "gen", "microbench", "--coll", "all_reduce", "--npus", "2", "--size", "1K", "-o", prefix],
                   check=True)
    before = {n: open(os.path.join(d, n), "rb").read() for n in os.listdir(d)}
    for opt, target in (("--report", prefix + ".0.et"), ("--timeline", prefix + ".1.et")):
        p = mpirun(2, prefix, opt, target, timeout=120)
        check(p.returncode == 2, "%s over a rank trace: exit 2 (got %d)" % (opt, p.returncode))
        lines = replay_lines(p.stderr)
        check(len(lines) == 1 and lines[0].startswith("chakra replay: " + target + ": is the same file as the input"),
              "%s over a rank trace: one line, once for the job, got %s" % (opt, lines))
        after = {n: open(os.path.join(d, n), "rb").read() for n in os.listdir(d)}
        check(after == before, "%s over a rank trace: every file unchanged, none added" % opt)


def test_shared_traces():
    sh = shared_dir()
    if not sh:
        print("note: ../shared not found: STAGE and MSCCL replays skipped")
        return
    t = os.path.join(sh, "data", "traces")
    stage = os.path.join(t, "stage", "gpt_small_tponly_dp2tp4", "gpt_small_tponly_dp2tp4")
    rep = os.path.join(BASE, "stage.json")
    p = mpirun(8, stage, "--comm-group-configuration", stage + ".json", "--compute", "skip", "--report", rep)
    check_run("STAGE", p, stage, 8, rep)
    for m in ("allgather_ring_nofusion_n8", "alltoall_allpairs_n8"):
        prefix = os.path.join(t, "msccl", m, m)
        rep = os.path.join(BASE, m + ".json")
        check_run("MSCCL " + m, mpirun(8, prefix, "--report", rep), prefix, 8, rep)


def main():
    global BASE, SIM_KEYS
    h = subprocess.run([CHAKRA, "--help"], capture_output=True, text=True).stdout
    if " replay " not in h:
        print("skip: chakra was built without MPI (scripts/install-deps.sh installs OpenMPI)")
        return SKIP
    if not shutil.which("mpirun"):
        print("skip: mpirun not found")
        return SKIP
    BASE = tempfile.mkdtemp(prefix="replay-test-")
    try:
        SIM_KEYS = sim_report_keys()
        for t in (test_microbench_every_collective, test_synthesised_workload, test_compute_stand_ins,
                  test_job_size_mismatch, test_broken_set_fails_before_posting_on_every_rank,
                  test_node_rules_are_the_simulators, test_stall_names_stuck_nodes_and_aborts,
                  test_one_rank_cannot_allocate, test_timeout_bounds_waits_for_other_ranks,
                  test_duration_that_does_not_fit_nanoseconds, test_messages_once_and_in_the_command_form,
                  test_outputs_over_rank_traces_are_refused,
                  test_shared_traces):
            if len(sys.argv) > 3 and sys.argv[3] not in t.__name__:
                continue
            t0 = time.time()
            t()
            print("%-60s %.1f s" % (t.__name__, time.time() - t0))
    finally:
        shutil.rmtree(BASE, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
