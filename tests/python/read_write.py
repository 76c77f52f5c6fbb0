"""read_write.py - chakra_c.read(), columns() and write() against the
independent decoders.

For traces chakra writes (microbench, dlrm), one written by protobuf with
every attribute kind, and every .et of the shared traces:
  - read() agrees node for node, field for field, with `chakra jsonize` and
    with the reference's protobuf classes (et_def_pb2 from protoc);
  - write(read()) gives the file back byte for byte, from the unchanged
    columns and from node objects (the general path), and protobuf's own
    Node messages written by write() give protobuf's bytes;
  - columns() agrees with read(), and its decoder of its own (flatscan)
    with the protobuf-c path on every standard-attribute column;
  - an analysis loop written against et_def_pb2 gives the same answers on
    chakra_c's nodes;
  - bad input is one ChakraError or ValueError naming the place.
"""
import ctypes
import os
import tempfile

import pyenv
from pyenv import check

A = pyenv.args()
import chakra_c  # noqa: E402
from chakra_c import _lib  # noqa: E402


def all_kinds_trace(pb, path):
    """A trace with every AttributeProto kind, doc strings, IOInfo and deps,
    written by protobuf (the reference's encodeMessage framing)."""
    from google.protobuf.internal.encoder import _VarintBytes
    meta = pb.GlobalMetadata(version="1.0.0")
    meta.attr.add(name="schema", string_val="1.0.2-chakra.0.0.4", doc_string="from the test")
    n = pb.Node(id=7, name="all kinds", type=pb.METADATA_NODE, start_time_micros=3, duration_micros=5)
    n.data_deps.extend([1, 2])
    n.ctrl_deps.append(3)
    n.inputs.values = "[1, 2]"
    n.inputs.shapes = "[[2]]"
    n.outputs.types = "Tensor(float)"
    n.attr.add(name="double", double_val=1.2345, doc_string="d")
    n.attr.add(name="double_list").double_list.values.extend([1.5, -2.25])
    n.attr.add(name="float", float_val=1.2345)
    n.attr.add(name="float_list").float_list.values.extend([1.2345, 2.5])
    n.attr.add(name="int32", int32_val=-12345)
    n.attr.add(name="int32_list").int32_list.values.extend([1, -2])
    n.attr.add(name="int64", int64_val=-9876543210)
    n.attr.add(name="int64_list").int64_list.values.extend([9876543210, -1])
    n.attr.add(name="uint32", uint32_val=4000000000)
    n.attr.add(name="uint32_list").uint32_list.values.extend([1, 4000000000])
    n.attr.add(name="uint64", uint64_val=2 ** 64 - 1)
    n.attr.add(name="uint64_list").uint64_list.values.extend([2 ** 63, 0])
    n.attr.add(name="sint32", sint32_val=-5)
    n.attr.add(name="sint32_list").sint32_list.values.extend([-5, 5])
    n.attr.add(name="sint64", sint64_val=-2 ** 63)
    n.attr.add(name="sint64_list").sint64_list.values.extend([-1, 1])
    n.attr.add(name="fixed32", fixed32_val=7)
    n.attr.add(name="fixed32_list").fixed32_list.values.extend([7, 8])
    n.attr.add(name="fixed64", fixed64_val=2 ** 40)
    n.attr.add(name="fixed64_list").fixed64_list.values.extend([1, 2])
    n.attr.add(name="sfixed32", sfixed32_val=-7)
    n.attr.add(name="sfixed32_list").sfixed32_list.values.extend([-7, 7])
    n.attr.add(name="sfixed64", sfixed64_val=-2 ** 40)
    n.attr.add(name="sfixed64_list").sfixed64_list.values.extend([-1, 2])
    n.attr.add(name="bool", bool_val=True)
    n.attr.add(name="bool_list").bool_list.values.extend([True, False, True])
    n.attr.add(name="string", string_val="ünïcode, \"quoted\"\nnewline")
    n.attr.add(name="string_list").string_list.values.extend(["a", "", "c"])
    n.attr.add(name="bytes", bytes_val=b"\x00\x01\xff")
    n.attr.add(name="bytes_list").bytes_list.values.extend([b"x", b"\x00"])
    n.attr.add(name="no value")
    m = pb.Node(id=8, name="coll", type=pb.COMM_COLL_NODE)
    m.data_deps.append(7)
    m.attr.add(name="is_cpu_op", bool_val=False)
    m.attr.add(name="comm_type", int64_val=pb.ALL_GATHER)
    m.attr.add(name="comm_size", int64_val=1 << 20)
    m.attr.add(name="pg_name", string_val="5")
    m.attr.add(name="involved_dim", bool_list=pb.BoolList(values=[True, False]))
    with open(path, "wb") as f:
        for msg in (meta, n, m):
            body = msg.SerializeToString()
            f.write(_VarintBytes(len(body)) + body)
    return meta, [n, m]


