#!/usr/bin/python3
"""bad_inputs.py - the bad-input corpus, made at test time and run through the CLI.

Pins what users see for broken input (format spec 1.4 and section 6):

  * .et files that break the framing or do not parse (truncated stream or
    length varint, overlong varints, lengths of 2^31 and above or past the
    end, wrong and invalid wire types, defects inside nested messages, broken
    gzip): `chakra jsonize` exits non-zero with exactly one line on stderr that
    names the file and a byte offset (and, where the case says, what is
    wrong), and leaves neither the -o target nor a `.NAME.XXXXXX` temporary
    in the output directory; the graph loader (graph_load helper) fails the
    same way;
  * graph-level defects (dependency cycles, data deps on absent ids,
    duplicate ids): the file is well-formed, so jsonize succeeds, but loading
    the graph fails with one line naming file, node and offset, and
    `chakra validate` exits 1;
  * malformed JSON for `chakra pack` (syntax, unknown field, wrong value
    type, out-of-range integers, empty input = no GlobalMetadata, ...): one
    line naming the file and the line, no output left;
  * legal oddities: node type 99 is readable (jsonize prints the number, pack
    restores it), invalid UTF-8 is replaced by U+FFFD with one warning
    naming the node and exit 0, a zero-length node is an empty object.

Messages are encoded by the few helpers below (plain protobuf wire format),
so every byte of every case is visible here. --write-corpus DIR only writes
the inputs (DIR/reader/*.et, DIR/pack/*.json) for the fuzz regression run.

Usage: bad_inputs.py --chakra CHAKRA --graph-load GRAPH_LOAD
       bad_inputs.py --write-corpus DIR
"""
import argparse
import concurrent.futures
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading


# ---- protobuf wire format --------------------------------------------------

def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(field, wire_type):
    return varint(field << 3 | wire_type)


def f_varint(field, v):
    return tag(field, 0) + varint(v)


def f_len(field, data):
    return tag(field, 2) + varint(len(data)) + data


def frame(body):
    return varint(len(body)) + body


def packed(values):
    return b"".join(varint(v) for v in values)


def node(id=0, name=b"", type=4, data=(), ctrl=(), extra=b""):
    """A Node body with fields in schema order (as protobuf writes them)."""
    body = b""
    if id:
        body += f_varint(1, id)
    if name:
        body += f_len(2, name)
    if type:
        body += f_varint(3, type)
    if ctrl:
        body += f_len(4, packed(ctrl))
    if data:
        body += f_len(5, packed(data))
    return body + extra


def attr(name, kind_field=None, value=b""):
    return f_len(1, name) + (tag(kind_field, 0) + value if kind_field else b"")


META_BODY = f_len(1, b"1.0.0")
META = frame(META_BODY)


def trace(*bodies):
    return META + b"".join(frame(b) for b in bodies)


def good_nodes(n=3):
    return [node(i, b"op%d" % i, data=(i - 1,) if i > 1 else ()) for i in range(1, n + 1)]


def gz(data):
    return gzip.compress(data, mtime=0)


# ---- the corpus --------------------------------------------------------------

class Case:
    def __init__(self, name, data, kind, at=None, what="", node_id=None):
        self.name = name        # file name stem
        self.data = data        # bytes of the input
        self.kind = kind        # et_error | graph_error | json_error | odd
        self.at = at            # byte offset (int), offset range (lo, hi), or JSON line
        self.what = what        # substring the error must contain
        self.node_id = node_id  # node the message must name


