#!/usr/bin/python3
"""reference_tools.py - the reference tools' names, installed by cmake
--install, run with the invocations mlcommons/chakra's USER_GUIDE.md
documents, write what the reference tools write (docs/compat.md):

  chakra_trace_link --chakra-host-trace H --chakra-device-trace D --rank 0
      --output-file L.json                   = chakra link
  chakra_converter PyTorch --input L.json --output T.et [--simulate]
                                             = chakra convert pytorch --compat
  chakra_converter Text --input W.txt --output P --num-npus 2 --num-passes 2
                                             = chakra convert text --compat
  chakra_jsonizer --input_filename T.et --output_filename T.json
                                             = chakra jsonize --compat, and the
        reference's MessageToJson of each message when python3-protobuf and
        protoc are installed
  chakra_visualizer --input_filename T.et --output_filename O.dot|.graphml|.pdf
                                             every node and edge; a PDF when
        Graphviz is installed
  chakra_timeline_visualizer --input_filename LOG.csv --output_filename T.json
      --num_npus 4 --npu_frequency 1.5GHz   the reference's trace-event JSON,
        as its json.dump spells it (1500, its argparse's MHz, the same)
  chakra_generator --num_npus 4 [--default_*]  the fourteen workloads, byte
        for byte the messages the reference's generator encodes (built here
        with protobuf's Python classes when installed)

  reference_tools.py CMAKE BUILD_DIR SOURCE_DIR
"""
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

CMAKE, BUILD, SOURCE = sys.argv[1:4]
TOOLS = ["chakra_trace_link", "chakra_converter", "chakra_jsonizer", "chakra_visualizer",
         "chakra_timeline_visualizer", "chakra_generator"]
SHARED = os.path.join(SOURCE, "..", "shared", "data", "traces", "kineto-pair")
FAILURES = []


def check(name, ok, detail=""):
    print("%s: %s" % ("ok" if ok else "FAIL", name))
    if not ok:
        FAILURES.append(name)
        if detail:
            print("   ", str(detail)[-1500:])


def run(*args, cwd=None):
    return subprocess.run(list(args), capture_output=True, text=True, cwd=cwd)


def install(tmp):
    prefix = os.path.join(tmp, "prefix")
    p = run(CMAKE, "--install", BUILD, "--prefix", prefix)
    check("cmake --install", p.returncode == 0, p.stdout + p.stderr)
    bindir = os.path.join(prefix, "bin")
    for t in TOOLS:
        path = os.path.join(bindir, t)
        check("installed: %s runs chakra" % t, os.path.exists(path)
              and os.path.realpath(path) == os.path.realpath(os.path.join(bindir, "chakra")), path)
    return bindir


def protobuf_classes(tmp):
    """et_def_pb2 from the repo's schema with protoc, or None."""
    protoc = shutil.which("protoc")
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        return None
    if not protoc:
        return None
    out = os.path.join(tmp, "pb")
    os.mkdir(out)
    subprocess.run([protoc, "--proto_path=" + os.path.join(SOURCE, "proto"), "--python_out=" + out,
                    os.path.join(SOURCE, "proto", "et_def.proto")], check=True)
    sys.path.insert(0, out)
    import et_def_pb2
    return et_def_pb2


def host_and_device(tmp):
    """The shared PyTorch/Kineto pair, or a small one written here."""
    h, d = os.path.join(SHARED, "simple_add.host_et.json.gz"), os.path.join(SHARED, "simple_add.kineto.json.gz")
    if os.path.exists(h) and os.path.exists(d):
        return h, d
    import json
    io = {"values": [], "shapes": [], "types": []}
    attrs = [{"name": n, "type": "uint64", "value": 0} for n in ("rf_id", "fw_parent", "seq_id", "scope", "tid",
                                                                  "fw_tid")]
    nodes = [{"id": 2, "name": "[pytorch|profiler|execution_trace|thread]", "ctrl_deps": 1},
             {"id": 3, "name": "aten::mul", "ctrl_deps": 2}]
    for n in nodes:
        n.update(inputs=io, outputs=io, attrs=attrs)
    h, d = os.path.join(tmp, "host.json"), os.path.join(tmp, "kineto.json")
    with open(h, "w") as f:
        json.dump({"schema": "1.0.2-chakra.0.0.4", "pid": 1, "time": "t", "start_ts": 1, "nodes": nodes,
                   "finish_ts": 2}, f)
    with open(d, "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 10,
                                    "dur": 5, "args": {"External id": 1}}]}, f)
    return h, d


