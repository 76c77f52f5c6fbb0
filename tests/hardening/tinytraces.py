"""tinytraces.py - the smallest PyTorch inputs the hardening scripts need: a
host execution trace of one op and the Kineto trace that profiled it, a
pair `chakra link` and `chakra convert pytorch` accept."""
import json
import os


def write_host_kineto(d, host, kineto):
    """Writes the pair into folder d under the names host and kineto."""
    attrs = [{"name": n, "type": "uint64", "value": 0} for n in ("rf_id", "fw_parent", "seq_id", "scope", "tid")]
    io = {"values": [], "shapes": [], "types": []}
    nodes = [{"id": i, "name": name, "ctrl_deps": i - 1, "inputs": io, "outputs": io, "attrs": attrs}
             for i, name in ((2, "[pytorch|profiler|execution_trace|thread]"), (3, "aten::add"))]
    with open(os.path.join(d, host), "w") as f:
        json.dump({"schema": "1.0.2-chakra.0.0.4", "pid": 1, "time": "t", "start_ts": 1, "nodes": nodes,
                   "finish_ts": 2}, f)
    with open(os.path.join(d, kineto), "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 10,
                                    "dur": 5, "args": {"External id": 1}}]}, f)
