"""pyenv.py - what the chakra_c tests share: their arguments, the package
imported from the source tree over the library just built, the shared
traces, the reference protobuf classes, and one canonical form of a node
that read(), et_def_pb2 and `chakra jsonize` are each turned into."""
import argparse
import base64
import glob
import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hardening"))
sys.path.insert(0, os.path.join(HERE, "..", "analyze"))
from hcheck import check, finish  # noqa: E402,F401

SKIP = 77


def args():
    """--chakra BIN --source-dir REPO --lib libchakra.so [--protoc P]."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--chakra", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--protoc", default="protoc")
    a = ap.parse_args()
    os.environ["CHAKRA_LIB"] = a.lib
    sys.path.insert(0, os.path.join(a.source_dir, "python"))
    return a


def shared(a):
    """The shared data folder, or None (tests then say what they skip)."""
    d = os.environ.get("CHAKRA_SHARED") or os.path.join(a.source_dir, "..", "shared")
    return d if os.path.isdir(os.path.join(d, "data", "traces")) else None


def shared_traces(a):
    """Every .et under the shared traces (empty without the folder)."""
    d = shared(a)
    return sorted(glob.glob(os.path.join(d, "data", "traces", "**", "*.et"), recursive=True)) if d else []


def pb2(a, tmp):
    """et_def_pb2 compiled from proto/ by protoc, or None."""
    try:
        import etbuild
        return etbuild.load(a.protoc, a.source_dir, tmp)
    except SystemExit:
        return None


def chakra(a, *argv, ok=(0,)):
    p = subprocess.run([a.chakra, *argv], capture_output=True, text=True)
    if p.returncode not in ok:
        raise RuntimeError(f"chakra {' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def pb_nodes(pb, path):
    """GlobalMetadata and Node messages of a trace, decoded by protobuf."""
    import gzip
    from google.protobuf.internal.decoder import _DecodeVarint32
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    size, pos = _DecodeVarint32(data, 0)
    meta = pb.GlobalMetadata()
    meta.ParseFromString(data[pos:pos + size])
    pos += size
    nodes = []
    while pos < len(data):
        size, pos = _DecodeVarint32(data, pos)
        n = pb.Node()
        n.ParseFromString(data[pos:pos + size])
        nodes.append(n)
        pos += size
    return meta, nodes


# ---- one canonical form ----------------------------------------------------------

_F32 = struct.Struct("<f")
_NODE_TYPES = ["INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE", "COMP_NODE", "COMM_SEND_NODE",
               "COMM_RECV_NODE", "COMM_COLL_NODE"]


def _value(field, v):
    """A value as one comparable Python value whatever its source."""
    base = field[:-5] if field.endswith("_list") else field[:-4]
    if field.endswith("_list"):
        return tuple(_value(base + "_val", x) for x in (getattr(v, "values", v) if not isinstance(v, dict)
                                                         else v.get("values", [])))
    if base in ("float", "double"):
        if isinstance(v, str):  # jsonize's "NaN", "Infinity", "-Infinity"
            return v
        f = float(v)
        if f != f:
            return "NaN"
        if f in (float("inf"), float("-inf")):
            return "Infinity" if f > 0 else "-Infinity"
        return _F32.unpack(_F32.pack(f))[0] if base == "float" else f
    if base == "bool":
        return bool(v)
    if base == "bytes":
        return base64.b64decode(v) if isinstance(v, str) else bytes(v)
    if base == "string":
        return v
    return int(v)


def _attrs_of(attrs):
    out = []
    for a in attrs:
        if isinstance(a, dict):
            fields = [k for k in a if k.endswith("_val") or k.endswith("_list")]
            field = fields[0] if fields else None
            out.append((a.get("name", ""), a.get("doc_string", ""), field, _value(field, a[field]) if field else None))
        else:
            field = a.WhichOneof("value")
            out.append((a.name, a.doc_string, field, _value(field, getattr(a, field)) if field else None))
    return tuple(out)


def _io(x):
    return None if x is None else (x.get("values", ""), x.get("shapes", ""), x.get("types", "")) if isinstance(
        x, dict) else (x.values, x.shapes, x.types)


def canon(node):
    """A node (chakra_c's, a protobuf message, or a dict of jsonize's
    JSON) as a tuple of plain values."""
    if isinstance(node, dict):
        t = node.get("type", 0)
        return (int(node.get("id", 0)), node.get("name", ""), _NODE_TYPES.index(t) if isinstance(t, str) else t,
                tuple(int(x) for x in node.get("ctrl_deps", [])), tuple(int(x) for x in node.get("data_deps", [])),
                int(node.get("start_time_micros", 0)), int(node.get("duration_micros", 0)),
                _io(node.get("inputs")), _io(node.get("outputs")), _attrs_of(node.get("attr", [])))
    return (node.id, node.name, node.type, tuple(node.ctrl_deps), tuple(node.data_deps), node.start_time_micros,
            node.duration_micros, _io(node.inputs) if node.HasField("inputs") else None,
            _io(node.outputs) if node.HasField("outputs") else None, _attrs_of(node.attr))


def canon_meta(m):
    if isinstance(m, dict):
        return (m.get("version", ""), _attrs_of(m.get("attr", [])))
    return (m.version, _attrs_of(m.attr))


def jsonize(a, path):
    """`chakra jsonize` of a trace: (metadata dict, node dicts)."""
    lines = chakra(a, "jsonize", path).stdout.splitlines()
    docs = [json.loads(x) for x in lines]
    return docs[0], docs[1:]
