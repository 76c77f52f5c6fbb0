#!/usr/bin/python3
"""validate_vs_sim.py - `chakra validate` and `chakra sim` agree on whether a
workload can run (issue: hardening, "validate agrees with sim").

A corpus of small two-rank workloads, written as JSON Lines and packed with
`chakra pack`, each run through both tools: validate must exit 1 exactly when
the simulator cannot finish every rank (exit non-zero), and 0 when it can.
Broken on purpose:
  recv_before_send   each rank receives before it sends (the untimed
                     execution finds the cycle through the two ranks)
  unmatched_send     a send nobody receives
  coll_size_differs  the ranks disagree on an all-reduce's size
Sound:
  send_before_recv   sends finish when their message arrives, whoever waits
  allreduce_pair     one all-reduce on both ranks
Communicator groups (given to both tools as a comm-group file, or defined
by METADATA nodes):
  group_order_crossed  two groups of ranks {0, 1} used in opposite orders
                       (astra-sim #339): each group agrees, the order
                       deadlocks
  member_never_issues  group "2" is {0, 1, 2}; rank 2 never issues its
                       all-reduce (inferring members from use missed this)
  outsider_uses_group  rank 2 all-reduces on group "1" = {0, 1}
  group_type_differs   the members of group "1" disagree on the type
  group_names_no_file  group "1" names rank 4 of a 4-rank workload
  unknown_pg_name      a pg_name the file does not define
  meta_member_missing  a METADATA group {0, 1, 2} whose rank 2 never issues
Sound: disjoint_groups (two groups, one all-reduce each), world_by_two_names
(a group of every rank and "" used in opposite orders: the simulator runs
both as the whole world, one stream sequence), meta_groups (a
METADATA group), two shared STAGE sets with their comm-group file, and
the workload of every reference simulation case in ../shared (with its
groups): sim finishes all of them, so validate must accept each.
A bad comm-group file is bad input for both (exit 2, one line).
The communication slot (one send, collective or memory node per NPU at a
time, given to the lowest-id ready node; validate uses the orders that hold
in every timing):
  coll_holds_slot        rank 0's all-reduce and send are both ready at the
                         start; the all-reduce (lower id) takes the slot and
                         waits for rank 1's, which waits for the send
  coll_holds_slot_later  the same after a shared compute parent
  groups_take_slot_crossed  groups "1" and "2" (both ranks 0, 1 of 4), each
                         rank making its own group's all-reduce the lower id
  world_by_two_names_crossed  the same on two ranks: to the simulator both
                         groups are the whole world, one sequence that the
                         ranks disagree on
Sound: send_first_sound (the send has the lower id), groups_take_slot_same.
Rendezvous (--rendezvous-protocol=true given to both; a send waits for its
receive): rdv_sends_first and rdv_send_holds_slot deadlock, rdv_recv_first
does not.
Pairing by issue order (the simulator pairs a group's collectives, and a
key's messages with its receives, in the order each rank issues them, which
timing decides where nothing orders them; validate once took the order of
its own untimed run as that order and flagged sound workloads, such as the
shared STAGE set gpt_dp1tp4pp2): coll_order_by_timing (rank 0's two
all-reduces, the second by id ready first in every run) and
recv_order_by_timing (the same for two receives of one key) are sound.
Races (timing decides which of rank 0's send and all-reduce takes the slot):
validate alone accepts both (exit 0: not certain either way); given
--system-configuration and --network-configuration it simulates and must
agree with sim: race_coll_first (CPU work before the send is longer)
deadlocks, race_send_first does not. coll_holds_slot is also checked that way.

Usage: validate_vs_sim.py CHAKRA SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

CHAKRA, SOURCE = sys.argv[1], sys.argv[2]
SYSTEM = os.path.join(SOURCE, "examples", "system.json")
S, R, K = "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"


def node(i, t, deps=(), **attrs):
    a = [{"name": "is_cpu_op", "bool_val": False}]
    for k, v in attrs.items():
        a.append({"name": k, "string_val": v} if isinstance(v, str) else {"name": k, "int64_val": str(v)})
    return {"id": i, "name": "n%d" % i, "type": t, "data_deps": list(deps), "attr": a}


def send(i, dst, deps=(), size=64):
    return node(i, S, deps, comm_dst=dst, comm_size=size, comm_tag=3)


def recv(i, src, deps=(), size=64):
    return node(i, R, deps, comm_src=src, comm_size=size, comm_tag=3)


def allreduce(i, deps=(), size=1024, pg=None, ctype=0):
    if pg is None:
        return node(i, K, deps, comm_type=ctype, comm_size=size)
    return node(i, K, deps, comm_type=ctype, comm_size=size, pg_name=pg)


def meta(i, groups):
    """A PyTorch process_group:init node (et-format.md 4.1)."""
    pgs = [{"pg_name": name, "ranks": ranks, "group_size": len(ranks)} for name, ranks in groups.items()]
    return {"id": i, "name": "## process_group:init ##", "type": "METADATA_NODE",
            "inputs": {"values": "['%s']" % json.dumps(pgs)}}


def timed(i, us, cpu):
    """A compute node of `us` microseconds on the CPU or the GPU slot."""
    return {"id": i, "name": "c%d" % i, "type": "COMP_NODE", "duration_micros": str(us),
            "attr": [{"name": "is_cpu_op", "bool_val": cpu}]}


# name: (whether sim finishes, ranks' nodes, comm-group file contents or None)
GROUP_CASES = {
    "group_order_crossed": (False, [[allreduce(1, pg="1"), allreduce(2, [1], pg="2")],
                                    [allreduce(1, pg="2"), allreduce(2, [1], pg="1")],
                                    [allreduce(1, pg="3")], [allreduce(1, pg="3")]],
                            {"1": [0, 1], "2": [0, 1], "3": [2, 3]}),
    "member_never_issues": (False, [[allreduce(1, pg="2")], [allreduce(1, pg="2")], [], []],
                            {"2": [0, 1, 2], "3": [3]}),
    "outsider_uses_group": (False, [[allreduce(1, pg="1")], [allreduce(1, pg="1")], [allreduce(1, pg="1")], []],
                            {"1": [0, 1]}),
    "group_type_differs": (False, [[allreduce(1, pg="1")], [allreduce(1, pg="1", ctype=2)], [], []],
                           {"1": [0, 1]}),
    "group_names_no_file": (False, [[allreduce(1, pg="1")]] * 4, {"1": [0, 1, 2, 3, 4]}),
    "unknown_pg_name": (False, [[allreduce(1, pg="7")], [allreduce(1, pg="7")], [], []], {"1": [0, 1]}),
    "meta_member_missing": (False, [[meta(0, {"5": [0, 1, 2]}), allreduce(1, pg="5")],
                                    [meta(0, {"5": [0, 1, 2]}), allreduce(1, pg="5")], [], []], None),
    "disjoint_groups": (True, [[allreduce(1, pg="1")], [allreduce(1, pg="1")],
                               [allreduce(1, pg="2", size=4096)], [allreduce(1, pg="2", size=4096)]],
                        {"1": [0, 1], "2": [2, 3]}),
    "groups_take_slot_crossed": (False, [[allreduce(1, pg="1"), allreduce(2, pg="2", size=2048)],
                                         [allreduce(1, pg="2", size=2048), allreduce(2, pg="1")],
                                         [allreduce(1, pg="3")], [allreduce(1, pg="3")]],
                                 {"1": [0, 1], "2": [0, 1], "3": [2, 3]}),
    # the same on two ranks: both groups are the whole world, whose
    # collectives the simulator pairs in one sequence (1024 with 2048 bytes)
    "world_by_two_names_crossed": (False, [[allreduce(1, pg="1"), allreduce(2, pg="2", size=2048)],
                                           [allreduce(1, pg="2", size=2048), allreduce(2, pg="1")]],
                                   {"1": [0, 1], "2": [0, 1]}),
    "groups_take_slot_same": (True, [[allreduce(1, pg="1"), allreduce(2, pg="2", size=2048)],
                                     [allreduce(1, pg="1"), allreduce(2, pg="2", size=2048)]],
                              {"1": [0, 1], "2": [0, 1]}),
    # a group of every rank is the whole world to the simulator: it pairs
    # rank 0's first all-reduce ("") with rank 1's (on "w")
    "world_by_two_names": (True, [[allreduce(1), allreduce(2, [1], pg="w")],
                                  [allreduce(1, pg="w"), allreduce(2, [1])]], {"w": [0, 1]}),
    "meta_groups": (True, [[meta(0, {"5": [0, 1], "6": [2, 3]}), allreduce(1, pg="5")],
                           [meta(0, {"5": [0, 1], "6": [2, 3]}), allreduce(1, pg="5")],
                           [meta(0, {"5": [0, 1], "6": [2, 3]}), allreduce(1, pg="6")],
                           [meta(0, {"5": [0, 1], "6": [2, 3]}), allreduce(1, pg="6")]], None),
}
# What validate's error line for each group case must say (file: node: words).
EXPECT = {
    "group_order_crossed": ".0.et: node 1 (offset 8): error: deadlock: group 1: collective #0",
    "member_never_issues": ".2.et: error: group 2: this rank has fewer collectives than rank 0",
    "outsider_uses_group": ".2.et: node 1 (offset 8): error: group 1: this rank issues ALL_REDUCE on it but is not a member (members 0, 1;",
    "group_type_differs": ".1.et: node 1 (offset 8): error: group 1: collective #0 is ALL_GATHER of 1024 bytes, but rank 0 has ALL_REDUCE",
    "group_names_no_file": ".groups.json: error: line 1: group \"1\" names rank 4, but the workload has 4 rank(s) (0..3): a groups file for another rank count?",
    "unknown_pg_name": ".0.et: node 1 (offset 8): error: pg_name '7' names no communicator group",
    "meta_member_missing": ".2.et: error: group 5: this rank has fewer collectives than rank 0",
    "groups_take_slot_crossed": ".0.et: node 1 (offset 8): error: deadlock: group 1: collective #0 (ALL_REDUCE, 1024 "
                                "bytes) holds the communication slot",
    "world_by_two_names_crossed": ".1.et: node 1 (offset 8): error: group (every rank, any name: the simulator runs "
                                  "them as one sequence): collective #0 is ALL_REDUCE of 2048 bytes, but rank 0 has "
                                  "ALL_REDUCE of 1024 bytes (node 1)",
}
STAGE = os.path.join(SOURCE, "..", "shared", "data", "traces", "stage", "gpt_small_tponly_dp2tp4",
                     "gpt_small_tponly_dp2tp4")
# pipeline and tensor parallelism: validate once flagged it (see above)
STAGE_PP = os.path.join(SOURCE, "..", "shared", "data", "traces", "stage", "gpt_dp1tp4pp2", "gpt_dp1tp4pp2")


CASES = {
    "recv_before_send": (False, [[recv(1, 1), send(2, 1, [1])], [recv(1, 0), send(2, 0, [1])]]),
    "unmatched_send": (False, [[send(1, 1)], [allreduce(1)]]),
    "coll_size_differs": (False, [[allreduce(1, size=1024)], [allreduce(1, size=2048)]]),
    "send_before_recv": (True, [[send(1, 1), recv(2, 1, [1])], [send(1, 0), recv(2, 0, [1])]]),
    "allreduce_pair": (True, [[allreduce(1)], [allreduce(1)]]),
    # the communication slot (one send, collective or memory node at a time)
    "coll_holds_slot": (False, [[allreduce(1), send(2, 1)], [recv(1, 0), allreduce(2, [1])]]),
    "coll_holds_slot_later": (False, [[node(1, "COMP_NODE"), allreduce(2, [1]), send(3, 1, [1])],
                                      [recv(1, 0), allreduce(2, [1])]]),
    "send_first_sound": (True, [[send(1, 1), allreduce(2)], [recv(1, 0), allreduce(2, [1])]]),
    # rank 0's all-reduce 4 (after a small message) is issued before 3
    # (after 1 ms of compute) in every run, so it pairs with rank 1's first
    # and the send that rank 1's second waits for follows it
    "coll_order_by_timing": (True, [[timed(1, 1000, False), recv(2, 1, size=128), allreduce(3, [1]),
                                     allreduce(4, [2]), send(5, 1, [4])],
                                    [send(1, 0, size=128), allreduce(2), recv(3, 0), allreduce(4, [3])]]),
    # the same with two receives of one key: 4 gets rank 1's first message
    "recv_order_by_timing": (True, [[timed(1, 1000, False), recv(2, 1, [1]), recv(3, 1, size=128), recv(4, 1, [3]),
                                     send(5, 1, [4])],
                                    [send(1, 0, size=128), send(2, 0), recv(3, 0), send(4, 0, [3])]]),
}
# Deadlocks only under --rendezvous-protocol=true (given to both tools):
# name: (whether sim finishes with it, ranks' nodes)
RENDEZVOUS = {
    "rdv_sends_first": (False, [[send(1, 1), recv(2, 1, [1])], [send(1, 0), recv(2, 0, [1])]]),
    "rdv_send_holds_slot": (False, [[send(1, 1), allreduce(2)], [allreduce(1), recv(2, 0, [1])]]),
    "rdv_recv_first": (True, [[recv(1, 1), send(2, 1, [1])], [send(1, 0), recv(2, 0, [1])]]),
}


def slot_race(cpu_us, gpu_us):
    """Rank 0's send (after CPU work) and all-reduce (after GPU work) race
    for the slot; rank 1's all-reduce waits for the send. The send has the
    lower id but neither is ready whenever the other is, so timing decides:
    the all-reduce first (CPU work longer) stalls both ranks."""
    return [[timed(1, cpu_us, True), timed(2, gpu_us, False), send(3, 1, [1]), allreduce(4, [2])],
            [recv(1, 0), allreduce(2, [1])]]


# Timing decides: the untimed check cannot (validate accepts both), the
# simulation validate runs when given the configuration can.
# name: (whether sim finishes, ranks' nodes)
RACES = {
    "race_coll_first": (False, slot_race(1000, 10)),
    "race_send_first": (True, slot_race(10, 1000)),
}


def write(d, name, ranks):
    prefix = os.path.join(d, name)
    for r, nodes in enumerate(ranks):
        src = "%s.%d.jsonl" % (prefix, r)
        with open(src, "w") as f:
            f.write(json.dumps({"version": "0.0.4"}) + "\n")
            f.writelines(json.dumps(n) + "\n" for n in nodes)
        subprocess.run([CHAKRA, "pack", src, "-o", "%s.%d.et" % (prefix, r)], check=True)
    return prefix


def ring(d, npus):
    net = os.path.join(d, "ring%d.yml" % npus)
    with open(net, "w") as f:
        f.write("topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n" % npus)
    return net


def main():
    passed = failed = 0
    with tempfile.TemporaryDirectory() as d:
        cases = {n: (1 - sound, sound, r, None, []) for n, (sound, r) in CASES.items()}
        cases.update({n: (1 - sound, sound, r, g, []) for n, (sound, r, g) in GROUP_CASES.items()})
        rdv = ["--rendezvous-protocol=true"]
        cases.update({n: (1 - sound, sound, r, None, rdv) for n, (sound, r) in RENDEZVOUS.items()})
        cases.update({n: (0, sound, r, None, []) for n, (sound, r) in RACES.items()})
        for name, prefix in (("stage_shared_with_groups", STAGE), ("stage_pipeline_with_groups", STAGE_PP)):
            if os.path.exists(prefix + ".0.et"):
                cases[name] = (0, True, prefix, prefix + ".json", [])
            else:
                print("skip: %s (no ../shared STAGE traces)" % name)
        for name, (want_v, sound, ranks, groups, opt) in cases.items():
            prefix = ranks if isinstance(ranks, str) else write(d, name, ranks)
            npus = 8 if isinstance(ranks, str) else len(ranks)
            opt = list(opt)
            if isinstance(groups, dict):
                gpath = os.path.join(d, name + ".groups.json")
                with open(gpath, "w") as f:
                    json.dump(groups, f)
                groups = gpath
            if groups:
                opt.append("--comm-group-configuration=" + groups)
            v = subprocess.run([CHAKRA, "validate", prefix] + opt, capture_output=True, text=True)
            s = subprocess.run([CHAKRA, "sim", "--workload-configuration=" + prefix,
                                "--system-configuration=" + SYSTEM, "--network-configuration=" + ring(d, npus)] + opt,
                               capture_output=True, text=True)
            ok = v.returncode == want_v and (s.returncode == 0) == sound
            if name in RACES or name == "coll_holds_slot":
                # with the configuration, validate simulates: exact for it
                vs = subprocess.run([CHAKRA, "validate", prefix, "--system-configuration=" + SYSTEM,
                                     "--network-configuration=" + ring(d, npus)] + opt, capture_output=True, text=True)
                want = "%s.0.et: error: deadlock: simulated on %s and " % (prefix, SYSTEM)
                if vs.returncode != 1 - sound or (not sound and name in RACES and want not in vs.stdout):
                    ok = False
                    print("FAIL: %s: validate with the configuration exit %d (want %d)\n%s" %
                          (name, vs.returncode, 1 - sound, vs.stdout))
            if name in EXPECT and EXPECT[name] not in v.stdout:
                ok = False
                print("FAIL: %s: validate does not say '%s'" % (name, EXPECT[name]))
            if ok:
                passed += 1
            else:
                failed += 1
                print("FAIL: %s: validate exit %d (want %d), sim exit %d (want %s)\n%s%s" %
                      (name, v.returncode, want_v, s.returncode, "0" if sound else "non-zero",
                       v.stdout, s.stderr[-1500:]))
        # Sound in the large: chakra sim finishes every reference case of
        # ../shared (sim.reference_cases), so validate must accept each
        # case's workload with its comm-group file.
        cases_file = os.path.join(SOURCE, "..", "shared", "data", "reference", "sim", "cases.jsonl")
        if os.path.exists(cases_file):
            base = os.path.dirname(cases_file)
            with open(cases_file) as f:
                ref = sorted({(c["workload"], c.get("groups") or "") for c in map(json.loads, f)})
            for w, g in ref:
                opt = ["--comm-group-configuration", os.path.join(base, g)] if g else []
                v = subprocess.run([CHAKRA, "validate", "-q", os.path.join(base, w)] + opt, capture_output=True,
                                   text=True)
                if v.returncode == 0:
                    passed += 1
                else:
                    failed += 1
                    print("FAIL: reference case workload %s (groups %s): validate exit %d\n%s" %
                          (w, g or "none", v.returncode, v.stdout[-1500:]))
        else:
            print("skip: reference sim cases (no ../shared)")
        # A comm-group file that is not one is bad input for both: exit 2,
        # one line naming file, line and group, before any trace is read.
        bad = os.path.join(d, "bad.groups.json")
        with open(bad, "w") as f:
            f.write('{"1": [0, 1],\n "2": [2, "three"]}')
        prefix = os.path.join(d, "disjoint_groups")
        v = subprocess.run([CHAKRA, "validate", prefix, "--comm-group-configuration", bad], capture_output=True,
                           text=True)
        want = ('chakra validate: %s: line 2: group "2": entry 1 is a string, expected a rank (non-negative integer)'
                % bad)
        if v.returncode == 2 and v.stderr.strip() == want and not v.stdout:
            passed += 1
        else:
            failed += 1
            print("FAIL: bad comm-group file: exit %d (want 2), stderr %r (want %r)" % (v.returncode, v.stderr, want))
        # The simulation's options without a configuration, and a network
        # whose NPU count is not the rank count, are usage/input errors.
        prefix = os.path.join(d, "race_coll_first")
        for extra, want in ((["--network-model=unaware"], "chakra validate: --system-configuration and "
                             "--network-configuration go together"),
                            (["--system-configuration=" + SYSTEM, "--network-configuration=" + ring(d, 8)],
                             "chakra validate: %s: the network has 8 NPUs but the workload has 2 rank file(s)"
                             % ring(d, 8))):
            v = subprocess.run([CHAKRA, "validate", prefix] + extra, capture_output=True, text=True)
            if v.returncode == 2 and v.stderr.startswith(want) and v.stderr.count("\n") == 1:
                passed += 1
            else:
                failed += 1
                print("FAIL: validate %s: exit %d (want 2), stderr %r (want %r...)" % (extra, v.returncode, v.stderr,
                                                                                      want))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
