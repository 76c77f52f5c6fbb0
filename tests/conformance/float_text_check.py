#!/usr/bin/python3
"""float_text_check.py - float and double values in `chakra jsonize --compat`
are byte for byte what Google's protobuf runtime writes.

The shared traces hold few floating-point values, so this builds its own:
random doubles across every magnitude (denormals, [1e-4, 1e-3), around 1e16)
and random float32 values, as double_val/float_val attributes and
double_list/float_list entries, encoded by google.protobuf itself. Then
`chakra jsonize --compat` must equal MessageToJson(msg, indent=2) of every
message concatenated (what the reference jsonizer writes), and the JSON Lines
layout must read back to the same values.

usage: float_text_check.py --chakra BIN --source-dir DIR [--protoc protoc]
"""
import argparse
import importlib
import json
import os
import random
import struct
import subprocess
import sys
import tempfile


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def random_double(rng):
    kind = rng.randrange(5)
    if kind == 0:
        return rng.uniform(1e-4, 1e-3)
    if kind == 1:
        return rng.uniform(-1e17, 1e17)
    if kind == 2:
        return struct.unpack("<d", struct.pack("<Q", rng.getrandbits(63)))[0]
    if kind == 3:
        return rng.choice([0.0, -0.0, 5e-324, 1e16, 1e15, 1e-4, 1e-5, 0.1, 2.5e-8, 6.02214076e23])
    return rng.uniform(-1000, 1000)


def random_float(rng):
    while True:
        v = struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0]
        if v == v and abs(v) != float("inf"):
            return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chakra", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--protoc", default="protoc")
    args = ap.parse_args()
    try:
        from google.protobuf import json_format
    except ImportError:
        print("FAIL: %s has no google.protobuf (Debian package python3-protobuf)" % sys.executable)
        return 1
    rng = random.Random(20261122)
    with tempfile.TemporaryDirectory(prefix="chakra-float-") as tmp:
        subprocess.run([args.protoc, "--proto_path=" + os.path.join(args.source_dir, "proto"),
                        "--python_out=" + tmp, "et_def.proto"], check=True)
        sys.path.insert(0, tmp)
        pb = importlib.import_module("et_def_pb2")
        meta = pb.GlobalMetadata(version="1.0.0")
        msgs = [meta]
        for i in range(2000):
            n = pb.Node(id=i, name="n%d" % i, type=pb.COMP_NODE)
            n.attr.add(name="d", double_val=random_double(rng))
            n.attr.add(name="f", float_val=random_float(rng))
            n.attr.add(name="dl").double_list.values.extend(random_double(rng) for _ in range(3))
            n.attr.add(name="fl").float_list.values.extend(random_float(rng) for _ in range(3))
            msgs.append(n)
        et = os.path.join(tmp, "floats.et")
        with open(et, "wb") as f:
            for m in msgs:
                body = m.SerializeToString()
                f.write(varint(len(body)) + body)
        ours = subprocess.run([args.chakra, "jsonize", "--compat", et], capture_output=True, check=True).stdout
        want = "".join(json_format.MessageToJson(m, indent=2) for m in msgs).encode()
        if ours != want:
            at = next((i for i, (x, y) in enumerate(zip(ours, want)) if x != y), min(len(ours), len(want)))
            print("FAIL: --compat differs from MessageToJson at byte %d:\n  ours: %r\n  want: %r"
                  % (at, ours[max(0, at - 60):at + 40], want[max(0, at - 60):at + 40]))
            return 1
        lines = subprocess.run([args.chakra, "jsonize", et], capture_output=True, check=True,
                               text=True).stdout.splitlines()
        for m, line in zip(msgs, lines):
            if json.loads(line) != json_format.MessageToDict(m, preserving_proto_field_name=True):
                print("FAIL: JSON Lines value differs: %s" % line[:200])
                return 1
    print("ok: %d messages of random floats and doubles match MessageToJson byte for byte" % len(msgs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