def corpus():
    c = []
    g3 = good_nodes(3)
    after3 = len(trace(*g3))
    # framing
    c.append(Case("empty", b"", "et_error", 0, "no GlobalMetadata"))
    c.append(Case("truncated_metadata", META[:-2], "et_error", 0, "truncated"))
    cut = frame(node(4, b"a name that is cut", data=(3,)))
    c.append(Case("truncated_stream", trace(*g3) + cut[:-5], "et_error", after3, "truncated"))
    c.append(Case("truncated_length_varint", trace(*g3) + b"\x80", "et_error", after3,
                  "length varint truncated"))
    c.append(Case("overlong_length_varint", META + b"\x81\x80\x80\x80\x80\x00" + b"\x08\x01", "et_error",
                  len(META), "longer than 5 bytes"))
    c.append(Case("length_2pow31", META + b"\x80\x80\x80\x80\x08" + b"\x08\x01", "et_error",
                  len(META), "length 2147483648 exceeds"))
    c.append(Case("length_4gib", META + b"\xff\xff\xff\xff\x0f", "et_error", len(META), "exceeds"))
    c.append(Case("length_above_cap", META + varint(300 << 20) + b"\x08\x01", "et_error", len(META),
                  "exceeds the limit of 268435456 bytes"))
    c.append(Case("length_past_eof", META + varint(1000) + b"\x08\x01" * 5, "et_error", len(META),
                  "declares 1000 bytes but only 10 remain"))
    c.append(Case("metadata_wrong_wire_type", frame(f_varint(1, 5)), "et_error", (1, 3),
                  "'version' has wire type 0"))

    # bodies that do not parse: the offset lies inside the bad node's message
    def bad_body(name, body, what, prefix=()):
        head = trace(*prefix)
        lo = len(head)
        c.append(Case(name, head + frame(body) + frame(node(99)), "et_error",
                      (lo, lo + len(frame(body)) - 1), what))
    bad_body("wire_type_id_length_delimited", f_len(1, b"\x05"), "'id' has wire type 2")
    bad_body("wire_type_duration_fixed64", node(1) + tag(7, 1) + b"\x01" * 8, "'duration_micros' has wire type 1")
    bad_body("wire_type_name_varint", node(1) + f_varint(2, 5), "'name' has wire type 0")
    bad_body("wire_type_7", node(1) + tag(4, 7) + b"\x00", "invalid wire type 7")
    bad_body("wire_type_group_start", node(1) + tag(10, 3) + b"\x00", "invalid wire type 3")
    bad_body("field_length_past_end", node(1) + tag(2, 2) + varint(50) + b"abc",
             "length 50 runs past the end")
    bad_body("field_length_2pow40", node(1) + tag(8, 2) + varint(1 << 40) + b"abc", "runs past the end")
    bad_body("packed_deps_past_end", node(1) + tag(5, 2) + varint(100) + b"\x01\x02", "'data_deps'")
    bad_body("packed_deps_truncated_varint", node(1) + f_len(5, b"\x05\x80\x80"),
             "'data_deps': packed varint runs past the end")
    bad_body("packed_fixed32_bad_length", node(1) + f_len(10, f_len(1, b"x") + f_len(20, f_len(1, b"\x01\x02\x03"))),
             "packed length 3 is not a multiple of 4")
    bad_body("truncated_varint_in_body", node(1) + tag(6, 0) + b"\x80\x80", "runs past the end")
    bad_body("field_number_zero", node(1) + b"\x00\x01", "invalid field number 0")
    bad_body("nested_attr_wrong_wire_type", node(1) + f_len(10, f_len(1, b"comm_size") + f_len(9, b"\x05")),
             "'int64_val' has wire type 2")
    bad_body("nested_attr_length_past_end", node(1) + f_len(10, tag(1, 2) + varint(40) + b"comm"),
             "'name'")
    bad_body("nested_list_wrong_wire_type",
             node(1) + f_len(10, f_len(1, b"involved_dim") + f_len(10, tag(1, 5) + b"\x01\x00\x00\x00")),
             "'values' has wire type 5")
    bad_body("third_node_bad", f_len(1, b"x"), "message 4 (Node)", prefix=g3)
    # gzip
    body = trace(*good_nodes(50))
    c.append(Case("gzip_truncated", gz(body)[:-10], "et_error", None, "gzip stream truncated"))
    c.append(Case("gzip_trailing_garbage", gz(body) + b"garbage", "et_error", None,
                  "data after the end of the gzip stream"))
    c.append(Case("gzip_corrupt", gz(body)[:20] + b"\xff" * 16 + gz(body)[36:], "et_error", None, "gzip"))

    # graph-level: well-formed files the graph loader must refuse
    c.append(Case("cycle", trace(node(4), node(1, data=(3,)), node(2, data=(1,)), node(3, data=(2, 4))),
                  "graph_error", None, "cycle"))
    c.append(Case("cycle_through_ctrl_dep", trace(node(1, ctrl=(2,)), node(2, data=(1,))), "graph_error",
                  None, "cycle"))
    c.append(Case("self_data_dep", trace(node(1), node(2, data=(1, 2))), "graph_error", None,
                  "itself", node_id=2))
    c.append(Case("dangling_data_dep", trace(node(1), node(2, data=(1, 99))), "graph_error", None,
                  "data dep 99 not found", node_id=2))
    c.append(Case("duplicate_ids", trace(node(1), node(2, data=(1,)), node(1, b"again")), "graph_error",
                  None, "duplicate node id", node_id=1))

    # legal oddities
    c.append(Case("node_type_99", trace(node(1), node(5, b"odd", type=99, data=(1,))), "odd"))
    c.append(Case("invalid_utf8_name", trace(node(1), node(42, b"bad\xff\xfename", data=(1,))), "odd"))
    c.append(Case("zero_length_node", META + b"\x00" + frame(node(3)), "odd"))

    # JSON for pack
    def bad_json(name, text, line, what):
        c.append(Case(name, text, "json_error", line, what))
    bad_json("json_empty", b"", 1, "no GlobalMetadata")
    bad_json("json_only_whitespace", b"\n  \n\t\n", 4, "no GlobalMetadata")
    bad_json("json_syntax_error", b'{"version":"1"}\n{"id":"1"}\n{"id":"2",,}\n', 3, "invalid JSON")
    bad_json("json_lexical_error", b'{"version":"1"}\n{"id": tru}\n', 2, "invalid JSON")
    bad_json("json_truncated", b'{"version":"1"}\n{"id":"1",\n"name":"x"', 3, "invalid JSON")
    bad_json("json_unknown_field", b'{"version":"1"}\n{"id":"1",\n"colour":"red"}\n', 3,
             "unknown field 'colour'")
    bad_json("json_unknown_metadata_field", b'{"verzion":"1"}\n', 1, "unknown field 'verzion' in GlobalMetadata")
    bad_json("json_wrong_type_name_number", b'{}\n{"name":5}\n', 2, "field 'name'")
    bad_json("json_wrong_type_id_text", b'{}\n{"id":"abc"}\n', 2, "field 'id'")
    bad_json("json_wrong_type_deps_not_array", b'{}\n{"data_deps":"1"}\n', 2, "repeated")
    bad_json("json_wrong_type_bool_string", b'{}\n{"attr":[{"name":"is_cpu_op","bool_val":"true"}]}\n', 2,
             "field 'bool_val'")
    bad_json("json_wrong_type_object_for_string", b'{}\n{"name":{"a":1}}\n', 2, "field 'name'")
    bad_json("json_unknown_enum_name", b'{}\n{"type":"GPU_NODE"}\n', 2, "NodeType")
    bad_json("json_int32_out_of_range", b'{}\n{"attr":[{"name":"comm_src",\n"int32_val":2147483648}]}\n', 3,
             "32-bit range")
    bad_json("json_int32_out_of_range_negative", b'{}\n{"attr":[{"name":"x","int32_val":-2147483649}]}\n', 2,
             "32-bit range")
    bad_json("json_uint64_out_of_range", b'{}\n{"id":"18446744073709551616"}\n', 2, "field 'id'")
    bad_json("json_negative_id", b'{}\n{"id":-1}\n', 2, "field 'id'")
    bad_json("json_fractional_id", b'{}\n{"id":1.5}\n', 2, "field 'id'")
    bad_json("json_null_in_array", b'{}\n{"data_deps":[null]}\n', 2, "null")
    bad_json("json_top_level_array", b'[{"version":"1"}]\n', 1, "unexpected array")
    bad_json("json_document_nodes_first", b'{"nodes":[{"id":"1"}],"global_metadata":{}}', 1,
             "before \"global_metadata\"")
    bad_json("json_et_bytes", trace(*g3), 1, "invalid JSON")
    c.append(Case("json_invalid_utf8", b'{}\n{"id":"1"}\n{"id":"77","name":"x\xfe\xffy"}\n', "odd"))
    return c


