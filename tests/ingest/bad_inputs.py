#!/usr/bin/python3
"""Bad inputs to chakra link / convert pytorch / convert text: every one must
give exactly one line on stderr that names the file and the place (byte
offset, node id or line), a non-zero exit status, and leave nothing in the
output directory (no output, no temporary file)."""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

ATTRS = [{"name": n, "type": "uint64", "value": 0} for n in ("rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid")]
IO = {"values": [], "shapes": [], "types": []}


def node(i, parent, name="aten::add", **kw):
    n = {"id": i, "name": name, "ctrl_deps": parent, "inputs": IO, "outputs": IO, "attrs": ATTRS}
    n.update(kw)
    return n


def host(nodes, schema="1.0.2-chakra.0.0.4"):
    return json.dumps({"schema": schema, "pid": 1, "time": "t", "start_ts": 1, "nodes": nodes, "finish_ts": 2})


GOOD_HOST = host([node(2, 1, "[pytorch|profiler|execution_trace|thread]"), node(3, 2)])
GOOD_KINETO = json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1,
                                            "ts": 10, "dur": 5, "args": {"External id": 1}}]})

# (name, command kind, input text or bytes, expected substrings of the error line)
CASES = [
    ("truncated JSON", "convert", '{"schema":"1.0.2-chakra.0.0.4","nodes":[{"id":2,', ["byte LEN", "invalid JSON"]),
    ("garbage", "convert", "not json at all", ["byte 1", "invalid JSON"]),
    ("missing inputs", "convert",
     host([{"id": 7, "name": "x", "ctrl_deps": 1, "outputs": IO}]), ["node 7", "missing 'inputs'"]),
    ("id is text", "convert", host([{"id": "7"}]), ["'id' is not a non-negative integer"]),
    ("attr not integer", "convert",
     host([node(3, 2, attrs=[{"name": "rf_id", "type": "uint64", "value": "x"}])]), ["node 3", "'rf_id' is not an integer"]),
    ("unknown version", "convert", host([], schema="0.9"), ["unsupported host ET schema version '0.9'", "1.1.1-chakra.1.0.0"]),
    ("no schema", "convert", json.dumps({"nodes": []}), ["no 'schema'"]),
    ("duplicate id", "convert", host([node(2, 1, "[pytorch|profiler|execution_trace|thread]"), node(3, 2), node(3, 2)]),
     ["duplicate node id 3"]),
    ("unknown collective", "convert",
     host([node(2, 1, "[pytorch|profiler|execution_trace|thread]"), node(3, 2),
           node(4, 3, "ncclDevKernel_Frobnicate", cat="kernel")]), ["node 4", "cannot tell which collective"]),
    ("corrupt gzip", "convert", b"\x1f\x8b\x08\x00garbage-garbage-garbage", ["gzip"]),
    ("empty", "convert", "", ["empty file"]),
    ("link: unknown version", "link-host", host([], schema="1.0.3"), ["unsupported host ET schema version '1.0.3'"]),
    ("link: kineto truncated", "link-kineto", '{"traceEvents":[{"ph":"X",', ["byte LEN", "invalid JSON"]),
    ("link: not kineto", "link-kineto", '{"foo": 1}', ["no 'traceEvents'"]),
    ("link: kineto ts", "link-kineto", '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":"x"}]}',
     ["trace event #0", "'ts' is not a number"]),
    ("link: no common ops", "link-kineto",
     json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "other", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]}),
     ["1 of 1 host ops have no op", "allow_partial"]),
    ("text: transformer", "text", "HYBRID_TRANSFORMER\n1\nl -1 1 NONE 0 1 NONE 0 1 NONE 0 1 X\n",
     ["line 1", "not supported"]),
    ("text: short layer", "text", "DATA\n1\nconv -1 1 NONE 0\n", ["line 3", "12 columns"]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chakra", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="chakra-ingest-bad.")
    failures = 0
    try:
        good_host = os.path.join(tmp, "good_host.json")
        good_kin = os.path.join(tmp, "good_kineto.json")
        with open(good_host, "w") as f:
            f.write(GOOD_HOST)
        with open(good_kin, "w") as f:
            f.write(GOOD_KINETO)
        # the good pair links (so failures below come from the bad file)
        out = os.path.join(tmp, "ok.json")
        p = subprocess.run([a.chakra, "link", "--host", good_host, "--device", good_kin, "-o", out, "-q"],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        os.unlink(out)
        for name, kind, text, needles in CASES:
            case_dir = tempfile.mkdtemp(dir=tmp)
            bad = os.path.join(case_dir, "input.txt" if kind == "text" else "input.json")
            with open(bad, "wb") as f:
                f.write(text if isinstance(text, bytes) else text.encode())
            outdir = tempfile.mkdtemp(dir=tmp)
            if kind == "convert":
                cmd = [a.chakra, "convert", "pytorch", bad, "-o", os.path.join(outdir, "out.et")]
            elif kind == "link-host":
                cmd = [a.chakra, "link", "--host", bad, "--device", good_kin, "-o", os.path.join(outdir, "out.json")]
            elif kind == "link-kineto":
                cmd = [a.chakra, "link", "--host", good_host, "--device", bad, "-o", os.path.join(outdir, "out.json")]
            else:
                cmd = [a.chakra, "convert", "text", bad, "-o", os.path.join(outdir, "w"), "--num-npus", "2"]
            p = subprocess.run(cmd, capture_output=True, text=True)
            lines = [l for l in p.stderr.splitlines() if l.strip()]
            problems = []
            if p.returncode == 0:
                problems.append("exit status 0")
            if p.returncode < 0:
                problems.append(f"killed by signal {-p.returncode}")
            if len(lines) != 1:
                problems.append(f"{len(lines)} lines on stderr")
            err = lines[0] if lines else ""
            if bad not in err:
                problems.append("the file is not named")
            for n in needles:
                n = n.replace("LEN", str(len(text)))  # a truncated text ends where the error is
                if n not in err:
                    problems.append(f"'{n}' missing")
            left = os.listdir(outdir)
            if left:
                problems.append(f"left behind: {left}")
            status = "FAIL" if problems else "ok"
            print(f"{status}: {name}: {err}" + (f"  [{'; '.join(problems)}]" if problems else ""))
            failures += bool(problems)
        # an output directory that does not exist: an error naming it, status != 0
        p = subprocess.run([a.chakra, "convert", "pytorch", good_host, "-o", os.path.join(tmp, "no/such/dir/x.et")],
                           capture_output=True, text=True)
        ok = p.returncode != 0 and "no/such/dir" in p.stderr and len(p.stderr.strip().splitlines()) == 1
        print(f"{'ok' if ok else 'FAIL'}: unwritable output: {p.stderr.strip()}")
        failures += not ok
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