def agree(path, pb, exact_bytes=True):
    """read() against jsonize and protobuf; write() back; columns()."""
    name = os.path.relpath(path, A.source_dir) if path.startswith(A.source_dir) else os.path.basename(path)
    meta, nodes = chakra_c.read(path)
    jmeta, jnodes = pyenv.jsonize(A, path)
    mine = [pyenv.canon(n) for n in nodes]
    check(pyenv.canon_meta(meta) == pyenv.canon_meta(jmeta), f"{name}: metadata as jsonize has it")
    check(mine == [pyenv.canon(n) for n in jnodes], f"{name}: {len(nodes)} nodes as jsonize has them")
    if pb is not None:
        pmeta, pnodes = pyenv.pb_nodes(pb, path)
        check(pyenv.canon_meta(meta) == pyenv.canon_meta(pmeta), f"{name}: metadata as protobuf decodes it")
        same = [i for i, (x, y) in enumerate(zip(mine, (pyenv.canon(n) for n in pnodes))) if x != y]
        check(len(pnodes) == len(mine) and not same, f"{name}: nodes as protobuf decodes them (first differing: "
              f"{same[:1]})")
    with tempfile.TemporaryDirectory() as tmp:
        fast, general = os.path.join(tmp, "fast.et"), os.path.join(tmp, "general.et")
        chakra_c.write(fast, meta, nodes)
        chakra_c.write(general, meta, [n for n in nodes])
        original = open(path, "rb").read()
        for out, how in ((fast, "unchanged columns"), (general, "node objects")):
            if exact_bytes:
                check(open(out, "rb").read() == original, f"{name}: write() from {how} gives the file back")
            else:
                check([pyenv.canon(n) for n in chakra_c.read(out).nodes] == mine, f"{name}: write() from {how}")
    cols = chakra_c.columns(path)
    check(list(cols["id"]) == [n[0] for n in mine] and list(cols["type"]) == [n[2] for n in mine] and
          list(cols["name"]) == [n[1] for n in mine] and
          list(cols["duration_micros"]) == [n[6] for n in mine], f"{name}: columns() id, type, name, duration")
    deps = [tuple(cols["data_deps"][cols["data_deps_offsets"][i]:cols["data_deps_offsets"][i + 1]])
            for i in range(len(mine))]
    check(deps == [n[4] for n in mine], f"{name}: columns() data deps")
    check(flat_paths_agree(path), f"{name}: columns' decoder and protobuf-c's agree on every column")


_COLS = ["id", "start_time_micros", "duration_micros", "type", "name", "data_dep_off", "ctrl_dep_off",
         "std_present", "std_is_cpu_op", "std_comm_type", "std_comm_size", "std_num_ops", "std_tensor_size",
         "std_comm_src", "std_comm_dst", "std_comm_tag"]


def flat_read(path, flags):
    out = ctypes.POINTER(_lib.Flat)()
    err = _lib.Error()
    opt = _lib.FlatOptions(flags, 0, _lib.DiagFn(), None)
    _lib.check(_lib.lib.chakra_flat_read(ctypes.byref(out), _lib.fspath(path), ctypes.byref(opt), ctypes.byref(err)),
               err)
    return out


def flat_paths_agree(path):
    """The columns path (flatscan) against the protobuf-c path (attribute
    rows asked for too), column by column; string columns by text."""
    fast = flat_read(path, _lib.FLAT_NO_ATTRS | _lib.FLAT_NO_IO | _lib.FLAT_STD)
    slow = flat_read(path, _lib.FLAT_STD)
    try:
        f, s = fast.contents, slow.contents
        if f.n != s.n:
            return False
        n = f.n
        for col in _COLS:
            count = n + 1 if col.endswith("_off") else n
            a, b = getattr(f, col), getattr(s, col)
            if col == "name":
                if [text(f, a[i]) for i in range(n)] != [text(s, b[i]) for i in range(n)]:
                    return False
            elif [a[i] for i in range(count)] != [b[i] for i in range(count)]:
                return False
        pg = ([text(f, f.std_pg_name[i]) for i in range(n)], [text(s, s.std_pg_name[i]) for i in range(n)])
        deps = all([getattr(f, v)[i] for i in range(getattr(f, o)[n])] == [getattr(s, v)[i] for i in range(
            getattr(s, o)[n])] for v, o in (("data_deps", "data_dep_off"), ("ctrl_deps", "ctrl_dep_off")))
        return pg[0] == pg[1] and deps
    finally:
        _lib.lib.chakra_flat_free(fast)
        _lib.lib.chakra_flat_free(slow)


def text(f, s):
    return ctypes.string_at(f.strings + f.str_off[s], f.str_off[s + 1] - f.str_off[s]) if s else b""


def analysis(nodes):
    """Written against et_def_pb2, as analysis scripts are."""
    total, sizes, kinds = 0, {}, []
    for node in nodes:
        total += node.duration_micros
        if node.type == chakra_c.COMM_COLL_NODE:
            for a in node.attr:
                if a.name == "comm_size":
                    sizes[node.id] = a.int64_val
        kinds.append([a.WhichOneof("value") for a in node.attr])
    return total, sizes, kinds


