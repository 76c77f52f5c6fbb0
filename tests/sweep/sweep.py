#!/usr/bin/python3
"""Pins what `chakra sweep` does (docs/sweep.md): every row of the grid is
what `chakra sim` gives for that configuration on its own, in grid order
(the last --vary varies fastest), as CSV or JSON; threads and MPI processes
change nothing but the time; bad --vary keys and values fail before any run
with one line and no table.

usage: sweep.py CHAKRA_BINARY SOURCE_DIR"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpitest import SOURCE, check, have_mpi, run, run_tests  # noqa: E402


def network(path, bw, lat, npus, topo="Ring"):
    with open(path, "w") as f:
        f.write("topology: [ %s ]\nnpus_count: [ %d ]\nbandwidth: [ %s ]\nlatency: [ %s ]\n" % (topo, npus, bw, lat))


def sim_max_finish(work, prefix, system, net, model):
    p = run("sim", "-q", "--workload-configuration=" + prefix, "--system-configuration=" + system,
            "--network-configuration=" + net, "--network-model=" + model)
    check(p.returncode == 0, "chakra sim ran: " + p.stderr)
    return max(int(l.split()[2]) for l in p.stdout.splitlines() if "finished," in l)


def test_grid_rows_equal_individual_sim_runs(work):
    system = os.path.join(SOURCE, "examples", "system.json")
    base = json.load(open(system))
    for coll in ("all_reduce", "all_to_all"):
        prefix = os.path.join(work, coll)
        run("gen", "microbench", "--coll", coll, "--npus", 8, "--size", "256K", "-o", prefix)
        net = os.path.join(work, "base.yml")
        network(net, 50, 500, 8)
        out = os.path.join(work, coll + ".csv")
        p = run("sweep", "--workload", prefix, "--system", system, "--network", net, "--vary", "bandwidth=12.5,100",
                "--vary", "latency[0]=0,700", "--vary", "active-chunks-per-dimension=1,2",
                "--vary", "network-model=aware,unaware", "-o", out)
        check(p.returncode == 0, "sweep ran: " + p.stderr)
        rows = list(csv.DictReader(open(out)))
        check(len(rows) == 16, "16 rows, got %d" % len(rows))
        expect = [(bw, lat, ch, m) for bw in ("12.5", "100") for lat in ("0", "700") for ch in ("1", "2")
                  for m in ("aware", "unaware")]
        for row, (bw, lat, ch, model) in zip(rows, expect):
            key = (row["bandwidth"], row["latency[0]"], row["active-chunks-per-dimension"], row["network-model"])
            check(key == (bw, lat, ch, model), "grid order: %s, expected %s" % (key, (bw, lat, ch, model)))
            sysf = os.path.join(work, "sys.json")
            json.dump(dict(base, **{"active-chunks-per-dimension": int(ch)}), open(sysf, "w"))
            netf = os.path.join(work, "one.yml")
            network(netf, bw, lat, 8)
            want = sim_max_finish(work, prefix, sysf, netf, model)
            check(row["status"] == "ok" and row["finished"] == "8", "%s %s: all ranks finished" % (coll, key))
            check(int(row["max_finish_ns"]) == want, "%s %s: max finish %s, chakra sim says %d" %
                  (coll, key, row["max_finish_ns"], want))


def test_json_table_and_threads_agree(work):
    system = os.path.join(SOURCE, "examples", "system.json")
    prefix = os.path.join(work, "ar4")
    net = os.path.join(work, "r4.yml")
    args = ["sweep", "--workload", prefix, "--system", system, "--network", net, "--vary", "topology=Ring,Switch",
            "--vary", "all-reduce-implementation=ring,direct,[halvingDoubling]"]
    out1, out4 = os.path.join(work, "t1.json"), os.path.join(work, "t4.json")
    p1 = run(*args, "--threads", 1, "-o", out1)
    p4 = run(*args, "--threads", 4, "-o", out4)
    check(p1.returncode == 0 and p4.returncode == 0, "JSON sweeps ran: " + p1.stderr + p4.stderr)
    t1, t4 = json.load(open(out1)), json.load(open(out4))
    check(t1["vary"] == ["topology", "all-reduce-implementation"] and t1["points"] == 6, "JSON head: %s" % t1["vary"])
    strip = lambda t: [{k: v for k, v in r.items() if k != "sim_seconds"} for r in t["rows"]]
    check(strip(t1) == strip(t4), "1 and 4 threads give the same rows")
    impls = [r["config"]["all-reduce-implementation"] for r in t1["rows"]]
    check(impls == ["ring", "direct", "[halvingDoubling]"] * 2, "values as given: %s" % impls)
    check(len({r["max_finish_ns"] for r in t1["rows"]}) > 1, "the varied keys change the result")


def test_bad_vary_keys_fail_before_running(work):
    system = os.path.join(SOURCE, "examples", "system.json")
    prefix = os.path.join(work, "ar4")
    net = os.path.join(work, "r4.yml")
    out = os.path.join(work, "bad.csv")
    cases = [("foo=1,2", "unknown key \"foo\""), ("bandwidth[1]=10", "the network has 1 dimension"),
             ("network.speed=1", "unknown network key"), ("bandwidth=10,fast", "'fast' is not a number"),
             ("latency=-5", "not a number of ns"), ("topology=Torus", "Ring, FullyConnected or Switch"),
             ("active-chunks-per-dimension=0", "must be >= 1"), ("scheduling-policy=RANDOM", "LIFO, FIFO"),
             ("bandwidth", "expected KEY=VALUE1"), ("bandwidth=1,,2", "an empty value"),
             ("network-model=fast", "aware or unaware")]
    for vary, msg in cases:
        p = run("sweep", "--workload", prefix, "--system", system, "--network", net, "--vary", vary, "-o", out)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2, "--vary %s: exit 2, got %d" % (vary, p.returncode))
        check(len(lines) == 1 and msg in lines[0] and "--vary" in lines[0],
              "--vary %s: one line naming it with '%s', got %r" % (vary, msg, p.stderr))
        check(not os.path.exists(out), "--vary %s: no table written" % vary)
    p = run("sweep", "--workload", prefix, "--system", system, "--network", net, "--vary", "bandwidth=1",
            "--vary", "bandwidth[0]=2")
    check(p.returncode == 2 and "sets what" in p.stderr, "two axes on one setting rejected: " + p.stderr)


def test_integer_statistics_stay_exact_above_2_to_53(work):
    """issue 26 item 8: means were summed in doubles (56000000000036432.0
    for 56000000000036440): every statistic is an integer, means exact
    (rounded to the nearest ns, halves up)."""
    prefix = os.path.join(work, "big")
    for r, us in enumerate((56000000000036, 56000000000037, 56000000000037)):
        jl = prefix + ".%d.jsonl" % r
        with open(jl, "w") as f:
            f.write('{"version":"1.0.0"}\n{"id":"1","name":"c","type":"COMP_NODE","duration_micros":"%d"}\n' % us)
        run("pack", jl, "-o", prefix + ".%d.et" % r)
    net = os.path.join(work, "r3.yml")
    network(net, 50, 500, 3)
    system = os.path.join(SOURCE, "examples", "system.json")
    # (56000000000036000 + 2 x 56000000000037000) / 3 = 56000000000036666.67 -> ...667
    want = 56000000000036667
    csv_out, json_out = os.path.join(work, "big.csv"), os.path.join(work, "big.json")
    for out in (csv_out, json_out):
        p = run("sweep", "--workload", prefix, "--system", system, "--network", net, "--vary", "bandwidth=50", "-o", out)
        check(p.returncode == 0, "sweep of 2^55 ns finishes ran: " + p.stderr)
    row = list(csv.DictReader(open(csv_out)))[0]
    check(row["mean_finish_ns"] == str(want) and row["mean_compute_ns"] == str(want),
          "CSV mean_finish_ns and mean_compute_ns exact: %s, %s (want %d)" % (row["mean_finish_ns"], row["mean_compute_ns"], want))
    jrow = json.load(open(json_out))["rows"][0]
    check(jrow["mean_finish_ns"] == want and isinstance(jrow["mean_finish_ns"], int),
          "JSON mean_finish_ns an exact integer: %r" % jrow["mean_finish_ns"])
    p = run("sim", "-q", "--summary", "--workload-configuration=" + prefix, "--system-configuration=" + system,
            "--network-configuration=" + net)
    check("mean GPU compute 56000000000036.667 us" in p.stdout and "at 56000000000037.000 us" in p.stdout,
          "sim --summary prints the exact figures: " + p.stdout)


def test_mpi_two_processes_give_the_same_table(work):
    if not have_mpi():
        print("SKIP: chakra built without MPI or mpirun missing: no 2-process sweep")
        return
    system = os.path.join(SOURCE, "examples", "system.json")
    prefix = os.path.join(work, "ar4")
    net = os.path.join(work, "r4.yml")
    args = ["sweep", "--workload", prefix, "--system", system, "--network", net, "--vary", "bandwidth=10,20,40",
            "--vary", "latency=0,100,1000"]
    one, two = os.path.join(work, "one.csv"), os.path.join(work, "two.csv")
    p1 = run(*args, "-o", one)
    p2 = run(*args, "-o", two, mpi=2)
    check(p1.returncode == 0 and p2.returncode == 0, "sweeps ran: " + p1.stderr + p2.stderr)
    cut = lambda f: [r[:-2] for r in csv.reader(open(f))]  # without sim_seconds and error
    check(cut(one) == cut(two) and len(cut(two)) == 10, "2 processes: the same 9 rows as one process")
    p = run(*args[:-2], "--vary", "nonsense=1", "-o", os.path.join(work, "x.csv"), mpi=2)
    check(p.returncode != 0 and p.stderr.count("unknown key \"nonsense\"") == 1,
          "under mpirun a bad key is one line (rank 0's): %r" % p.stderr)
    # a refused output (the table over the system file it reads) and a bad
    # option were one line per process
    for bad, says in ((["-o", system], "would destroy the input"),
                      (["--custom-collective-scaling=sideways", "-o", os.path.join(work, "y.csv")], "sideways")):
        p = run(*args, *bad, mpi=3)
        check(p.returncode != 0 and p.stderr.count(says) == 1 and p.stderr.count("chakra sweep:") == 1,
              "under mpirun with %s: one line for the job, not one per process: %r" % (bad[0], p.stderr))


def test_custom_collective_scaling_as_sim(work):
    """issue 26 follow-up: sweep takes chakra sim's --custom-collective-scaling
    (every row), and the key varies like the others; each row is what
    chakra sim gives with that mode."""
    alg = os.path.join(work, "ag1m")
    p = run("coll", "gen", "--coll", "allgather", "--algo", "ring", "--ranks", 4, "--size", "1M", "-o", alg)
    check(p.returncode == 0, "coll gen: " + p.stderr)
    system = os.path.join(work, "custom.json")
    base = json.load(open(os.path.join(SOURCE, "examples", "system.json")))
    json.dump(dict(base, **{"all-gather-implementation-custom": [alg]}), open(system, "w"))
    prefix = os.path.join(work, "ag64k")
    run("gen", "microbench", "--coll", "all_gather", "--npus", 4, "--size", "64K", "-o", prefix)
    net = os.path.join(work, "r4.yml")
    want = {}
    for mode in ("scale", "as-is"):
        p = run("sim", "-q", "--workload-configuration=" + prefix, "--system-configuration=" + system,
                "--network-configuration=" + net, "--custom-collective-scaling=" + mode)
        check(p.returncode == 0 and "(--custom-collective-scaling=%s)" % mode in p.stderr, "sim %s: %s" % (mode, p.stderr))
        want[mode] = max(int(l.split()[2]) for l in p.stdout.splitlines() if "finished," in l)
    check(want["scale"] < want["as-is"], "a 64 KiB all-gather scaled runs faster than as made for 1 MiB: %s" % want)
    args = ["sweep", "--workload", prefix, "--system", system, "--network", net, "--vary", "bandwidth=50"]
    for mode in ("scale", "as-is"):
        out = os.path.join(work, "cs-%s.csv" % mode)
        p = run(*args, "--custom-collective-scaling", mode, "-o", out)
        rows = list(csv.DictReader(open(out))) if p.returncode == 0 else []
        check(len(rows) == 1 and int(rows[0]["max_finish_ns"]) == want[mode]
              and "custom-collective-scaling" not in rows[0],
              "sweep --custom-collective-scaling %s: chakra sim's %d ns, no extra column: %s %s"
              % (mode, want[mode], rows, p.stderr))
    out = os.path.join(work, "cs-vary.csv")
    p = run(*args, "--vary", "custom-collective-scaling=scale,as-is", "-o", out)
    rows = list(csv.DictReader(open(out))) if p.returncode == 0 else []
    check([(r["custom-collective-scaling"], int(r["max_finish_ns"])) for r in rows]
          == [("scale", want["scale"]), ("as-is", want["as-is"])], "--vary custom-collective-scaling: %s %s"
          % (rows, p.stderr))
    p = run(*args, "--vary", "custom-collective-scaling=as-is", "--custom-collective-scaling", "scale",
            "-o", os.path.join(work, "cs-both.csv"))
    check(p.returncode == 2 and p.stderr.count("\n") == 1 and "--custom-collective-scaling" in p.stderr,
          "varied and fixed at once: one line, exit 2: %r" % p.stderr)


def setup(work):
    # the 4-rank all-reduce most tests sweep
    run("gen", "microbench", "--coll", "all_reduce", "--npus", 4, "--size", "1M", "-o", os.path.join(work, "ar4"))
    network(os.path.join(work, "r4.yml"), 50, 500, 4)


if __name__ == "__main__":
    run_tests(globals(), "sweep", setup)
