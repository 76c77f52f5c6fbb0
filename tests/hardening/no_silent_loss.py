#!/usr/bin/python3
"""no_silent_loss.py - text that cannot be kept as written is repaired with a
warning that names the place, never silently (issue: hardening, "no silent
loss").

  * `pack`: "\\u0000" inside a string becomes U+FFFD (protobuf-c strings end at
    NUL, so it used to cut the string short without a word);
  * `pack`: a high surrogate escape without its low half becomes '?' (yajl's
    decoding), with a warning naming file, line, message and node; a proper
    pair and an escaped backslash before "ud800" are left alone;
  * `convert text` refuses a workload that is not UTF-8 (its names would
    become proto3 strings other decoders refuse) with the line and byte.

Usage: no_silent_loss.py CHAKRA
"""
import os
import subprocess
import sys
import tempfile

CHAKRA = sys.argv[1]
passed, failed = 0, 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


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

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
