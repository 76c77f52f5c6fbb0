#!/usr/bin/python3
"""chakra obfuscate: names become op-class tokens with a keyed hash, strings
and shapes go, what the simulator needs stays; all ranks or none; time
noise. On the shared data: for every multi-rank trace set (each workload
of the reference simulation cases, custom-collective, msccl, stage),
`chakra sim` prints the same per-rank results before and after obfuscation,
and no original name or string value of length >= 4 survives in the output
bytes.

usage: obfuscate_test.py CHAKRA_BINARY   (exit 0 pass, 1 fail)"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtest import check, comp, coll, main, shared_dir  # noqa: E402

TOKEN = re.compile(r"^[a-z_]+#[0-9a-f]{16}$")


def jsonl(w, et):
    p = w.run("jsonize", et)
    return [json.loads(l) for l in p.stdout.decode().splitlines()]


def key(w, name, text):
    path = w.path(name)
    with open(path, "w") as f:
        f.write(text)
    return path


def sample(w, name):
    meta = {"id": "1", "name": "## process_group:init ##", "type": "METADATA_NODE",
            "inputs": {"values": "['[{\"pg_name\": \"0\", \"ranks\": [0, 1]}]']", "shapes": "[[1, 2]]", "types": "['x']"}}
    c = comp(2, 50, [1], name="aten::linear secret_layer")
    c["attr"] += [{"name": "op_schema", "string_val": "aten::linear(Tensor input) -> Tensor"},
                  {"name": "op_type", "string_val": "MATMUL_SECRET"},
                  {"name": "shapes_list", "string_list": {"values": ["[128, 4096]", "[4096]"]}},
                  {"name": "rf_id", "int64_val": "77"}, {"name": "duration_ns", "uint64_val": "50123"}]
    c["inputs"] = {"values": "[[1024, 4096]]", "shapes": "[[128, 4096]]", "types": "['Tensor(float)']"}
    c["start_time_micros"] = "1000"
    a = coll(3, 1 << 20, [2], name="nccl:all_reduce secret", pg="0")
    return w.trace(name, [meta, c, a, comp(4, 9, [3], name="aten::linear secret_layer", cpu=True)],
                   metadata={"attr": [{"name": "schema", "string_val": "1.0.2-chakra.0.0.4"},
                                      {"name": "input_file", "string_val": "SECRET MODEL SOURCE"}]})


def test_names_strings_and_shapes(w):
    t = sample(w, "s")
    out = w.path("s.obf.et")
    p = w.run("obfuscate", t, "-o", out, "--key", key(w, "k1", "secret key"), "-q")
    nodes = jsonl(w, out)
    md, n = nodes[0], {x["id"]: x for x in nodes[1:]}
    names = {i: x.get("name", "") for i, x in n.items()}
    check("obfuscate exits 0", p.returncode == 0, p.stderr)
    check("names become class tokens with a 64-bit keyed hash",
          all(TOKEN.match(v) for v in names.values()) and names["1"].startswith("metadata#")
          and names["2"].startswith("comp#") and names["3"].startswith("all_reduce#") and names["4"].startswith("comp_cpu#"),
          names)
    check("the same name maps to the same hash", names["2"][-16:] == names["4"][-16:], names)
    attrs = {x["name"]: x for x in n["2"]["attr"]}
    check("string and string-list attributes dropped; numbers kept",
          set(attrs) == {"is_cpu_op", "rf_id", "duration_ns"} and attrs["rf_id"]["int64_val"] == "77", attrs)
    check("inputs/outputs removed; METADATA process groups kept without shapes",
          "inputs" not in n["2"] and n["1"]["inputs"].get("values", "").count("pg_name") == 1
          and "shapes" not in n["1"]["inputs"], (n["1"], n["2"]))
    check("simulator fields kept exactly", n["2"]["duration_micros"] == "50" and n["2"]["start_time_micros"] == "1000"
          and {a["name"]: a for a in n["3"]["attr"]}["comm_size"]["int64_val"] == str(1 << 20)
          and {a["name"]: a for a in n["3"]["attr"]}["pg_name"]["string_val"] == "0"
          and n["3"]["data_deps"] == ["2"], n)
    check("GlobalMetadata: schema kept, the rest dropped, producer named",
          [a["name"] for a in md["attr"]] == ["schema", "producer"], md)
    data = open(out, "rb").read()
    leaked = [s for s in ("secret", "aten::", "MATMUL", "4096", "SECRET MODEL", "Tensor") if s.encode() in data]
    check("no original name or string survives in the bytes", not leaked, leaked)


def test_key_decides_the_hash(w):
    t = sample(w, "k")
    outs = []
    for i, k in enumerate(["key A", "key A", "key B"]):
        out = w.path("k%d.et" % i)
        w.run("obfuscate", t, "-o", out, "--key", key(w, "key%d" % i, k), "-q")
        outs.append(open(out, "rb").read())
    check("the same key gives the same bytes; another key other names", outs[0] == outs[1] and outs[0] != outs[2],
          len(outs))
    p = w.run("obfuscate", t, "-o", w.path("k3.et"))
    check("without --key: a warning that names match across these ranks only", p.returncode == 0 and b"random key"
          in p.stderr, p.stderr)


def test_hash_strings_and_keep(w):
    t = sample(w, "h")
    out = w.path("h.obf.et")
    w.run("obfuscate", t, "-o", out, "--key", key(w, "kh", "k"), "--hash-strings", "--keep", "op_type", "-q")
    n = {x["id"]: x for x in jsonl(w, out)[1:]}
    attrs = {x["name"]: x for x in n["2"]["attr"]}
    check("--hash-strings hashes string values; --keep keeps one exactly",
          attrs["op_type"]["string_val"] == "MATMUL_SECRET" and re.match(r"^s#[0-9a-f]{16}$", attrs["op_schema"]["string_val"])
          and all(re.match(r"^s#[0-9a-f]{16}$", v) for v in attrs["shapes_list"]["string_list"]["values"]), attrs)


def test_time_noise(w):
    t = w.trace("noise", [comp(i, 1000, [i - 1] if i > 1 else []) for i in range(1, 201)])
    runs = []
    for seed in (1, 1, 2):
        out = w.path("n%d.et" % len(runs))
        w.run("obfuscate", t, "-o", out, "--key", key(w, "kn", "k"), "--time-noise", 10, "--seed", seed, "-q")
        runs.append([int(x.get("duration_micros", 0)) for x in jsonl(w, out)[1:]])
    check("--time-noise 10: every duration within 10%, not all equal",
          all(900 <= d <= 1100 for d in runs[0]) and len(set(runs[0])) > 50, runs[0][:10])
    check("the same seed gives the same durations, another seed others", runs[0] == runs[1] and runs[0] != runs[2], "")
    p = w.run("obfuscate", t, "-o", w.path("bad.et"), "--time-noise", 150)
    check("--time-noise 150: usage error", p.returncode == 2, p.stderr)


def test_all_ranks_or_none(w):
    w.trace("pre.0", [comp(1, 1)])
    w.trace("pre.1", [comp(1, 1)])
    with open(w.path("pre.2.et"), "wb") as f:
        f.write(b"\x00\x05\x08")
    p = w.run("obfuscate", w.path("pre"), "-o", w.path("out"), "-q")
    made = [f for f in os.listdir(w.dir) if f.startswith("out")]
    check("a bad rank: exit 2, no rank written", p.returncode == 2 and not made, (p.returncode, made, p.stderr))


LINE = re.compile(r"^sys\[(\d+)\]")


def sim(w, prefix, case, suite):
    cmd = ["sim", "--workload-configuration=" + prefix, "--system-configuration=" + case["system"],
           "--network-configuration=" + case["network"], "--network-model=" + case["backend"]]
    if case.get("remote_memory"):
        cmd.append("--remote-memory-configuration=" + case["remote_memory"])
    if case.get("groups"):
        cmd.append("--comm-group-configuration=" + case["groups"])
    p = w.run(*cmd, cwd=suite)
    return p.returncode, [l for l in p.stdout.decode().splitlines() if LINE.match(l)]


def strings_of(w, et):
    """Names and string attribute values of a trace, as bytes, length >= 4,
    except what obfuscation keeps by design (pg_name, the schema)."""
    out = set()
    for x in jsonl(w, et):
        if "name" in x and isinstance(x["name"], str):
            out.add(x["name"])
        for a in x.get("attr", []):
            if a.get("name") in ("pg_name", "schema"):
                continue
            if "string_val" in a:
                out.add(a["string_val"])
            out.update(a.get("string_list", {}).get("values", []))
    return {s.encode() for s in out if len(s.encode()) >= 4}


def test_shared_sets_simulate_the_same(w):
    shared = shared_dir()
    if not shared:
        print("skip shared trace sets: shared data absent")
        return
    suite = os.path.join(shared, "data", "reference", "sim")
    with open(os.path.join(suite, "cases.jsonl")) as f:
        cases = [json.loads(l) for l in f if l.strip()]
    by_workload = {}
    for c in cases:
        # the 64- and 256-NPU scaling cases repeat the microbenchmark traces at a
        # size that costs minutes under the sanitizers, and add nothing here
        if not c["name"].startswith("scale_"):
            by_workload.setdefault(c["workload"], c)
    base8 = dict(by_workload["../../traces/astra-microbench/all_reduce/8npus_1MB/all_reduce"])
    traces = os.path.join(shared, "data", "traces")
    extra = {os.path.join(traces, "custom-collective", "custom_allreduce"): dict(base8)}
    for algo in ("allgather_allpairs_n8", "allgather_ring_nofusion_n8", "alltoall_allpairs_n8"):
        extra[os.path.join(traces, "msccl", algo, algo)] = dict(base8)
    stage = os.path.join(traces, "stage", "gpt_small_tponly_dp2tp4", "gpt_small_tponly_dp2tp4")
    extra[stage] = dict(base8, groups=stage + ".json")
    work = [(os.path.normpath(os.path.join(suite, wl)), c) for wl, c in by_workload.items()] + list(extra.items())
    keyf = key(w, "kshared", "shared key")
    same = leaks = 0
    bad = []
    for i, (prefix, case) in enumerate(work):
        out = w.path("shared%d" % i)
        p = w.run("obfuscate", prefix, "-o", out, "--key", keyf, "-q")
        if p.returncode != 0:
            bad.append((prefix, "obfuscate failed", p.stderr))
            continue
        a, b = sim(w, prefix, case, suite), sim(w, out, case, suite)
        if a != b or not a[1]:
            bad.append((prefix, a, b))
        else:
            same += 1
        r = 0
        while os.path.exists("%s.%d.et" % (prefix, r)):
            data = open("%s.%d.et" % (out, r), "rb").read()
            for s in strings_of(w, "%s.%d.et" % (prefix, r)):
                if s in data:
                    leaks += 1
                    bad.append((prefix, r, "leaks", s[:60]))
                    break
            r += 1
    check("every shared multi-rank trace set (%d) simulates identically after obfuscation" % len(work),
          same == len(work), bad[:5])
    check("no original name or string value (>= 4 bytes) survives in any output", leaks == 0, bad[:5])


if __name__ == "__main__":
    sys.exit(main([test_names_strings_and_shapes, test_key_decides_the_hash, test_hash_strings_and_keep,
                   test_time_noise, test_all_ranks_or_none, test_shared_sets_simulate_the_same]))
