"""ops.py - chakra_c.validate(), stats() and simulate() against the CLI.

stats() is `chakra stats --json`'s document and simulate() `chakra sim
--report`'s (but the wall clock), on a microbenchmark, a DLRM step and the
shared STAGE job with its groups file beside the traces; validate() has the
CLI's problem lines and summary on a clean job and on a broken one written
with chakra_c.write(); bad options are one ChakraError naming them."""
import json
import os
import re
import tempfile

import pyenv
from pyenv import check

A = pyenv.args()
import chakra_c  # noqa: E402

SYSTEM = os.path.join(A.source_dir, "examples", "system.json")
RING8 = os.path.join(A.source_dir, "examples", "ring8.yml")


def cli_json(*argv):
    return json.loads(pyenv.chakra(A, *argv).stdout)


def stats_agree(traces, label, **kw):
    argv = ["stats", "--json", "--no-checks"]
    if "comm_groups" in kw:
        argv += ["--comm-groups", kw["comm_groups"]]
    check(chakra_c.stats(traces, **kw) == cli_json(*argv, *([traces] if isinstance(traces, str) else traces)),
          f"{label}: stats() is chakra stats --json")


def sim_agree(prefix, system, network, label, tmp, **kw):
    report = os.path.join(tmp, "report.json")
    extra = [f"--{k.replace('_', '-')}={v}" for k, v in kw.items()]
    pyenv.chakra(A, "sim", f"--workload-configuration={prefix}", f"--system-configuration={system}",
                 f"--network-configuration={network}", f"--report={report}", *extra)
    cli = json.load(open(report))
    mine = chakra_c.simulate(prefix, system, network, **kw)
    for doc in (cli, mine):
        doc.pop("wall_clock_s", None)
    check(mine == cli and mine["ranks"], f"{label}: simulate() is chakra sim --report")
    return mine


def validate_agree(traces, label, ok=(0,), **kw):
    argv = ["validate", "--max-errors", "0"] + [f"--{k.replace('_', '-')}={v}" for k, v in kw.items()]
    out = pyenv.chakra(A, *argv, *traces, ok=ok).stdout.splitlines()
    mine = chakra_c.validate(traces, **kw)
    lines = []
    for p in mine["problems"]:
        if "node" in p:
            lines.append(f"{p['file']}: node {p['node']} (offset {p['offset']}): {p['severity']}: {p['what']}")
        else:
            lines.append(f"{p['file']}: {p['severity']}: {p['what']}")
    summary = re.match(r"(\d+) file\(s\), (\d+) node\(s\): (\d+) error\(s\), (\d+) warning\(s\)", out[-1])
    check(lines == out[:-1], f"{label}: validate() lists the CLI's problem lines ({len(lines)})")
    check(summary and [int(x) for x in summary.groups()] == [mine["files"], mine["nodes"], mine["errors"],
                                                            mine["warnings"]], f"{label}: validate() counts as "
          f"the CLI's summary: {out[-1]}")
    return mine


def broken_job(tmp):
    """Rank 0 sends to rank 1, which never receives: a job validate refuses."""
    meta = chakra_c.GlobalMetadata(version="1.0.0")
    send = chakra_c.Node(id=1, name="send", type=chakra_c.COMM_SEND_NODE)
    for name, field, v in (("is_cpu_op", "bool_val", False), ("comm_src", "int32_val", 0),
                           ("comm_dst", "int32_val", 1), ("comm_tag", "int32_val", 3),
                           ("comm_size", "int64_val", 1024)):
        send.attr.add(name=name, **{field: v})
    comp = chakra_c.Node(id=1, name="compute", type=chakra_c.COMP_NODE, duration_micros=5, data_deps=[9])
    comp.attr.add(name="is_cpu_op", bool_val=False)
    paths = [os.path.join(tmp, f"broken.{r}.et") for r in range(2)]
    chakra_c.write(paths[0], meta, [send])
    chakra_c.write(paths[1], meta, [comp])
    return paths


