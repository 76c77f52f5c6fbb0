#!/usr/bin/python3
"""decode_check.py - an independent decoder checks our JSON.

Pins that `chakra jsonize` prints what Google's own protobuf runtime reads
from each real trace: the project's proto/et_def.proto is compiled with
`protoc --python_out`, every .et under ../shared/data is decoded with
google.protobuf (varint length + message; GlobalMetadata first, then Nodes),
and for every message

  * JSON Lines: json.loads(our line) == MessageToDict(msg,
    preserving_proto_field_name=True), line by line;
  * --document: the parsed document == {"global_metadata": ..., "nodes": [...]}
    built from the same dicts;
  * --compat: our bytes == MessageToJson(msg, indent=2) of every message
    concatenated with no separator - what the reference jsonizer
    (mlcommons/chakra src/jsonizer/jsonizer.py) writes.

Our side is produced by the library call behind the CLI (jsonize_batch), and
for a sample by the chakra CLI itself, byte-compared with the batch output.
Run with /usr/bin/python3 (Debian's python3-protobuf). Exit 77 = skipped
(no shared folder).
"""
import argparse
import hashlib
import importlib
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77


def find_shared(source_dir):
    d = os.environ.get("CHAKRA_SHARED") or os.path.join(source_dir, "..", "shared")
    return d if os.path.isdir(os.path.join(d, "data", "traces")) else None


def varint(data, pos):
    """Decodes a base-128 varint at pos; returns (value, next position)."""
    shift = value = 0
    while True:
        if pos >= len(data):
            raise ValueError("varint runs past the end of the file")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def decode_trace(path, pb):
    data = open(path, "rb").read()
    msgs, pos = [], 0
    while pos < len(data):
        n, pos = varint(data, pos)
        if pos + n > len(data):
            raise ValueError("%s: truncated message at %d" % (path, pos))
        m = pb.GlobalMetadata() if not msgs else pb.Node()
        m.ParseFromString(data[pos:pos + n])
        msgs.append(m)
        pos += n
    if not msgs:
        raise ValueError("%s: empty" % path)
    return msgs


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--batch", required=True, help="jsonize_batch helper")
    ap.add_argument("--chakra", required=True, help="the chakra CLI")
    ap.add_argument("--protoc", default="protoc")
    args = ap.parse_args()

    shared = find_shared(args.source_dir)
    if not shared:
        print("SKIP: shared folder not found (set CHAKRA_SHARED or provide ../shared)")
        return SKIP
    try:
        from google.protobuf import json_format
    except ImportError:
        print("FAIL: %s has no google.protobuf (Debian package python3-protobuf; "
              "scripts/install-deps.sh installs it)" % sys.executable)
        return 1

    failures = []
    with tempfile.TemporaryDirectory(prefix="chakra-decode-") as tmp:
        subprocess.run([args.protoc, "--proto_path=" + os.path.join(args.source_dir, "proto"),
                        "--python_out=" + tmp, "et_def.proto"], check=True)
        sys.path.insert(0, tmp)
        pb = importlib.import_module("et_def_pb2")

        files, seen = [], set()
        for root, _, names in os.walk(os.path.join(shared, "data")):
            for name in sorted(names):
                if name.endswith(".et"):
                    p = os.path.join(root, name)
                    digest = hashlib.sha256(open(p, "rb").read()).digest()
                    if digest not in seen:  # identical files are checked once
                        seen.add(digest)
                        files.append(p)
        files.sort()

        outs, procs = {}, []
        for layout in ("lines", "document", "compat"):  # three processes at once
            d = os.path.join(tmp, layout)
            os.mkdir(d)
            procs.append(subprocess.Popen([args.batch, layout, d] + files))
            outs[layout] = d
        if any(p.wait() != 0 for p in procs):
            print("FAIL jsonize_batch failed")
            return 1

        messages = 0
        for i, path in enumerate(files):
            msgs = decode_trace(path, pb)
            messages += len(msgs)
            rel = os.path.relpath(path, shared)
            dicts = [json_format.MessageToDict(m, preserving_proto_field_name=True) for m in msgs]

            text = open(os.path.join(outs["lines"], "%d.json" % i), encoding="utf-8").read()
            lines = text.split("\n")
            if lines[-1] != "":
                failures.append("%s: JSON Lines output does not end with a newline" % rel)
            lines = lines[:-1]
            if len(lines) != len(msgs):
                failures.append("%s: %d JSON lines for %d messages" % (rel, len(lines), len(msgs)))
            for k, (line, want) in enumerate(zip(lines, dicts)):
                got = json.loads(line)
                if got != want:
                    failures.append("%s: line %d differs from MessageToDict:\n  ours: %s\n  want: %s"
                                    % (rel, k + 1, line[:300], json.dumps(want)[:300]))
                    break

            doc = json.load(open(os.path.join(outs["document"], "%d.json" % i), encoding="utf-8"))
            if doc != {"global_metadata": dicts[0], "nodes": dicts[1:]}:
                failures.append("%s: --document differs from the decoded messages" % rel)

            ours = open(os.path.join(outs["compat"], "%d.json" % i), "rb").read()
            ref = "".join(json_format.MessageToJson(m, indent=2) for m in msgs).encode("utf-8")
            if ours != ref:
                at = first_difference(ours, ref)
                failures.append("%s: --compat differs from MessageToJson at byte %d "
                                "(ours %d bytes, reference %d):\n  ours: %r\n  want: %r"
                                % (rel, at, len(ours), len(ref), ours[max(0, at - 40):at + 40],
                                   ref[max(0, at - 40):at + 40]))

        # The CLI is the library call plus argument handling: on a sample,
        # its output must be the batch output byte for byte.
        sample = [f for f in files if "pytorch_converted" in f or "gpt_small_tponly_dp2tp4.0" in f]
        runs = []
        for path in sample:
            for layout, flag in (("lines", []), ("document", ["--document"]), ("compat", ["--compat"])):
                out = os.path.join(tmp, "cli.%d.%s.json" % (len(runs), layout))
                runs.append((path, layout, out, subprocess.Popen(
                    [args.chakra, "jsonize"] + flag + [path, "-o", out],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
        for path, layout, out, p in runs:
            _, err = p.communicate()
            if p.returncode != 0 or err:
                failures.append("%s: chakra jsonize %s: exit %d, stderr %r" % (path, layout, p.returncode, err))
            elif open(out, "rb").read() != open(os.path.join(outs[layout], "%d.json" % files.index(path)),
                                                "rb").read():
                failures.append("%s: chakra jsonize %s differs from the library output" % (path, layout))

    for f in failures:
        print("FAIL " + f)
    print("%d distinct .et files, %d messages decoded by google.protobuf %s: %d failures"
          % (len(files), messages, importlib.import_module("google.protobuf").__version__, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
