#!/usr/bin/env python3
"""chakra synth --stage-compat reproduces STAGE's output for the shared case
(../shared/data/traces/stage/gpt_small_tponly_dp2tp4): per rank the same
nodes up to ids and order, the same dependencies, the same comm-group file.
Exits 77 (skipped) when the shared data is absent."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    chakra, source = sys.argv[1], sys.argv[2]
    shared = os.environ.get("CHAKRA_SHARED", os.path.join(source, "..", "shared"))
    case = os.path.join(shared, "data", "traces", "stage", "gpt_small_tponly_dp2tp4")
    ref = os.path.join(case, "gpt_small_tponly_dp2tp4")
    if not os.path.exists(ref + ".0.et"):
        print("skipped: %s not found (set CHAKRA_SHARED)" % case)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "t")
        # STAGE's command line with dashes for underscores.
        cmd = [chakra, "synth", "--model-type", "gpt", "--dp", "2", "--tp", "4", "--pp", "1", "--tpsp", "0",
               "--batch", "4", "--micro-batch", "4", "--dmodel", "1024", "--dff", "4096", "--head", "16",
               "--kvhead", "16", "--seq", "512", "--dvocal", "32000", "--num-stacks", "4",
               "--stage-compat", "--schedule", "none", "-o", out]
        subprocess.run(cmd, check=True)
        with open(out + ".json") as a, open(ref + ".json") as b:
            if a.read() != b.read():
                print("comm-group JSON differs")
                return 1
        return subprocess.run([sys.executable, os.path.join(HERE, "compare_et.py"), "--chakra", chakra,
                               out, ref, "8"]).returncode


if __name__ == "__main__":
    sys.exit(main())