# ---- running -------------------------------------------------------------------

# Cases also run with a compressed -o target (and --compat for .et), and .et
# cases also given to the graph loader: a sample, as every CLI run costs
# ~0.1 s in the sanitizer build.
ALSO_COMPAT_GZ = {"truncated_stream", "length_2pow31", "wire_type_7", "gzip_truncated",
                  "json_syntax_error", "json_unknown_field", "json_empty"}
ALSO_GRAPH = {"empty", "truncated_stream", "length_past_eof", "nested_attr_wrong_wire_type",
              "gzip_trailing_garbage"}

class Checker:
    def __init__(self, chakra, graph_load, work):
        self.chakra, self.graph_load, self.work = chakra, graph_load, work
        self.failures, self.runs = [], 0
        self.lock = threading.Lock()

    def fail(self, case, msg):
        self.failures.append("%s: %s" % (case.name, msg))

    def run(self, argv):
        with self.lock:
            self.runs += 1
        return subprocess.run(argv, capture_output=True)

    def outdir(self, case, tag):
        d = os.path.join(self.work, "out", case.name + "." + tag)
        os.makedirs(d)
        return d

    def check_place(self, case, line, path):
        """The one stderr line: names the file and the place."""
        if path not in line:
            self.fail(case, "error does not name the file: %r" % line)
        if case.kind == "json_error":
            m = re.search(r"\bline (\d+)\b", line)
            if not m:
                self.fail(case, "error names no line: %r" % line)
            elif case.at is not None and int(m.group(1)) != case.at:
                self.fail(case, "error names line %s, want %s: %r" % (m.group(1), case.at, line))
        else:
            m = re.search(r"\boffset (\d+)\b", line)
            if not m:
                self.fail(case, "error names no offset: %r" % line)
            elif isinstance(case.at, int) and int(m.group(1)) != case.at:
                self.fail(case, "error names offset %s, want %d: %r" % (m.group(1), case.at, line))
            elif isinstance(case.at, tuple) and not case.at[0] <= int(m.group(1)) <= case.at[1]:
                self.fail(case, "offset %s outside the bad message [%d, %d]: %r"
                          % (m.group(1), case.at[0], case.at[1], line))
        if case.what and case.what not in line:
            self.fail(case, "error does not say %r: %r" % (case.what, line))
        if case.node_id is not None and "node %d " % case.node_id not in line:
            self.fail(case, "error does not name node %d: %r" % (case.node_id, line))

    @staticmethod
    def prefix(tool):
        """Every CLI message starts 'chakra COMMAND: '; the graph_load helper says 'chakra: '."""
        word = tool.split()[0]
        return "chakra: " if word == "graph_load" else "chakra %s: " % word

    def expect_failure(self, case, argv, path, outdir, tool):
        r = self.run(argv)
        err = r.stderr.decode("utf-8", "replace")
        lines = err.splitlines()
        if r.returncode == 0:
            self.fail(case, "%s exited 0" % tool)
        elif r.returncode < 0 or r.returncode > 2:
            self.fail(case, "%s died or crashed (status %d): %s" % (tool, r.returncode, err[-2000:]))
        if len(lines) != 1:
            self.fail(case, "%s: want exactly one line on stderr, got %d: %r" % (tool, len(lines), err[:2000]))
        elif not lines[0].startswith(self.prefix(tool)):
            self.fail(case, "%s: stderr line does not start with %r: %r" % (tool, self.prefix(tool), lines[0]))
        if lines:
            self.check_place(case, lines[0], path)
        if outdir is not None and os.listdir(outdir):
            self.fail(case, "%s left files behind: %s" % (tool, os.listdir(outdir)))

    def expect_success(self, case, argv, tool, warnings=0):
        r = self.run(argv)
        err = r.stderr.decode("utf-8", "replace")
        if r.returncode != 0:
            self.fail(case, "%s failed (%d): %s" % (tool, r.returncode, err))
        if len(err.splitlines()) != warnings:
            self.fail(case, "%s: want %d stderr line(s), got %r" % (tool, warnings, err))
        return err

    def check(self, case):
        suffix = ".json" if case.name.startswith("json_") else ".et"
        path = os.path.join(self.work, "in", case.name + suffix)
        with open(path, "wb") as f:
            f.write(case.data)
        if case.kind == "et_error":
            d = self.outdir(case, "jsonize")
            self.expect_failure(case, [self.chakra, "jsonize", path, "-o", os.path.join(d, "out.json")],
                                path, d, "jsonize")
            if case.name in ALSO_COMPAT_GZ:  # another layout, compressed output: same contract
                d = self.outdir(case, "compat")
                self.expect_failure(case, [self.chakra, "jsonize", "--compat", path, "-o",
                                           os.path.join(d, "out.json.gz")], path, d, "jsonize --compat")
            if case.name in ALSO_GRAPH:  # the graph loader reports reader errors unchanged
                self.expect_failure(case, [self.graph_load, path], path, None, "graph_load")
        elif case.kind == "graph_error":
            d = self.outdir(case, "jsonize")
            self.expect_success(case, [self.chakra, "jsonize", path, "-o", os.path.join(d, "out.json")],
                                "jsonize")
            self.expect_failure(case, [self.graph_load, path], path, None, "graph_load")
            r = self.run([self.chakra, "validate", path])
            if r.returncode != 1 or case.what.encode() not in r.stdout + r.stderr:
                self.fail(case, "chakra validate: want exit 1 and %r in the output; exit %d, output %r"
                          % (case.what, r.returncode, (r.stdout + r.stderr)[:500]))
        elif case.kind == "json_error":
            d = self.outdir(case, "pack")
            self.expect_failure(case, [self.chakra, "pack", path, "-o", os.path.join(d, "out.et")],
                                path, d, "pack")
            if case.name in ALSO_COMPAT_GZ:
                d = self.outdir(case, "pack_gz")
                self.expect_failure(case, [self.chakra, "pack", path, "-o", os.path.join(d, "out.et.gz")],
                                    path, d, "pack (gzip output)")
        else:
            getattr(self, "odd_" + case.name)(case, path)

    # -- legal oddities --

    def odd_node_type_99(self, case, path):
        d = self.outdir(case, "rt")
        js, back = os.path.join(d, "t.json"), os.path.join(d, "back.et")
        self.expect_success(case, [self.chakra, "jsonize", path, "-o", js], "jsonize")
        if b'"type":99' not in open(js, "rb").read():
            self.fail(case, "jsonize does not print type 99 as a number")
        self.expect_success(case, [self.chakra, "pack", js, "-o", back], "pack")
        if open(back, "rb").read() != case.data:
            self.fail(case, "pack does not restore type 99 byte for byte")
        self.expect_success(case, [self.graph_load, path], "graph_load")

    def odd_invalid_utf8_name(self, case, path):
        d = self.outdir(case, "rt")
        js, back = os.path.join(d, "t.json"), os.path.join(d, "back.et")
        err = self.expect_success(case, [self.chakra, "jsonize", path, "-o", js], "jsonize", warnings=1)
        if path not in err or "node 42" not in err or "U+FFFD" not in err:
            self.fail(case, "jsonize warning does not name file and node 42: %r" % err)
        text = open(js, "rb").read()
        if b"bad\xef\xbf\xbd\xef\xbf\xbdname" not in text:
            self.fail(case, "jsonize output lacks the U+FFFD replacements")
        self.expect_success(case, [self.chakra, "pack", js, "-o", back], "pack")
        if b"bad\xef\xbf\xbd\xef\xbf\xbdname" not in open(back, "rb").read():
            self.fail(case, "packed trace lacks the U+FFFD replacements")
        # --compat escapes them the way Python's json module does
        self.expect_success(case, [self.chakra, "jsonize", "--compat", path, "-o", js], "jsonize --compat",
                            warnings=1)
        if b'"bad\\ufffd\\ufffdname"' not in open(js, "rb").read():
            self.fail(case, "--compat output lacks \\ufffd escapes")

    def odd_json_invalid_utf8(self, case, path):
        d = self.outdir(case, "pack")
        out = os.path.join(d, "out.et")
        err = self.expect_success(case, [self.chakra, "pack", path, "-o", out], "pack", warnings=1)
        if path not in err or "node 77" not in err:
            self.fail(case, "pack warning does not name file and node 77: %r" % err)
        if b"x\xef\xbf\xbd\xef\xbf\xbdy" not in open(out, "rb").read():
            self.fail(case, "packed trace lacks the U+FFFD replacements")

    def odd_zero_length_node(self, case, path):
        d = self.outdir(case, "rt")
        js = os.path.join(d, "t.json")
        self.expect_success(case, [self.chakra, "jsonize", path, "-o", js], "jsonize")
        if open(js, "rb").read() != b'{"version":"1.0.0"}\n{}\n{"id":"3","type":"COMP_NODE"}\n':
            self.fail(case, "zero-length node does not print as {}: %r" % open(js, "rb").read())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chakra")
    ap.add_argument("--graph-load")
    ap.add_argument("--write-corpus")
    args = ap.parse_args()
    cases = corpus()
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    if args.write_corpus:
        for sub in ("reader", "pack"):
            os.makedirs(os.path.join(args.write_corpus, sub), exist_ok=True)
        for c in cases:
            sub, ext = ("pack", ".json") if c.name.startswith("json_") else ("reader", ".et")
            with open(os.path.join(args.write_corpus, sub, c.name + ext), "wb") as f:
                f.write(c.data)
        return 0
    if not args.chakra or not args.graph_load:
        ap.error("--chakra and --graph-load are required")
    work = tempfile.mkdtemp(prefix="chakra-bad-")
    try:
        os.makedirs(os.path.join(work, "in"))
        ck = Checker(args.chakra, args.graph_load, work)
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for f in [pool.submit(ck.check, c) for c in cases]:
                f.result()  # re-raises a crash of the checker itself
    finally:
        shutil.rmtree(work)
    for f in sorted(ck.failures):
        print("FAIL " + f)
    print("%d bad-input cases, %d CLI runs: %d failures" % (len(cases), ck.runs, len(ck.failures)))
    return 1 if ck.failures else 0


if __name__ == "__main__":
    sys.exit(main())