def bad_options(tmp, prefix):
    for fn, kw, what in ((chakra_c.stats, {"no_such_option": 1}, "no-such-option"),
                         (chakra_c.validate, {"rendezvous_protocol": "maybe"}, "maybe"),
                         (chakra_c.simulate, {"network_model": "psychic"}, "psychic"),
                         (chakra_c.simulate, {"num_queues_per_dim": 0}, "num-queues-per-dim")):
        args = (prefix, SYSTEM, RING8) if fn is chakra_c.simulate else (prefix,)
        try:
            fn(*args, **kw)
            check(False, f"{fn.__name__}({kw}) raises")
        except chakra_c.ChakraError as e:
            check(what in str(e) and e.code == -4, f"{fn.__name__}: a bad option is named: {e}")
    try:
        chakra_c.simulate(os.path.join(tmp, "mb4"), SYSTEM, RING8)
        check(False, "simulate() of 4 ranks on 8 NPUs raises")
    except chakra_c.ChakraError as e:
        check("8 NPUs" in str(e), f"simulate(): a rank count that is not the network's: {e}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        mb = os.path.join(tmp, "mb")
        pyenv.chakra(A, "gen", "microbench", "--coll", "all_reduce", "--npus", "8", "--size", "1M", "-o", mb)
        pyenv.chakra(A, "gen", "microbench", "--coll", "all_gather", "--npus", "4", "--size", "1M", "-o",
                     os.path.join(tmp, "mb4"))
        dlrm = os.path.join(tmp, "dlrm")
        pyenv.chakra(A, "gen", "dlrm", "--npus", "8", "--batch", "64", "--tables", "6", "--rows", "100",
                     "--peak-tflops", "100", "--mem-bw", "1000", "-q", "-o", dlrm)
        stats_agree(mb, "microbench")
        stats_agree([f"{dlrm}.{r}.et" for r in range(8)], "dlrm (files)")
        sim_agree(mb, SYSTEM, RING8, "microbench", tmp)
        sim_agree(dlrm, SYSTEM, RING8, "dlrm, congestion-unaware", tmp, network_model="unaware")
        clean = validate_agree([mb], "microbench")
        check(clean["errors"] == 0 and clean["files"] == 8 and clean["groups_beside"] is None,
              "validate(): a clean job")
        broken = validate_agree(broken_job(tmp), "broken job", ok=(1,))
        check(broken["errors"] >= 2 and any(p.get("node") == 1 for p in broken["problems"]),
              f"validate(): the broken job's errors: {broken['problems'][:3]}")
        check(len(chakra_c.validate(broken_job(tmp), max_errors=1)["problems"]) == 1, "validate(max_errors=1)")
        bad_options(tmp, mb)
        grid = os.path.join(tmp, "grid")
        pyenv.chakra(A, "synth", "-q", "--num-stacks", "2", "--dmodel", "256", "--dff", "512", "--head", "4",
                     "--kvhead", "2", "--seq", "64", "--dvocal", "1000", "--dp", "2", "--tp", "2", "--pp", "2",
                     "--batch", "4", "--micro-batch", "2", "--schedule", "1f1b", "--shared", "-o", grid)
        by_class, per_rank = chakra_c.validate(grid), chakra_c.validate(grid, per_rank="true")
        check(by_class["classes"] == 2 and per_rank["classes"] == 0 and by_class["errors"] == per_rank["errors"] == 0
              and by_class["files"] == per_rank["files"] == 8 and by_class["nodes"] == per_rank["nodes"],
              f"validate(): a shared grid set by class and per_rank: {by_class} {per_rank}")
        shared = pyenv.shared(A)
        job = os.path.join(shared or "", "data", "traces", "stage", "gpt_dp1tp4pp2", "gpt_dp1tp4pp2")
        if shared and os.path.exists(job + ".0.et"):
            stats_agree(job, "STAGE gpt_dp1tp4pp2")
            v = validate_agree([job], "STAGE gpt_dp1tp4pp2")
            check(v["groups_beside"] == job + ".json", "validate(): the groups file beside the traces is named")
            sim_agree(job, SYSTEM, RING8, "STAGE gpt_dp1tp4pp2", tmp)
        else:
            print("note: the shared STAGE traces are absent: checked on generated jobs only")
    pyenv.finish()


if __name__ == "__main__":
    main()
