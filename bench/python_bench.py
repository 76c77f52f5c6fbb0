#!/usr/bin/python3
"""python_bench.py - chakra_c against the reference's protobuf path in Python.

Reads one trace into the same columns four ways and prints CPU seconds
(median and best of --repeat runs, each in a fresh process so no run
warms another's memory), wall seconds, and the speed-ups by median:

  protobuf, reference loop   the reference tools' reading loop (protolib's
                             openFileRd / decodeMessage: the length read a
                             byte at a time, ParseFromString into one Node),
                             the columns gathered from each node's fields
                             and attributes in Python, then numpy arrays
  protobuf, file in memory   the same with the whole file read at once and
                             protobuf's own varint decoder
  chakra_c.columns           the library's columnar read
  chakra_c.read + loop       read(), then the same Python loop over its nodes

The columns: id, type, start/duration, name, data and control
dependencies (CSR), is_cpu_op, comm_type, comm_size, comm_src, comm_dst,
comm_tag, num_ops, tensor_size, pg_name. et_def_pb2 is generated from
proto/et_def.proto with protoc into a temporary folder.

  python_bench.py --trace T.et --source-dir REPO --protoc protoc [--repeat 3]
"""
import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

STD_INT = {"comm_type": -1, "comm_size": 0, "comm_src": -1, "comm_dst": -1, "comm_tag": -1, "num_ops": 0,
           "tensor_size": 0}


def gather(nodes):
    """The columns of chakra_c.columns(), from objects with the reference
    classes' fields, as an analysis script gathers them."""
    import numpy as np
    cols = {k: [] for k in ("id", "type", "start_time_micros", "duration_micros", "name", "is_cpu_op",
                            "pg_name", *STD_INT)}
    dd, cd, ddo, cdo = [], [], [0], [0]
    for node in nodes:
        cols["id"].append(node.id)
        cols["type"].append(node.type)
        cols["start_time_micros"].append(node.start_time_micros)
        cols["duration_micros"].append(node.duration_micros)
        cols["name"].append(node.name)
        dd.extend(node.data_deps)
        ddo.append(len(dd))
        cd.extend(node.ctrl_deps)
        cdo.append(len(cd))
        std = dict(STD_INT, is_cpu_op=False, pg_name="")
        for a in node.attr:
            name = a.name
            if name == "is_cpu_op":
                std[name] = a.bool_val
            elif name == "pg_name":
                std[name] = a.string_val
            elif name in STD_INT:
                std[name] = a.int64_val if a.WhichOneof("value") == "int64_val" else a.uint64_val
        for k, v in std.items():
            cols[k].append(v)
    out = {k: np.array(v, dtype=np.uint64) for k, v in (("data_deps", dd), ("ctrl_deps", cd),
                                                         ("data_deps_offsets", ddo), ("ctrl_deps_offsets", cdo))}
    for k, v in cols.items():
        out[k] = v if k in ("name", "pg_name") else np.array(v)
    return out


def reference_loop(path, pb):
    """protolib's openFileRd and decodeMessage, as the reference tools read."""
    import gzip

    def varint(f):
        result = shift = 0
        while True:
            c = f.read(1)
            if not c:
                return 0
            b = struct.unpack("<B", c)[0]
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    try:
        f = gzip.open(path, "rb")
        f.seek(1)
        f.seek(0)
    except OSError:
        f = open(path, "rb")

    def nodes():
        meta = pb.GlobalMetadata()
        meta.ParseFromString(f.read(varint(f)))
        node = pb.Node()
        while True:
            size = varint(f)
            if size == 0:
                return
            node.ParseFromString(f.read(size))
            yield node
    out = gather(nodes())
    f.close()
    return out


def in_memory(path, pb):
    from google.protobuf.internal.decoder import _DecodeVarint32
    data = open(path, "rb").read()
    view = memoryview(data)

    def nodes():
        size, pos = _DecodeVarint32(data, 0)
        pos += size
        node = pb.Node()
        while pos < len(data):
            size, pos = _DecodeVarint32(data, pos)
            node.ParseFromString(view[pos:pos + size])
            pos += size
            yield node
    return gather(nodes())


def one_run(method, path, pbdir):
    """Runs one method in this process; prints {"cpu": s, "wall": s, "n": nodes}."""
    sys.path.insert(0, pbdir)
    if method.startswith("protobuf"):
        import et_def_pb2 as pb
    import chakra_c
    t_cpu, t_wall = time.process_time(), time.perf_counter()
    if method == "protobuf-reference":
        cols = reference_loop(path, pb)
    elif method == "protobuf-memory":
        cols = in_memory(path, pb)
    elif method == "columns":
        cols = chakra_c.columns(path)
    else:
        cols = gather(chakra_c.read(path).nodes)
    print(json.dumps({"cpu": time.process_time() - t_cpu, "wall": time.perf_counter() - t_wall,
                      "n": len(cols["id"]), "checksum": int(sum(int(x) for x in cols["duration_micros"][:1000]))}))


METHODS = [("protobuf-reference", "protobuf, reference loop"), ("protobuf-memory", "protobuf, file in memory"),
           ("columns", "chakra_c.columns"), ("read", "chakra_c.read + loop")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--protoc", default="protoc")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--pbdir", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        one_run(a.one, a.trace, a.pbdir)
        return
    with tempfile.TemporaryDirectory() as pbdir:
        subprocess.run([a.protoc, f"--proto_path={a.source_dir}/proto", f"--python_out={pbdir}",
                        f"{a.source_dir}/proto/et_def.proto"], check=True)
        results = {}
        for method, label in METHODS:
            runs = []
            for _ in range(a.repeat):
                p = subprocess.run([sys.executable, __file__, "--trace", a.trace, "--source-dir", a.source_dir,
                                    "--one", method, "--pbdir", pbdir], check=True, capture_output=True, text=True)
                runs.append(json.loads(p.stdout))
            results[method] = runs
            if len({(r["n"], r["checksum"]) for rs in results.values() for r in rs}) != 1:
                sys.exit(f"python_bench: {label} read something else than the others: {runs[0]}")
    med = {m: statistics.median(r["cpu"] for r in results[m]) for m in results}
    best = {m: min(r["cpu"] for r in results[m]) for m in results}
    print(f"{results['columns'][0]['n']:,} nodes, {os.path.getsize(a.trace):,} bytes; {a.repeat} runs each, "
          "CPU seconds (the steadier figure on a shared machine)")
    print(f"{'method':28} {'median':>8} {'best':>8} {'wall':>8} {'x ref loop':>11} {'x in memory':>12}")
    for method, label in METHODS:
        wall = statistics.median(r["wall"] for r in results[method])
        print(f"{label:28} {med[method]:8.3f} {best[method]:8.3f} {wall:8.3f} "
              f"{med['protobuf-reference'] / med[method]:10.1f}x {med['protobuf-memory'] / med[method]:11.1f}x")

if __name__ == "__main__":
    main()
