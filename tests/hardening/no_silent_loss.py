#!/usr/bin/python3
"""no_silent_loss.py - text that cannot be kept as written is repaired with a
warning that names the place, never silently (issue: hardening, "no silent
loss").

  * `pack`: "\\u0000" inside a string becomes U+FFFD (protobuf-c strings end at
    NUL, so it used to cut the string short without a word);
  * `pack`: a high surrogate escape without its low half becomes '?' (yajl's
    decoding), with a warning naming file, line, message and node; a proper
    pair and an escaped backslash before "ud800" are left alone;
  * `link` refuses duplicate host node ids (it used to renumber them; convert
    refuses them) and a negative Kineto 'dur', naming file and place;
  * `convert text` refuses a workload that is not UTF-8 (its names would
    become proto3 strings other decoders refuse) with the line and byte;
  * `convert pytorch` refuses a host ET whose parent links form a cycle
    (found by fuzzing: the thread walk ran past its buffers), naming the
    node.

Usage: no_silent_loss.py CHAKRA
"""
import os
import subprocess
import sys
import tempfile

from hcheck import check, finish

CHAKRA = sys.argv[1]


def pack_and_read(d, lines):
    src = os.path.join(d, "in.jsonl")
    open(src, "w").write("\n".join(lines) + "\n")
    out = os.path.join(d, "out.et")
    r = subprocess.run([CHAKRA, "pack", src, "-o", out], capture_output=True, text=True)
    j = subprocess.run([CHAKRA, "jsonize", out], capture_output=True, text=True)
    return r, j.stdout


with tempfile.TemporaryDirectory() as d:
    r, js = pack_and_read(d, ['{"version":"0.0.4"}', '{"id":7,"name":"a\\u0000b","type":"COMP_NODE"}'])
    check(r.returncode == 0, "pack with a NUL exits 0")
    check('"name":"a\ufffdb"' in js, "the NUL became U+FFFD and the rest of the string stays: %r" % js)
    check("line 2" in r.stderr and "node 7" in r.stderr and "NUL" in r.stderr,
          "the NUL warning names line and node: %r" % r.stderr)

    r, js = pack_and_read(d, ['{"version":"0.0.4"}',
                              '{"id":1,"name":"fine \\ud83d\\ude00 \\\\ud800","type":"COMP_NODE"}',
                              '{"id":2,"name":"x\\ud800y","type":"COMP_NODE"}'])
    check(r.returncode == 0, "pack with a lone surrogate exits 0")
    check('"name":"x?y"' in js, "the lone surrogate became '?': %r" % js)
    check('fine \U0001F600 \\\\ud800' in js, "a pair and an escaped backslash are kept: %r" % js)
    check(r.stderr.count("surrogate") == 1 and "line 3" in r.stderr and "node 2" in r.stderr,
          "one surrogate warning, naming line 3 and node 2: %r" % r.stderr)

with tempfile.TemporaryDirectory() as d:
    src = os.path.join(d, "bad.txt")
    open(src, "wb").write(b"DATA\n1\nconv\xff1 -1 5 NONE 0 6 NONE 0 7 ALLREDUCE 100 1\n")
    r = subprocess.run([CHAKRA, "convert", "text", src, "-o", os.path.join(d, "out")], capture_output=True, text=True)
    check(r.returncode == 2 and "line 3" in r.stderr and "invalid UTF-8" in r.stderr,
          "convert text refuses invalid UTF-8 naming the line: %r" % r.stderr)
    check(not os.path.exists(os.path.join(d, "out.0.et")), "no output written")

HOST = """{"schema": "1.0.1", "pid": 7, "time": "t", "start_ts": 1, "nodes": [
 {"name": "[pytorch|profiler|execution_trace|thread]", "id": 2, "rf_id": 0, "parent": 1, "fw_parent": 0, "seq_id": -1,
  "scope": 7, "tid": 1, "fw_tid": 0, "op_schema": "", "inputs": [], "input_shapes": [], "input_types": [],
  "outputs": [], "output_shapes": [], "output_types": []},
 {"name": "aten::add", "id": ID, "rf_id": 3, "parent": 2, "fw_parent": 0, "seq_id": -1, "scope": 0, "tid": 1,
  "fw_tid": 0, "op_schema": "aten::add", "inputs": [], "input_shapes": [], "input_types": [],
  "outputs": [], "output_shapes": [], "output_types": []}]}"""
KINETO = """{"schemaVersion": 1, "traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 7, "tid": 1, "ts": 100, "dur": DUR,
  "args": {"Record function id": 3, "External id": 3}}]}"""

with tempfile.TemporaryDirectory() as d:
    def link(host_id, dur):
        h, k = os.path.join(d, "h.json"), os.path.join(d, "k.json")
        open(h, "w").write(HOST.replace("ID", str(host_id)))
        open(k, "w").write(KINETO.replace("DUR", str(dur)))
        return subprocess.run([CHAKRA, "link", "--host", h, "--device", k, "-o", os.path.join(d, "l.json")],
                              capture_output=True, text=True)
    r = link(5, 20)
    check(r.returncode == 0, "a sound pair links: %r" % r.stderr)
    r = link(2, 20)
    check(r.returncode == 2 and "duplicate node id 2" in r.stderr and "h.json" in r.stderr,
          "link refuses duplicate host ids: %r" % r.stderr)
    r = link(5, -20)
    check(r.returncode == 2 and "'dur' is negative" in r.stderr and "k.json" in r.stderr and "byte" in r.stderr,
          "link refuses a negative Kineto dur with its place: %r" % r.stderr)

with tempfile.TemporaryDirectory() as d:
    # node 2 (a thread root) has parent 1, node 1 has parent 2
    host = os.path.join(d, "cycle.json")
    nodes = [
        {"name": "[pytorch|profiler|execution_trace|thread]", "id": 2, "rf_id": 0, "parent": 1, "fw_parent": 0,
         "seq_id": -1, "scope": 7, "tid": 1, "fw_tid": 0, "op_schema": "", "inputs": [], "input_shapes": [],
         "input_types": [], "outputs": [], "output_shapes": [], "output_types": []},
        {"name": "aten::add", "id": 1, "rf_id": 3, "parent": 2, "fw_parent": 0, "seq_id": -1, "scope": 0,
         "tid": 1, "fw_tid": 0, "op_schema": "", "inputs": [], "input_shapes": [], "input_types": [],
         "outputs": [], "output_shapes": [], "output_types": []}]
    import json
    json.dump({"schema": "1.0.1", "pid": 7, "time": "t", "start_ts": 1, "finish_ts": 2, "nodes": nodes},
              open(host, "w"))
    r = subprocess.run([CHAKRA, "convert", "pytorch", host, "-o", os.path.join(d, "c.et")],
                       capture_output=True, text=True)
    check(r.returncode == 2 and "cycle.json" in r.stderr and "parent chain" in r.stderr
          and not os.path.exists(os.path.join(d, "c.et")),
          "convert refuses a parent cycle, naming the node: %r" % r.stderr)

finish()
