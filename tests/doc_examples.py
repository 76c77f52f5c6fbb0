#!/usr/bin/python3
"""Runs the examples of the documentation as written, so that each works on
a fresh clone (issue 20 item 10: docs/coll.md wrote `-o alg/ag` without
creating alg/ and used a file under ../shared that a user does not have;
docs/timeline.md's example read ../shared too).

Every ```sh block under a heading with "example" in it, on every page of
docs/ and the README, runs in bash (-e, -o pipefail) in a fresh folder that
holds only the clone's `tests` and `examples` (linked), so the block sees
what a fresh clone has, with the built chakra first on the PATH. A block
must exit 0, and the text of every comment that ends a command line (a
leading or trailing "..." dropped) must appear in what the block prints
(standard output or error). No fenced block of any page may reach
../shared.

usage: doc_examples.py CHAKRA_BINARY SOURCE_DIR   (exit 0 pass, 1 fail)"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHAKRA, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
FAILED, PASSED = [], []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)[:3000]))
    (PASSED if cond else FAILED).append(name)


def fenced_blocks(text):
    """(heading, language, block) for every fenced block, under the last
    heading outside a block."""
    out, heading, block, lang = [], "", None, ""
    for line in text.splitlines():
        if block is not None:
            if line.startswith("```"):
                out.append((heading, lang, "\n".join(block)))
                block = None
            else:
                block.append(line)
        elif line.startswith("```"):
            block, lang = [], line[3:].strip()
        elif line.startswith("#"):
            heading = line.lstrip("# ")
    return out


def worked_examples(blocks):
    """(heading, block) for every sh block under a heading that says example."""
    return [(h, b) for h, lang, b in blocks if lang == "sh" and "example" in h.lower()]


def expected_texts(block):
    """The text of each comment that ends a command line, ellipses dropped."""
    texts, in_heredoc = [], None
    for line in block.splitlines():
        if in_heredoc:
            in_heredoc = None if line.strip() == in_heredoc else in_heredoc
            continue
        m = re.search(r"<<'?(\w+)'?", line)
        if m:
            in_heredoc = m.group(1)
        if line.lstrip().startswith("#") or " # " not in line:
            continue
        t = line.split(" # ", 1)[1].strip()
        t = re.sub(r"^\.\.\.,?\s*", "", t)
        t = re.sub(r",?\s*\.\.\.$", "", t)
        texts.append(t)
    return texts


# pages whose examples must be found (a guard on the block finder)
EXPECTED = {"coll.md": 2, "timeline.md": 1, "synth.md": 4, "gen.md": 1}


def main():
    pages = sorted(os.path.join(SOURCE, "docs", n) for n in os.listdir(os.path.join(SOURCE, "docs"))
                   if n.endswith(".md")) + [os.path.join(SOURCE, "README.md")]
    env = dict(os.environ, PATH=os.path.dirname(CHAKRA) + ":/usr/bin:/bin:" + os.environ.get("PATH", ""))
    for page in pages:
        name = os.path.basename(page)
        blocks = fenced_blocks(open(page, encoding="utf-8").read())
        reach = [b for _, _, b in blocks if "../shared" in b]
        check("%s: no example reaches ../shared" % name, not reach, reach)
        examples = worked_examples(blocks)
        if name in EXPECTED:
            check("%s has its examples (%d found)" % (name, len(examples)), len(examples) >= EXPECTED[name])
        for heading, block in examples:
            what = "%s, %s" % (name, heading)
            d = tempfile.mkdtemp(prefix="doc-example-")
            try:
                for sub in ("tests", "examples"):
                    os.symlink(os.path.join(SOURCE, sub), os.path.join(d, sub))
                p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=d, env=env, capture_output=True,
                                   text=True, timeout=300)
                check("%s: runs as written, exit 0" % what, p.returncode == 0, p.stderr[-2000:])
                for t in expected_texts(block):
                    check("%s: prints %r" % (what, t), t in p.stdout + p.stderr, (p.stdout + p.stderr)[-2000:])
            finally:
                shutil.rmtree(d, ignore_errors=True)
    print("%d passed, %d failed" % (len(PASSED), len(FAILED)))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