def test_link_convert(tmp, bindir, chakra):
    j = lambda *p: os.path.join(tmp, *p)
    host, device = host_and_device(tmp)
    p = run(os.path.join(bindir, "chakra_trace_link"), "--chakra-host-trace", host, "--chakra-device-trace", device,
            "--rank", "0", "--output-file", j("linked.json"))
    q = run(chakra, "link", "--host", host, "--device", device, "--rank", "0", "-o", j("linked-ours.json"))
    check("chakra_trace_link writes what chakra link writes", p.returncode == 0 and q.returncode == 0
          and filecmp.cmp(j("linked.json"), j("linked-ours.json"), shallow=False), p.stderr + q.stderr)
    p = run(os.path.join(bindir, "chakra_converter"), "PyTorch", "--input", j("linked.json"), "--output", j("t.et"))
    q = run(chakra, "convert", "pytorch", "--compat", j("linked.json"), "-o", j("t-ours.et"))
    check("chakra_converter PyTorch writes what chakra convert pytorch --compat writes",
          p.returncode == 0 and q.returncode == 0 and filecmp.cmp(j("t.et"), j("t-ours.et"), shallow=False),
          p.stderr + q.stderr)
    p = run(os.path.join(bindir, "chakra_converter"), "--log-filename", j("conv.log"), "PyTorch", "--input",
            j("linked.json"), "--output", j("t2.et"), "--simulate")
    check("chakra_converter --log-filename F PyTorch ... --simulate: converts, logs, says what --simulate does",
          p.returncode == 0 and filecmp.cmp(j("t.et"), j("t2.et"), shallow=False) and os.path.getsize(j("conv.log"))
          and "--simulate" in p.stderr, p.stderr)
    with open(j("w.txt"), "w") as f:
        f.write("DATA\n2\nconv1 -1 5 NONE 0 6 NONE 0 7 ALLREDUCE 100 1\nfc -1 8 NONE 0 9 NONE 0 10 NONE 0 1\n")
    p = run(os.path.join(bindir, "chakra_converter"), "Text", "--input", j("w.txt"), "--output", j("w"),
            "--num-npus", "2", "--num-passes", "2")
    q = run(chakra, "convert", "text", "--compat", j("w.txt"), "-o", j("w-ours"), "--num-npus", "2", "--num-passes", "2")
    check("chakra_converter Text writes PREFIX.<r>.et as chakra convert text --compat does",
          p.returncode == 0 and q.returncode == 0 and all(
              filecmp.cmp(j("w.%d.et" % r), j("w-ours.%d.et" % r), shallow=False) for r in range(2)),
          p.stderr + q.stderr)
    for args, what in ((["Pytorch", "--input", "x"], "expected PyTorch or Text"),
                       (["PyTorch", "--inptu", "x", "--output", "y"], "did you mean --input?")):
        p = run(os.path.join(bindir, "chakra_converter"), *args)
        check("chakra_converter %s: refused" % " ".join(args), p.returncode == 2 and what in p.stderr, p.stderr)
    return j("t.et")


def test_jsonizer(tmp, bindir, chakra, trace, pb):
    j = lambda *p: os.path.join(tmp, *p)
    p = run(os.path.join(bindir, "chakra_jsonizer"), "--input_filename", trace, "--output_filename", j("t.json"))
    q = run(chakra, "jsonize", "--compat", trace, "-o", j("t-ours.json"))
    check("chakra_jsonizer writes what chakra jsonize --compat writes", p.returncode == 0 and q.returncode == 0
          and filecmp.cmp(j("t.json"), j("t-ours.json"), shallow=False), p.stderr + q.stderr)
    if pb is None:
        print("skipped: jsonizer against MessageToJson (python3-protobuf or protoc missing)")
        return
    from google.protobuf.json_format import MessageToJson
    from google.protobuf.internal.decoder import _DecodeVarint32
    data = open(trace, "rb").read()
    pos, parts, first = 0, [], True
    while pos < len(data):
        size, pos = _DecodeVarint32(data, pos)
        m = pb.GlobalMetadata() if first else pb.Node()
        m.ParseFromString(data[pos:pos + size])
        parts.append(MessageToJson(m))
        pos += size
        first = False
    check("chakra_jsonizer writes the reference's MessageToJson of each message, back to back",
          open(j("t.json")).read() == "".join(parts))


