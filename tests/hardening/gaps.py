#!/usr/bin/python3
"""gaps.py - mistakes a new user makes at once get an answer that says what
happened (issue: hardening, "gaps a user meets at once").

  * a JSON file given where a .et is expected (jsonize, validate, stats)
    fails with one line that says the file is JSON text, not a .et stream,
    whatever the JSON's first message length happens to decode to;
  * a rank prefix with a gap (files 0, 1, 16, 63) is an error naming the
    first missing file and the first file after the gap, not a silent
    2-rank workload;
  * `sim` of a workload with more rank files than the network has NPUs is
    an error naming the first extra file, not a silent cut;
  * `convert text --compat` of a file with CRLF (or CR) line ends writes
    exactly the bytes of the same file with LF line ends, as the reference
    (Python text mode) does.

Usage: gaps.py CHAKRA SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile

from hcheck import check, finish

CHAKRA = sys.argv[1]
SOURCE = sys.argv[2] if len(sys.argv) > 2 else "."


with tempfile.TemporaryDirectory() as d:
    docs = {"small.json": '{"version":"0.0.4"}\n',
            "array.json": '[{"id": 1}]',
            "big.json": '  {"metadata": {"version": "0.0.4"}, "nodes": [' + ",".join(
                '{"id": %d, "name": "n", "type": "COMP_NODE"}' % i for i in range(300)) + "]}"}
    for name, text in docs.items():
        path = os.path.join(d, name)
        open(path, "w").write(text)
        for cmd in (["jsonize", path], ["validate", path], ["stats", path]):
            r = subprocess.run([CHAKRA] + cmd, capture_output=True, text=True)
            out = r.stderr + r.stdout
            check(r.returncode != 0, "%s %s fails" % (cmd[0], name))
            check("is JSON text, not a .et" in out, "%s %s says the file is JSON: %r" % (cmd[0], name, out))

with tempfile.TemporaryDirectory() as d:
    prefix = os.path.join(d, "w")
    subprocess.run([CHAKRA, "gen", "microbench", "--coll", "all_reduce", "--npus", "64", "--size", "1K",
                    "-o", prefix], check=True)
    for r in range(64):
        if r not in (0, 1, 16, 63):
            os.unlink("%s.%d.et" % (prefix, r))
    for cmd in ("validate", "stats"):
        r = subprocess.run([CHAKRA, cmd, prefix], capture_output=True, text=True)
        check(r.returncode == 2, "%s of a prefix with a gap exits 2 (got %d)" % (cmd, r.returncode))
        check("w.2.et is missing" in r.stderr and "w.16.et" in r.stderr,
              "%s names the missing and the later file: %r" % (cmd, r.stderr))

with tempfile.TemporaryDirectory() as d:
    prefix = os.path.join(d, "x8")
    subprocess.run([CHAKRA, "gen", "microbench", "--coll", "all_reduce", "--npus", "8", "--size", "1M",
                    "-o", prefix], check=True)
    net = os.path.join(d, "ring4.yml")
    open(net, "w").write("topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n")
    r = subprocess.run([CHAKRA, "sim", "--workload-configuration=" + prefix,
                        "--system-configuration=" + os.path.join(SOURCE, "examples", "system.json"),
                        "--network-configuration=" + net], capture_output=True, text=True)
    check(r.returncode == 2 and "x8.4.et" in r.stderr and "more rank files" in r.stderr,
          "sim with 8 rank files on a 4-NPU network names the extra file: %r" % r.stderr)

with tempfile.TemporaryDirectory() as d:
    text = "DATA\n2\nconv1 -1 5 NONE 0 6 NONE 0 7 ALLREDUCE 100 1\nfc -1 8 NONE 0 9 NONE 0 10 NONE 0 1\n"
    outs = {}
    for name, eol in (("lf", "\n"), ("crlf", "\r\n"), ("cr", "\r")):
        src = os.path.join(d, name + ".txt")
        open(src, "w", newline="").write(text.replace("\n", eol))
        prefix = os.path.join(d, name)
        r = subprocess.run([CHAKRA, "convert", "text", src, "-o", prefix, "--compat", "--num-npus", "2"],
                           capture_output=True, text=True)
        check(r.returncode == 0, "convert text of %s line ends exits 0: %r" % (name, r.stderr))
        outs[name] = [open("%s.%d.et" % (prefix, k), "rb").read() for k in range(2)]
    check(outs["crlf"] == outs["lf"] and outs["cr"] == outs["lf"],
          "CRLF and CR text workloads convert to the LF bytes")

finish()
