"""ok/FAIL lines and the closing 'N passed, N failed' for the synth test scripts."""
PASSED, FAILED = [], []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + str(detail)[:500]))
    (PASSED if cond else FAILED).append(name)


def summary():
    print("%d passed, %d failed" % (len(PASSED), len(FAILED)))
    return 1 if FAILED else 0


def run(cmd, ok=0):
    """Runs cmd; exits the test unless its status is ok."""
    import subprocess
    import sys
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != ok:
        sys.exit("exit %d, expected %d: %s\n%s%s" % (p.returncode, ok, " ".join(cmd), p.stdout, p.stderr))
    return p


def nodes(chakra, path):
    """The nodes of one rank file, each with its attributes as n["a"][name]."""
    import json
    res = []
    for line in run([chakra, "jsonize", path]).stdout.splitlines()[1:]:
        n = json.loads(line)
        n["a"] = {a["name"]: [v for k, v in a.items() if k != "name"][0] if len(a) > 1 else None
                  for a in n.get("attr", [])}
        res.append(n)
    return res