def test_visualizer(tmp, bindir, trace):
    j = lambda *p: os.path.join(tmp, *p)
    v = os.path.join(bindir, "chakra_visualizer")
    nodes = run(os.path.join(bindir, "chakra"), "stats", "--json", trace)
    import json
    n = json.loads(nodes.stdout)["ranks"][0]["nodes"]
    p = run(v, "--input_filename", trace, "--output_filename", j("g.dot"))
    text = open(j("g.dot")).read() if os.path.exists(j("g.dot")) else ""
    check("chakra_visualizer .dot: a digraph of every node", p.returncode == 0 and text.startswith("digraph")
          and len(re.findall(r"^\s*n\d+ \[", text, re.M)) == n, (n, p.stderr, text[:300]))
    p = run(v, "--input_filename", trace, "--output_filename", j("g.graphml"))
    try:
        root = ET.parse(j("g.graphml")).getroot()
        got = len(root.findall(".//{http://graphml.graphdrawing.org/xmlns}node"))
    except (OSError, ET.ParseError) as e:
        got = str(e)
    check("chakra_visualizer .graphml: GraphML of every node", p.returncode == 0 and got == n, (got, n, p.stderr))
    if shutil.which("dot"):
        p = run(v, "--input_filename", trace, "--output_filename", j("g.pdf"))
        check("chakra_visualizer .pdf: Graphviz renders it, no DOT left beside", p.returncode == 0
              and open(j("g.pdf"), "rb").read(5) == b"%PDF-"
              and not [f for f in os.listdir(tmp) if "chakra-dot" in f], p.stderr)
    else:
        print("skipped: chakra_visualizer .pdf (Graphviz's dot is not installed)")
    for ext in ("pdf", "dot"):  # the trace named like an output: refused before Graphviz runs, input untouched
        shutil.copy(trace, j("self." + ext))
        p = run(v, "--input_filename", j("self." + ext), "--output_filename", j("self." + ext))
        check("chakra_visualizer .%s over its own input: refused, input untouched" % ext, p.returncode == 2
              and p.stderr.count("\n") == 1 and "would destroy the input" in p.stderr
              and filecmp.cmp(trace, j("self." + ext), shallow=False)
              and not [f for f in os.listdir(tmp) if "chakra-dot" in f or "chakra-pdf" in f], p.stderr)
    p = run(v, "--input_filename", trace, "--output_filename", j("g.png"))
    check("chakra_visualizer .png: refused naming the extensions", p.returncode == 2 and ".graphml" in p.stderr
          and not os.path.exists(j("g.png")), p.stderr)


LOG = """ASTRA-sim log lines without the words are skipped
issue,sys[0]=0,tick=0,node_id=1,node_name=COMP_NODE_gemm
issue,sys[3]=3,tick=10,node_id=1,node_name=COMM_COLL_NODE_ar
callback,sys[0]=0,tick=1500,node_id=1,node_name=COMP_NODE_gemm
issue,sys[0]=0,tick=1500,node_id=2,node_name=MEM_LOAD_NODE_REMOTE_MEMORY
callback,sys[3]=3,tick=3333,node_id=1,node_name=COMM_COLL_NODE_ar
callback,sys[0]=0,tick=2000,node_id=2,node_name=x
issue,sys[0]=0,tick=2001,node_id=3,node_name=MEM_STORE_NODE_LOCAL_MEMORY_\u00e9
issue,sys[2]=2,tick=2001,node_id=3,node_name=COMM_SEND_NODE
callback,sys[0]=0,tick=7777777,node_id=3,node_name=x
"""


