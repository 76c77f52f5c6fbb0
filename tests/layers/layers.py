#!/usr/bin/python3
"""layers.py - no module of the library calls up a layer.

The layers are the table of docs/internals.md, section "Layers": each row
a layer number, a module (a folder of lib/) and the public headers
(include/chakra/*.h) it implements. This script reads that table, gives
every file of lib/ its module's layer, and reads every #include line:

  "chakra/H.h"        the layer of the module that owns H.h
  "../M/F.h"          the layer of module M
  "F.h"               the file's own module
  anything in cli/    never allowed from lib/

A file may include its own module and modules of lower layers; a module of
the same layer is a sibling it must not reach either (siblings stay
independent, or they are not one layer). No build file under lib/
(*.cmake, CMakeLists.txt) may name a file of cli/, and only the MPI layer
(MPI_MODULES) includes <mpi.h>. The table itself must be whole: every
folder of lib/ a row, every public header owned by exactly one module.

  layers.py SOURCE_DIR          check the tree; exit 1 listing each violation
  layers.py --self-test         check that the checker finds each kind of
                                violation in a small made-up tree

KNOWN lists the violations someone is already removing; each is printed as
a known exception and does not fail the check, and one that no longer
occurs fails it until its line here is deleted, so none outlives its fix.
"""
import os
import re
import shutil
import sys
import tempfile

# (file, included text): who removes it. Delete the line when it is gone.
KNOWN = {
    ("lib/sim/report.c", "chakra/timeline.h"):
        "issue 22 item 3 (runrec): the simulator's timeline goes through the one run-record writer, "
        "not analyze/timeline.c",
}

