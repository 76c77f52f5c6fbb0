"""Builds small .et traces for the analyze tests with the protobuf runtime
(python3-protobuf) and et_def.proto compiled by protoc at test time, so the
traces do not depend on chakra-c's own writer.

Use: pb = etbuild.load(protoc, source_dir, tmpdir); etbuild.write(pb, path,
nodes, schema=None), each node a dict: id, type (NodeType name), dur, data,
ctrl, and attributes by name (cpu, comm_type, comm_size, comm_src, comm_dst,
comm_tag, pg_name, num_ops, tensor_size)."""
import argparse
import importlib
import os
import subprocess
import sys

SKIP = 77

# attribute name -> (field of AttributeProto, key in the node dict)
ATTRS = [("is_cpu_op", "bool_val", "cpu"), ("comm_type", "int64_val", "comm_type"),
         ("comm_size", "int64_val", "comm_size"), ("comm_src", "int32_val", "comm_src"),
         ("comm_dst", "int32_val", "comm_dst"), ("comm_tag", "int32_val", "comm_tag"),
         ("pg_name", "string_val", "pg_name"), ("num_ops", "uint64_val", "num_ops"),
         ("tensor_size", "uint64_val", "tensor_size")]


def parse_args():
    """--chakra BIN --source-dir REPO [--protoc PROTOC], as every analyze test takes."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--chakra", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--protoc", default="protoc")
    return ap.parse_args()


def load(protoc, source_dir, tmp):
    """The compiled et_def_pb2 module, or exits with SKIP saying why."""
    try:
        importlib.import_module("google.protobuf")
    except ImportError:
        print("SKIP: no google.protobuf (Debian package python3-protobuf)")
        sys.exit(SKIP)
    subprocess.run([protoc, "--proto_path=" + os.path.join(source_dir, "proto"),
                    "--python_out=" + tmp, "et_def.proto"], check=True)
    sys.path.insert(0, tmp)
    return importlib.import_module("et_def_pb2")


def _varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def write(pb, path, nodes, schema=None):
    meta = pb.GlobalMetadata(version="1.0.0")
    if schema is not None:
        meta.attr.add(name="schema", string_val=schema)
    msgs = [meta]
    for d in nodes:
        t = d["type"]
        n = pb.Node(id=d["id"], name=d.get("name", "n%d" % d["id"]), type=t if isinstance(t, int) else getattr(pb, t),
                    duration_micros=d.get("dur", 0))
        n.data_deps.extend(d.get("data", []))
        n.ctrl_deps.extend(d.get("ctrl", []))
        for name, field, key in ATTRS:
            if key in d:
                setattr(n.attr.add(name=name), field, d[key])
        msgs.append(n)
    with open(path, "wb") as f:
        for m in msgs:
            body = m.SerializeToString()
            f.write(_varint(len(body)) + body)


class Checks:
    """Collects named checks; exit status 1 if any failed."""

    def __init__(self):
        self.failed = []
        self.passed = 0

    def check(self, name, cond, detail=""):
        print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)))
        if cond:
            self.passed += 1
        else:
            self.failed.append(name)

    def status(self):
        print("%d passed, %d failed" % (self.passed, len(self.failed)))
        return 1 if self.failed else 0