def test_timeline_visualizer(tmp, bindir):
    import json
    j = lambda *p: os.path.join(tmp, *p)
    with open(j("log.csv"), "w", encoding="utf-8") as f:
        f.write(LOG)
    t = os.path.join(bindir, "chakra_timeline_visualizer")
    p = run(t, "--input_filename", j("log.csv"), "--output_filename", j("tl.json"), "--num_npus", "4",
            "--npu_frequency", "1.5GHz")
    q = run(t, "--input_filename", j("log.csv"), "--output_filename", j("tl2.json"), "--num_npus", "4",
            "--npu_frequency", "1500")
    # what the reference computes: ms from cycles at 1500 MHz, tracks by name
    ev = []
    for tid, npu, issued, done, name in ((3, 0, 0, 1500, "COMP_NODE_gemm"), (4, 3, 10, 3333, "COMM_COLL_NODE_ar"),
                                         (2, 0, 1500, 2000, "MEM_LOAD_NODE_REMOTE_MEMORY"),
                                         (1, 0, 2001, 7777777, "MEM_STORE_NODE_LOCAL_MEMORY_\u00e9")):
        dur = (done - issued) / (1500 * 1_000)
        ev.append({"pid": npu, "tid": tid, "ts": (issued / 1500) / 1_000, "dur": dur, "ph": "X", "name": name,
                   "args": {"ms": dur}})
    want = json.dumps({"meta_user": "aras", "traceEvents": ev, "meta_cpu_count": 4})
    got = open(j("tl.json")).read() if os.path.exists(j("tl.json")) else ""
    check("chakra_timeline_visualizer --npu_frequency 1.5GHz: the reference's JSON, as json.dump spells it",
          p.returncode == 0 and got == want, (p.stderr, got[:400], want[:400]))
    check("chakra_timeline_visualizer --npu_frequency 1500 (MHz): the same",
          q.returncode == 0 and filecmp.cmp(j("tl.json"), j("tl2.json"), shallow=False), q.stderr)
    for extra, line, what in ((["--num_npus", "2"], 3, "NPU 3, but --num_npus is 2"),
                              (["--npu_frequency", "fast"], 0, "--npu_frequency: expected MHz")):
        args = {"--num_npus": "4", "--npu_frequency": "1500"}
        args[extra[0]] = extra[1]
        p = run(t, "--input_filename", j("log.csv"), "--output_filename", j("bad.json"),
                *[x for kv in args.items() for x in kv])
        check("chakra_timeline_visualizer %s: refused, nothing written" % " ".join(extra),
              p.returncode == 2 and what in p.stderr and (not line or "line %d:" % line in p.stderr)
              and not os.path.exists(j("bad.json")), p.stderr)
    os.symlink("log.csv", j("link.csv"))
    for out in ("log.csv", "link.csv"):  # by its name, through a link to it
        p = run(t, "--input_filename", j("log.csv"), "--output_filename", j(out), "--num_npus", "4",
                "--npu_frequency", "1500")
        check("chakra_timeline_visualizer --output_filename %s over its input: refused, input untouched" % out,
              p.returncode == 2 and p.stderr.count("\n") == 1 and "would destroy the input" in p.stderr
              and open(j("log.csv"), encoding="utf-8").read() == LOG, p.stderr)


def reference_generator(pb, npus, runtime, tensor, comm):
    """{file: bytes}: the messages the reference's generator encodes, per its
    documented behaviour (one id counter over every file)."""
    from google.protobuf.internal.encoder import _VarintBytes
    files, next_id = {}, [0]

    def node(name, typ):
        n = pb.Node(id=next_id[0], name=name, type=typ)
        next_id[0] += 1
        return n

    def frame(m):
        b = m.SerializeToString()
        return _VarintBytes(len(b)) + b
    A = pb.AttributeProto

    def metadata_node():
        n = node("METADATA_NODE", pb.METADATA_NODE)
        n.attr.extend([
            A(name="double", double_val=1.2345, doc_string="double"),
            A(name="double_list", double_list=pb.DoubleList(values=[1.2345, 2.3456])),
            A(name="float", float_val=1.2345, doc_string="float"),
            A(name="float_list", float_list=pb.FloatList(values=[1.2345, 2.3456])),
            A(name="int32", int32_val=12345, doc_string="int32"),
            A(name="int32_list", int32_list=pb.Int32List(values=[12345, 23456])),
            A(name="int64", int64_val=9876543210, doc_string="int64"),
            A(name="int64_list", int64_list=pb.Int64List(values=[9876543210, 1234567890])),
            A(name="uint32", uint32_val=12345, doc_string="uint32"),
            A(name="uint32_list", uint32_list=pb.Uint32List(values=[12345, 23456])),
            A(name="uint64", uint64_val=9876543210, doc_string="uint64"),
            A(name="uint64_list", uint64_list=pb.Uint64List(values=[9876543210, 1234567890])),
            A(name="sint32", sint32_val=-12345, doc_string="sint32"),
            A(name="sint32_list", sint32_list=pb.Sint32List(values=[12345, -23456])),
            A(name="sint64", sint64_val=-9876543210, doc_string="sint64"),
            A(name="sint64_list", sint64_list=pb.Sint64List(values=[9876543210, -1234567890])),
            A(name="fixed32", fixed32_val=12345),
            A(name="fixed32_list", fixed32_list=pb.Fixed32List(values=[12345, 23456])),
            A(name="fixed64", fixed64_val=9876543210),
            A(name="fixed64_list", fixed64_list=pb.Fixed64List(values=[9876543210, 1234567890])),
            A(name="sfixed32", sfixed32_val=-12345),
            A(name="sfixed32_list", sfixed32_list=pb.Sfixed32List(values=[12345, -23456])),
            A(name="sfixed64", sfixed64_val=-9876543210),
            A(name="sfixed64_list", sfixed64_list=pb.Sfixed64List(values=[9876543210, -1234567890])),
            A(name="bool", bool_val=True, doc_string="bool"),
            A(name="bool_list", bool_list=pb.BoolList(values=[i % 2 == 0 for i in range(10)])),
            A(name="string", string_val="12345", doc_string="string"),
            A(name="string_list", string_list=pb.StringList(values=[str(12345 + i) for i in range(10)])),
            A(name="bytes", bytes_val=b"12345"),
            A(name="bytes_list", bytes_list=pb.BytesList(values=[str(12345 + i).encode() for i in range(10)])),
        ])
        return [n]

    def simple(name, typ, attrs, duration=0, count=1, dependent=False):
        def make():
            out = []
            for k in range(count):
                n = node(name, typ)
                n.attr.append(A(name="is_cpu_op", bool_val=False))
                n.attr.extend(attrs)
                n.duration_micros = duration
                if dependent and k:
                    n.data_deps.append(out[-1].id)
                out.append(n)
            return out
        return make

    ts = [A(name="tensor_size", uint64_val=tensor)]
    workloads = [
        ("one_metadata_node_all_types", metadata_node),
        ("one_remote_mem_load_node", simple("MEM_LOAD_NODE", pb.MEM_LOAD_NODE, ts)),
        ("one_remote_mem_store_node", simple("MEM_STORE_NODE", pb.MEM_STORE_NODE, ts)),
        ("one_comp_node", simple("COMP_NODE", pb.COMP_NODE, [], runtime)),
        ("two_comp_nodes_independent", simple("COMP_NODE", pb.COMP_NODE, [], runtime, 2)),
        ("two_comp_nodes_dependent", simple("COMP_NODE", pb.COMP_NODE, [], runtime, 2, True)),
    ]
    for name, ctype, size in (("ALL_REDUCE", pb.ALL_REDUCE, comm), ("ALL_TO_ALL", pb.ALL_TO_ALL, comm),
                              ("ALL_GATHER", pb.ALL_GATHER, comm), ("REDUCE_SCATTER", pb.REDUCE_SCATTER, comm),
                              ("BROADCAST", pb.BROADCAST, comm), ("BARRIER", pb.BARRIER, 0)):
        workloads.append((name, simple(name, pb.COMM_COLL_NODE, [A(name="comm_type", int64_val=ctype),
                                                                 A(name="comm_size", int64_val=size)])))
    workloads += [("one_comm_send_node", simple("COMM_SEND_NODE", pb.COMM_SEND_NODE, ts)),
                  ("one_comm_recv_node", simple("COMM_RECV_NODE", pb.COMM_RECV_NODE, ts))]
    for name, make in workloads:
        for r in range(npus):
            files["%s.%d.et" % (name, r)] = frame(pb.GlobalMetadata(version="1.0.0")) + b"".join(
                frame(n) for n in make())
    return files