def porting(pb, path):
    meta, nodes = chakra_c.read(path)
    check(analysis(nodes) == analysis(pyenv.pb_nodes(pb, path)[1]), f"{os.path.basename(path)}: a loop written for "
          "et_def_pb2 answers the same on chakra_c's nodes")


def pb_messages_written(pb, tmp):
    """write() takes protobuf's own messages and writes protobuf's bytes."""
    src = os.path.join(tmp, "kinds.et")
    meta, nodes = all_kinds_trace(pb, src)
    out = os.path.join(tmp, "from_pb.et")
    chakra_c.write(out, meta, nodes)
    check(open(out, "rb").read() == open(src, "rb").read(), "protobuf Node messages written by write(): "
          "protobuf's bytes")
    node = chakra_c.Node(id=1, name="n", type=chakra_c.COMP_NODE, data_deps=[0], duration_micros=4,
                         attr=[chakra_c.AttributeProto(name="is_cpu_op", bool_val=False)])
    node.attr.add(name="num_ops", uint64_val=10)
    mine = os.path.join(tmp, "mine.et")
    chakra_c.write(mine, chakra_c.GlobalMetadata(version="1.0.0"), [node, {"id": 2, "name": "d",
                                                                           "type": chakra_c.COMP_NODE}])
    back = chakra_c.read(mine).nodes
    check(back[0] == node and back[1].name == "d" and back[1].HasField("inputs") is False,
          "chakra_c.Node and dicts written and read back")
    ref = pb.Node(id=1, name="n", type=pb.COMP_NODE, data_deps=[0], duration_micros=4)
    ref.attr.add(name="is_cpu_op", bool_val=False)
    ref.attr.add(name="num_ops", uint64_val=10)
    check(pyenv.canon(back[0]) == pyenv.canon(ref), "a chakra_c.Node equals the protobuf message built alike")


def bad_input(tmp):
    good = os.path.join(tmp, "mb.0.et")
    cut = os.path.join(tmp, "cut.et")
    open(cut, "wb").write(open(good, "rb").read()[:-3])
    for fn in (chakra_c.read, chakra_c.columns):
        try:
            fn(cut)
            check(False, f"{fn.__name__} of a truncated trace raises")
        except chakra_c.ChakraError as e:
            check("cut.et" in str(e) and "truncated" in str(e) and e.code == -2,
                  f"{fn.__name__}: a truncated trace is one ChakraError naming file and place: {e}")
    meta = chakra_c.GlobalMetadata(version="1.0.0")
    for node, what in ((chakra_c.Node(attr=[chakra_c.AttributeProto(name="x", int32_val=2 ** 31)]), "32 signed"),
                       (chakra_c.Node(attr=[chakra_c.AttributeProto(name="x", uint64_val=-1)]), "64 unsigned"),
                       (chakra_c.Node(id=-1), "id"), (chakra_c.Node(name=5), "expected text")):
        out = os.path.join(tmp, "bad.et")
        try:
            chakra_c.write(out, meta, [chakra_c.Node(), node])
            check(False, f"write() refuses {what}")
        except ValueError as e:
            check(what in str(e) and "node 1" in str(e) and not os.path.exists(out), f"write() refuses {what}: {e}")
    try:
        chakra_c.write(os.path.join(tmp, "no", "such", "dir.et"), meta, [])
        check(False, "write() into a missing folder raises")
    except chakra_c.ChakraError as e:
        check("dir.et" in str(e), f"write() into a missing folder: {e}")
    nul = chakra_c.Node(name="a\0b")
    try:
        chakra_c.write(os.path.join(tmp, "nul.et"), meta, [nul])
        check(False, "a NUL inside a name is refused")
    except chakra_c.ChakraError as e:
        check("NUL" in str(e) and "name" in str(e), f"a NUL inside a name: {e}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        pb = pyenv.pb2(A, tmp)
        if pb is None:
            print("note: no protobuf runtime or protoc; the comparisons with et_def_pb2 are skipped")
        pyenv.chakra(A, "gen", "microbench", "--coll", "all_reduce", "--npus", "4", "--size", "1M", "-o",
                     os.path.join(tmp, "mb"))
        pyenv.chakra(A, "gen", "dlrm", "--npus", "4", "--batch", "64", "--tables", "6", "--rows", "100",
                     "--peak-tflops", "100", "--mem-bw", "1000", "-q", "-o", os.path.join(tmp, "dlrm"))
        for p in ("mb.0.et", "dlrm.1.et"):
            agree(os.path.join(tmp, p), pb)
        if pb is not None:
            agree(all_kinds_trace(pb, os.path.join(tmp, "kinds.et")) and os.path.join(tmp, "kinds.et"), pb)
            pb_messages_written(pb, tmp)
            porting(pb, os.path.join(tmp, "dlrm.0.et"))
        bad_input(tmp)
        traces = pyenv.shared_traces(A)
        if not traces:
            print("note: the shared traces are absent (CHAKRA_SHARED or ../shared): checked on generated traces only")
        for path in traces:
            agree(path, pb)
        if pb is not None and traces:
            porting(pb, [t for t in traces if "chakra-real" in t][0])
    pyenv.finish()


if __name__ == "__main__":
    main()