# The modules built only with MPI (lib/replay/replay.cmake); cli/ uses MPI too.
MPI_MODULES = {"replay"}
MPI_INCLUDE = re.compile(r'^\s*#\s*include\s*<mpi\.h>', re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
ROW = re.compile(r'^\|\s*(\d+)\s*\|\s*`([a-z0-9_]+)`\s*\|([^|]*)\|', re.M)
# Headers generated at build time (build/generated/chakra): owned like the rest.
GENERATED = {"et_def.pb-c.h", "version.h"}


def read_table(src):
    """{module: (layer, [headers])} from docs/internals.md's "Layers" section."""
    path = os.path.join(src, "docs", "internals.md")
    text = open(path, encoding="utf-8").read()
    m = re.search(r'^## Layers\b(.*?)(?=^## )', text, re.M | re.S)
    if not m:
        raise SystemExit("layers: %s has no \"## Layers\" section" % path)
    table = {}
    for layer, module, headers in ROW.findall(m.group(1)):
        if module in table:
            raise SystemExit("layers: %s: module %s has two rows" % (path, module))
        table[module] = (int(layer), re.findall(r'[a-z0-9_.-]+\.h', headers))
    if not table:
        raise SystemExit("layers: %s: the \"Layers\" section has no rows like | 1 | `trace` | node.h ... |" % path)
    return table


def owners(src, table):
    """{header: module}, and the problems with ownership."""
    problems, owner = [], {}
    for module, (_, headers) in sorted(table.items()):
        for h in headers:
            if h in owner:
                problems.append("docs/internals.md: %s is listed under both %s and %s" % (h, owner[h], module))
            owner[h] = module
    inc = os.path.join(src, "include", "chakra")
    public = {f[:-3] if f.endswith(".h.in") else f for f in os.listdir(inc)
              if f.endswith(".h") or f.endswith(".h.in")} | GENERATED
    for h in sorted(public - set(owner)):
        problems.append("include/chakra/%s: no module of docs/internals.md's \"Layers\" table owns it" % h)
    for h in sorted(set(owner) - public):
        problems.append("docs/internals.md: the \"Layers\" table lists %s, which is not a public header" % h)
    return owner, problems


def lib_files(src):
    for root, dirs, files in os.walk(os.path.join(src, "lib")):
        dirs.sort()
        for f in sorted(files):
            yield os.path.join(root, f)


def target_of(src, path, module, inc, owner):
    """The module an include reaches ('cli' for cli/), or None when it is a
    system-style or unknown header this check does not judge."""
    if inc.startswith("chakra/"):
        return owner.get(inc[len("chakra/"):], "?" + inc)
    resolved = os.path.normpath(os.path.join(os.path.dirname(path), inc))
    rel = os.path.relpath(resolved, src).split(os.sep)
    if rel[0] == "cli":
        return "cli"
    if rel[0] == "lib" and len(rel) > 2:
        return rel[1]
    if rel[0] == "lib":
        return module
    return None


def check(src):
    table = read_table(src)
    owner, problems = owners(src, table)
    for d in sorted(os.listdir(os.path.join(src, "lib"))):
        if os.path.isdir(os.path.join(src, "lib", d)) and d not in table:
            problems.append("lib/%s: a module without a row in docs/internals.md's \"Layers\" table" % d)
    for m in sorted(table):
        if not os.path.isdir(os.path.join(src, "lib", m)):
            problems.append("docs/internals.md: the \"Layers\" table has a row for %s, which is no folder of lib/" % m)
    seen_known = set()
    for path in lib_files(src):
        rel = os.path.relpath(path, src)
        parts = rel.split(os.sep)
        name = parts[-1]
        if name.endswith(".cmake") or name == "CMakeLists.txt":
            for n, line in enumerate(open(path, encoding="utf-8"), 1):
                if re.search(r'(^|[/"\s{}])cli/', line.split("#", 1)[0]):
                    problems.append("%s:%d: a build file of the library names a file of cli/: %s"
                                    % (rel, n, line.strip()))
            continue
        if not name.endswith((".c", ".h")) or len(parts) < 3:
            continue
        module = parts[1]
        if module not in table:
            continue  # reported above
        layer = table[module][0]
        text = open(path, encoding="utf-8", errors="replace").read()
        m = MPI_INCLUDE.search(text)
        if m and module not in MPI_MODULES:
            problems.append("%s:%d: includes <mpi.h> outside the MPI layer (%s)"
                            % (rel, text.count("\n", 0, m.start()) + 1, ", ".join(sorted(MPI_MODULES))))
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            to = target_of(src, path, module, inc, owner)
            if to is None or to == module:
                continue
            why = None
            if to == "cli":
                why = "includes a file of cli/ (the program sits above every library layer)"
            elif to.startswith("?"):
                why = "includes %s, which no module owns" % inc
            elif table[to][0] > layer:
                why = "calls up: %s (layer %d) includes %s of %s (layer %d)" % (module, layer, inc, to, table[to][0])
            elif table[to][0] == layer:
                why = "reaches a sibling: %s and %s are both layer %d" % (module, to, layer)
            if not why:
                continue
            key = (rel, inc)
            if key in KNOWN:
                seen_known.add(key)
                print("layers: known exception: %s:%d: %s (%s)" % (rel, line, why, KNOWN[key]))
                continue
            problems.append("%s:%d: %s" % (rel, line, why))
    for key in sorted(set(KNOWN) - seen_known):
        problems.append("%s no longer includes %s: delete its known exception from tests/layers/layers.py" % key)
    return table, problems


# ---- the checker's own test ------------------------------------------------------

SELF_DOC = """# Internals

## Layers

| layer | module | public headers |
|---|---|---|
| 0 | `util` | error.h |
| 1 | `trace` | trace.h |
| 2 | `sim` | sim.h |
| 2 | `coll` | coll.h |

## Next
"""


def self_test():
    """Builds trees with one violation each and checks each is found."""
    cases = {
        "clean": ({}, None),
        "up": ({"lib/trace/a.c": '#include "chakra/sim.h"\n'}, "calls up: trace (layer 1)"),
        "up_private": ({"lib/util/a.c": '#include "../trace/x.h"\n'}, "calls up: util (layer 0)"),
        "sibling": ({"lib/sim/a.c": '#include "../coll/x.h"\n'}, "reaches a sibling"),
        "cli": ({"lib/trace/a.c": '#include "../../cli/cli.h"\n'}, "includes a file of cli/"),
        "cmake": ({"lib/sim/sim.cmake": "target_sources(chakra PRIVATE ${CMAKE_SOURCE_DIR}/cli/cmd_sim.c)\n"},
                  "names a file of cli/"),
        "mpi": ({"lib/sim/a.c": "#include <mpi.h>\n"}, "includes <mpi.h> outside the MPI layer"),
        "module": ({"lib/newmod/a.c": "int x;\n"}, "lib/newmod: a module without a row"),
        "header": ({"include/chakra/new.h": "\n"}, "include/chakra/new.h: no module"),
        "unknown": ({"lib/sim/a.c": '#include "chakra/nothere.h"\n'}, "which no module owns"),
        "stale_row": ({"docs/internals.md": SELF_DOC.replace("## Next", "| 3 | `gone` | |\n\n## Next")},
                      "a row for gone, which is no folder"),
    }
    base = {
        "include/chakra/error.h": "", "include/chakra/trace.h": "", "include/chakra/sim.h": "",
        "include/chakra/coll.h": "", "include/chakra/version.h.in": "",
        "lib/util/error.c": '#include "chakra/error.h"\n#include "own.h"\n',
        "lib/trace/reader.c": '#include "chakra/trace.h"\n#include "../util/x.h"\n#include "chakra/error.h"\n',
        "lib/sim/sim.c": '#include "chakra/trace.h"\n#include <stdio.h>\n',
        "lib/coll/gen.c": '#include "chakra/coll.h"\n',
        "lib/sim/fine.cmake": "# cli/ named in a comment only\ntarget_sources(x PRIVATE lib/sim/a.c)\n",
    }
    failures = 0
    for name, (extra, expect) in cases.items():
        tmp = tempfile.mkdtemp(prefix="layers-")
        try:
            files = dict(base, **{"docs/internals.md": SELF_DOC})
            files.update(extra)
            files["docs/internals.md"] = files["docs/internals.md"].replace(
                "| 0 | `util` | error.h |", "| 0 | `util` | error.h et_def.pb-c.h version.h |")
            for rel, text in files.items():
                p = os.path.join(tmp, rel)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                open(p, "w").write(text)
            global KNOWN
            saved, KNOWN = KNOWN, {}
            try:
                _, problems = check(tmp)
            finally:
                KNOWN = saved
            found = "\n".join(problems)
            ok = (not problems) if expect is None else (len(problems) == 1 and expect in found)
            print("layers self-test %-10s %s%s" % (name, "ok" if ok else "FAILED", "" if ok else ": " + repr(found)))
            failures += not ok
        finally:
            shutil.rmtree(tmp)
    return 1 if failures else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print("usage: layers.py SOURCE_DIR | --self-test", file=sys.stderr)
        return 2
    table, problems = check(sys.argv[1])
    for p in problems:
        print("layers: " + p, file=sys.stderr)
    if problems:
        print("layers: %d violation(s) of docs/internals.md's \"Layers\"" % len(problems), file=sys.stderr)
        return 1
    print("layers: %d modules in %d layers; no file of lib/ includes a higher layer, a sibling or cli/"
          % (len(table), len({l for l, _ in table.values()})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
