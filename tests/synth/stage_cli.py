#!/usr/bin/env python3
"""chakra synth --stage-compat takes STAGE's command line as it is: STAGE's
output options (the folder created), boolean spellings and ignored options,
configurations STAGE accepts that the default mode refuses (a micro-batch dp
does not divide, --ep on a dense model, llama mixed precision with --tpsp 0,
the debug model); and refuses, in one line with exit 2, what it cannot
reproduce. Prints ok/FAIL lines and 'N passed, N failed'."""
import os
import subprocess
import sys
import tempfile

from checks import check, summary

CHAKRA = sys.argv[1]
TINY = ["--dmodel", "64", "--dff", "128", "--head", "4", "--kvhead", "2", "--seq", "32", "--dvocal", "100",
        "--num_stacks", "2"]


def synth(*args):
    return subprocess.run([CHAKRA, "synth", "-q"] + list(args), capture_output=True, text=True)


def refused(p, what):
    return p.returncode == 2 and p.stderr.count("\n") == 1 and what in p.stderr


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "new", "dir")
        p = synth("--stage-compat", "--output_dir", out, "--output_name", "w.%d.et", "--model_type", "gpt",
                  "--weight_sharded", "true", "--tpsp", "True", "--print_gpu_vram", "false",
                  "--chakra_schema_version", "v0.0.4", "--dp", "2", *TINY)
        check("STAGE's options: --output_dir created, NAME.%d.et, true/True/false, ignored options",
              p.returncode == 0 and sorted(os.listdir(out)) == ["w.0.et", "w.1.et", "w.json"], p.stderr)
        p = synth("--stage-compat", "--output_dir", tmp, "--output_name", "plain", *TINY)
        check("--output_name without %d: NAME.<r>.et and NAME.json",
              p.returncode == 0 and os.path.exists(os.path.join(tmp, "plain.0.et")) and
              os.path.exists(os.path.join(tmp, "plain.json")), p.stderr)
        o = os.path.join(tmp, "o")
        cases = [
            ("micro-batch 2 over dp 4", ["--dp", "4", "--batch", "4", "--micro_batch", "2"], 4),
            ("--ep 2 on gpt, folded into tp (2 x 2 ranks)", ["--tp", "2", "--ep", "2"], 4),
            ("llama mixed precision with --tpsp 0", ["--model_type", "llama", "--mixed_precision", "1", "--tpsp", "0",
                                                     "--tp", "2"], 2),
            ("STAGE's debug model with ep (dp 2 x ep 2)", ["--model_type", "debug", "--dp", "2", "--ep", "2"], 4),
        ]
        for name, extra, ranks in cases:
            p = synth("--stage-compat", "-o", o + name[:5].replace(" ", "_"), *(TINY + extra))
            written = p.stdout == "" and p.returncode == 0 and os.path.exists(
                o + name[:5].replace(" ", "_") + ".%d.et" % (ranks - 1)) and not os.path.exists(
                o + name[:5].replace(" ", "_") + ".%d.et" % ranks)
            check("accepted as STAGE accepts it: %s, %d ranks" % (name, ranks), written, p.stderr)
        p = synth("-o", o + "d", *(TINY + ["--dp", "4", "--batch", "4", "--micro_batch", "2"]))
        check("the default mode still refuses a micro-batch dp does not divide", refused(p, "--micro-batch"), p.stderr)
        p = synth("--stage-compat", "-o", o + "s", "--schedule", "1f1b", *TINY)
        check("--stage-compat --schedule 1f1b refused (STAGE has no schedule)", refused(p, "--schedule"), p.stderr)
        p = synth("--stage-compat", "-o", o + "g", "--model_type", "debug", "--pp", "2", *TINY)
        check("debug model with --pp 2 refused (STAGE asserts pp 1)", refused(p, "--pp"), p.stderr)
        p = synth("--stage-compat", "--output_dir", tmp, "--output_name", "r%d.et", *TINY)
        check("an --output_name pattern with no PREFIX form refused", refused(p, "--output_name"), p.stderr)
        p = synth("--stage-compat", "--output_dir", tmp, *TINY)
        check("--output_dir without --output_name refused", refused(p, "--output_name"), p.stderr)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
