#!/usr/bin/python3
"""Renders `chakra suite board`'s page in Debian's headless Chromium and
checks what the browser shows against `chakra suite score --json`: every
table (overall and per class) has a row per result, its name and scores;
every entry links a configuration that exists on the page; the page loads
nothing from outside. Keeps a screenshot at SCREENSHOT.

usage: board.py CHAKRA_BINARY SOURCE_DIR SCREENSHOT"""
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

SHOT = os.path.abspath(sys.argv.pop(3))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mpitest import SKIP, check, run, run_tests  # noqa: E402

SYSTEM_B = {
    "scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 2,
    "preferred-dataset-splits": 4, "all-reduce-implementation": ["ring", "ring"],
    "all-gather-implementation": ["ring", "ring"], "reduce-scatter-implementation": ["ring", "ring"],
    "all-to-all-implementation": ["ring", "ring"], "collective-optimization": "localBWAware",
    "local-mem-bw": 8000, "boost-mode": 0, "roofline-enabled": 1, "peak-perf": 2250}


class Tables(HTMLParser):
    """The rendered DOM's tables: id -> rows of (text, data-v, href) cells;
    and every id and external reference on the page."""

    def __init__(self):
        super().__init__()
        self.tables, self.ids, self.external = {}, set(), []
        self.table = self.row = self.cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for k in ("src", "href"):
            if k in a and re.match(r"^(https?:)?//", a[k] or ""):
                self.external.append(a[k])
        if tag == "table":
            self.table = self.tables.setdefault(a.get("id"), [])
        elif tag == "tr" and self.table is not None:
            self.row = []
            self.table.append(self.row)
        elif tag in ("td", "th") and self.row is not None:
            self.cell = {"text": "", "v": a.get("data-v"), "href": None}
            self.row.append(self.cell)
        elif tag == "a" and self.cell is not None:
            self.cell["href"] = a.get("href")

    def handle_endtag(self, tag):
        if tag == "table":
            self.table = None
        elif tag in ("td", "th"):
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell["text"] += data


def chromium():
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def browse(browser, work, *args):
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--user-data-dir=" + os.path.join(work, "profile")] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_the_rendered_tables_are_the_scores(work):
    browser = chromium()
    if not browser:
        print("skip: Debian's chromium is not installed (scripts/install-deps.sh installs it)")
        sys.exit(SKIP)
    results = [os.path.join(work, n + ".json") for n in ("ref", "b")]
    page = os.path.join(work, "board.html")
    p = run("suite", "board", *results, "-o", page)
    check(p.returncode == 0, "board written: " + p.stderr)
    scores = json.loads(run("suite", "score", "--json", *results).stdout)
    d = browse(browser, work, "--dump-dom", "file://" + page)
    check(d.returncode == 0 and "<table" in d.stdout, "Chromium rendered the page: " + d.stderr[-300:])
    t = Tables()
    t.feed(d.stdout)
    check(not t.external, "nothing loaded from outside: %s" % t.external)
    overall = t.tables.get("table-overall", [])
    check(len(overall) == 1 + len(scores["results"]), "overall: a header and a row per result")
    head = [c["text"] for c in overall[0]] if overall else []
    for row in overall[1:]:
        name = row[0]["text"]
        want = [r for r in scores["results"] if r["name"] == name]
        check(len(want) == 1, "overall row %s is a result" % name)
        if not want:
            continue
        check(float(row[2]["v"]) == want[0]["overall"] and row[2]["text"] == "%.4f" % want[0]["overall"],
              "%s overall: shown %s, scored %r" % (name, row[2]["text"], want[0]["overall"]))
        for i, cls in enumerate(head[3:], 3):
            check(float(row[i]["v"]) == want[0]["classes"][cls], "%s class %s" % (name, cls))
        href = row[0]["href"] or ""
        check(href.startswith("#") and href[1:] in t.ids, "%s links its configuration (%s)" % (name, href))
    for cls in scores["results"][0]["classes"]:
        rows = t.tables.get("table-" + cls, [])
        check(len(rows) == 1 + len(scores["results"]), "class %s: a row per result" % cls)
        wl = [c["text"] for c in rows[0][2:]] if rows else []
        for row in rows[1:]:
            want = [r for r in scores["results"] if r["name"] == row[0]["text"]][0]
            check(float(row[1]["v"]) == want["classes"][cls], "class %s score of %s" % (cls, want["name"]))
            for name, cell in zip(wl, row[2:]):
                check(float(cell["v"]) == want["workloads"][name], "%s %s" % (want["name"], name))
    s = browse(browser, work, "--screenshot=" + SHOT, "--window-size=1280,1600", "file://" + page)
    check(s.returncode == 0 and os.path.getsize(SHOT) > 10000, "screenshot kept at " + SHOT)


def setup(work):
    os.chdir(work)
    run("suite", "make", "--suite-version", "tiny-1.0", "-q", "-o", "tiny")
    run("suite", "run", "tiny", "-q", "-o", "ref.json")
    json.dump(SYSTEM_B, open("sysB.json", "w"))
    open("netB.yml", "w").write("topology: [ Switch, Switch ]\nnpus_count: [ 8, 2 ]\nbandwidth: [ 900, 100 ]\n"
                                "latency: [ 700, 2000 ]\n")
    p = run("suite", "run", "tiny", "-q", "--system", "sysB.json", "--network", "netB.yml", "--name", "sysB <&>",
            "-o", "b.json")
    check(p.returncode == 0, "system B run: " + p.stderr)


if __name__ == "__main__":
    run_tests(globals(), "suite-board", setup)
