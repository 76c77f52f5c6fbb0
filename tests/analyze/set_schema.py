#!/usr/bin/python3
"""set_schema.py - docs/set.schema.json describes the manifests chakra writes:
synth --shared's grid and share's table validate against it, and it refuses
a grid with a table's roles, a table class without them and an unknown
version. Skips (77) when python3-jsonschema is not installed.

usage: set_schema.py CHAKRA SOURCE_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("skip: python3-jsonschema is not installed (apt-get install python3-jsonschema)")
    sys.exit(77)

CHAKRA, SOURCE = sys.argv[1], sys.argv[2]
SHAPE = ["--num-stacks", "4", "--dmodel", "64", "--dff", "128", "--head", "4", "--kvhead", "2", "--seq", "32",
         "--dvocal", "64", "--batch", "8", "--dp", "2", "--tp", "2", "--pp", "2"]
failed, passed = [], []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)[:500]))
    (passed if cond else failed).append(name)


def main():
    schema = json.load(open(os.path.join(SOURCE, "docs", "set.schema.json")))
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    d = tempfile.mkdtemp(prefix="chakra-schema-")
    try:
        for args in ([], ["--model-type", "moe", "--experts", "4", "--ep", "2"]):
            subprocess.run([CHAKRA, "synth", "-q", "--shared", "-o", d + "/g"] + SHAPE + args, check=True)
            grid = json.load(open(d + "/g.set.json"))
            errs = [e.message for e in v.iter_errors(grid)]
            check("synth --shared's grid manifest validates %s" % " ".join(args), not errs, errs)
            for f in os.listdir(d):
                os.remove(os.path.join(d, f))
        subprocess.run([CHAKRA, "synth", "-q", "-o", d + "/p"] + SHAPE, check=True)
        subprocess.run([CHAKRA, "share", "-q", d + "/p", "-o", d + "/t"], check=True, capture_output=True)
        table = json.load(open(d + "/t.set.json"))
        errs = [e.message for e in v.iter_errors(table)]
        check("share's table manifest validates", not errs, errs)
        subprocess.run([CHAKRA, "synth", "-q", "--shared", "-o", d + "/g"] + SHAPE, check=True)
        grid = json.load(open(d + "/g.set.json"))
        bad = json.loads(json.dumps(grid))
        bad["classes"][0]["groups"] = ["1"]
        check("a grid class with roles is refused", not v.is_valid(bad))
        bad = json.loads(json.dumps(table))
        del bad["classes"][0]["peers"]
        check("a table class without its peer roles is refused", not v.is_valid(bad))
        bad = json.loads(json.dumps(grid))
        bad["chakra_trace_set"] = 2
        check("another version is refused", not v.is_valid(bad))
        bad = json.loads(json.dumps(table))
        bad["layout"]["ranks"][0] = [0, ["1"]]
        check("a table row without its peers is refused", not v.is_valid(bad))
    finally:
        shutil.rmtree(d)
    print("%d passed, %d failed" % (len(passed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