def test_generator(tmp, bindir, pb):
    g = os.path.join(bindir, "chakra_generator")
    for args, npus, values in (([], 64, (5, 1024, 65536)),
                               (["--num_npus", "4", "--default_runtime", "7", "--default_tensor_size", "2048",
                                 "--default_comm_size", "1048576"], 4, (7, 2048, 1048576))):
        out = tempfile.mkdtemp(dir=tmp)
        p = run(g, *args, cwd=out)
        names = sorted(os.listdir(out))
        check("chakra_generator %s: 14 workloads x %d ranks in the current folder" % (" ".join(args), npus),
              p.returncode == 0 and len(names) == 14 * npus and "BARRIER.%d.et" % (npus - 1) in names, p.stderr)
        if pb is None:
            print("skipped: chakra_generator against protobuf's encoding (python3-protobuf or protoc missing)")
            continue
        want = reference_generator(pb, npus, *values)
        differ = [f for f, b in want.items()
                  if not os.path.exists(os.path.join(out, f)) or open(os.path.join(out, f), "rb").read() != b]
        check("chakra_generator %s: every file byte for byte the reference's" % " ".join(args),
              not differ and set(names) == set(want), differ[:5])
    p = run(g, "--num_npus", "0", cwd=tmp)
    check("chakra_generator --num_npus 0: refused", p.returncode == 2 and "--num_npus" in p.stderr, p.stderr)


def main():
    tmp = tempfile.mkdtemp(prefix="chakra-compat-")
    try:
        bindir = install(tmp)
        chakra = os.path.join(bindir, "chakra")
        pb = protobuf_classes(tmp)
        trace = test_link_convert(tmp, bindir, chakra)
        test_jsonizer(tmp, bindir, chakra, trace, pb)
        test_visualizer(tmp, bindir, trace)
        test_timeline_visualizer(tmp, bindir)
        test_generator(tmp, bindir, pb)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
