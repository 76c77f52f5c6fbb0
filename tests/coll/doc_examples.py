#!/usr/bin/python3
"""Runs every worked example of docs/coll.md as written (issue 20 item 10:
they wrote `-o alg/ag` without creating alg/ and used a file under
../shared that a user does not have).

Each ```sh block under a "Worked example" heading runs in bash (-e, -o
pipefail) in a fresh folder that holds only the clone's `tests` and
`examples` (linked), so the block sees what a fresh clone has, with the
built chakra first on the PATH. A block must exit 0, must not reach
../shared, and the text of every comment that ends a command line (a
leading or trailing "..." dropped) must appear in what the block prints.

usage: doc_examples.py CHAKRA_BINARY SOURCE_DIR [PAGE]   (PAGE under docs/, default
coll.md; exit 0 pass, 1 fail)"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHAKRA, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
PAGE = sys.argv[3] if len(sys.argv) > 3 else "coll.md"
FAILED, PASSED = [], []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)[:3000]))
    (PASSED if cond else FAILED).append(name)


def worked_examples(text):
    """(heading, block) for every ```sh block under a Worked example heading."""
    out, heading, block = [], "", None
    for line in text.splitlines():
        if block is not None:
            if line.startswith("```"):
                if "worked example" in heading.lower():
                    out.append((heading, "\n".join(block)))
                block = None
            else:
                block.append(line)
        elif line.startswith("```sh"):
            block = []
        elif line.startswith("#"):
            heading = line.lstrip("# ")
    return out


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


def main():
    doc = open(os.path.join(SOURCE, "docs", PAGE), encoding="utf-8").read()
    examples = worked_examples(doc)
    check("docs/%s has its worked examples (%d found)" % (PAGE, len(examples)), len(examples) >= {"coll.md": 2}.get(PAGE, 1))
    env = dict(os.environ, PATH=os.path.dirname(CHAKRA) + ":/usr/bin:/bin:" + os.environ.get("PATH", ""))
    for heading, block in examples:
        d = tempfile.mkdtemp(prefix="doc-example-")
        try:
            for name in ("tests", "examples"):
                os.symlink(os.path.join(SOURCE, name), os.path.join(d, name))
            check("%s: needs nothing under ../shared" % heading, "../shared" not in block, block)
            p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=d, env=env, capture_output=True,
                               text=True, timeout=300)
            check("%s: runs as written, exit 0" % heading, p.returncode == 0, p.stderr[-2000:])
            for t in expected_texts(block):
                check("%s: prints %r" % (heading, t), t in p.stdout, p.stdout[-2000:])
        finally:
            shutil.rmtree(d, ignore_errors=True)
    print("%d passed, %d failed" % (len(PASSED), len(FAILED)))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
