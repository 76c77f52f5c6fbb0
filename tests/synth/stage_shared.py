#!/usr/bin/env python3
"""chakra synth --stage-compat reproduces STAGE's output for the shared case
(../shared/data/traces/stage/gpt_small_tponly_dp2tp4, which has no CMD.txt;
its command line is in SOURCES.md): every rank file and the comm-group file
byte for byte, with STAGE's option spellings and with ours (no pipeline, so
no tags). Exits 77 (skipped) when the shared data is absent."""
import os
import subprocess
import sys
import tempfile



def main():
    chakra, source = sys.argv[1], sys.argv[2]
    shared = os.environ.get("CHAKRA_SHARED", os.path.join(source, "..", "shared"))
    case = os.path.join(shared, "data", "traces", "stage", "gpt_small_tponly_dp2tp4")
    ref = os.path.join(case, "gpt_small_tponly_dp2tp4")
    if not os.path.exists(ref + ".0.et"):
        print("skipped: %s not found (set CHAKRA_SHARED)" % case)
        return 77
    stage = ["--model_type", "gpt", "--dp", "2", "--tp", "4", "--pp", "1", "--tpsp", "0", "--batch", "4",
             "--micro_batch", "4", "--dmodel", "1024", "--dff", "4096", "--head", "16", "--kvhead", "16", "--seq",
             "512", "--dvocal", "32000", "--num_stacks", "4"]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for spelling, out in (("STAGE's", ["--output_dir", tmp, "--output_name", "s.%d.et"]),
                              ("ours", ["-o", os.path.join(tmp, "o")])):
            args = stage + out if spelling == "STAGE's" else [a.replace("_", "-") for a in stage] + out
            subprocess.run([chakra, "synth", "-q", "--stage-compat"] + args, check=True)
            prefix = os.path.join(tmp, "s" if spelling == "STAGE's" else "o")
            for suffix in [".json"] + [".%d.et" % r for r in range(8)]:
                with open(prefix + suffix, "rb") as a, open(ref + suffix, "rb") as b:
                    if a.read() != b.read():
                        print("FAIL %s options: %s differs from STAGE's" % (spelling, suffix))
                        bad += 1
            if not bad:
                print("ok   %s options: 8 rank files and the groups byte-identical to STAGE's" % spelling)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
