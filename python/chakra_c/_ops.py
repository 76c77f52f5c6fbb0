"""validate(), stats() and simulate(): the chakra commands' answers as
dicts, through include/chakra/oneshot.h. Keyword arguments are the
commands' long options with '_' for '-' (network_model="unaware");
True and False stand for true and false."""

import ctypes
import json
import os
import warnings

from . import _lib


def _traces(traces):
    """FILE.et... or PREFIX: one path or a list of them."""
    if isinstance(traces, (str, bytes, os.PathLike)):
        return [traces]
    return list(traces)


def _options(kw):
    pairs = []
    for key, value in kw.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, os.PathLike):
            value = os.fspath(value)
        pairs += [key.replace("_", "-"), str(value)]
    return pairs


def _call(fn, traces, kw, *extra):
    args = _traces(traces)
    opts = _options(kw)
    c_args, c_opts = _lib.strings(args), _lib.strings(opts)
    out = _lib.Collector()
    err = _lib.Error()
    rc = fn(c_args, len(args), c_opts, len(opts) // 2, ctypes.byref(out.sink), *extra, ctypes.byref(err))
    _lib.check(rc, err)
    return json.loads(out.text())


def validate(traces, **options):
    """chakra validate: {"problems": [...], "files", "nodes", "errors",
    "warnings", "classes" (0: every rank checked; else a shared grid set
    checked by class), "unreadable", "groups_beside"}. Options:
    comm_group_configuration (or comm_groups), rendezvous_protocol,
    max_errors, per_rank."""
    return _call(_lib.lib.chakra_validate_json, traces, options)


def stats(traces, **options):
    """chakra stats --json: {"ranks": [...], "total": {...}}. Options:
    comm_group_configuration (or comm_groups), ignore_ctrl_deps."""
    return _call(_lib.lib.chakra_stats_json, traces, options)


def simulate(traces, system_configuration, network_configuration, **options):
    """chakra sim --report on the traces (a PREFIX or the rank files, one
    per NPU of the network). Options as chakra sim's:
    remote_memory_configuration, comm_group_configuration, network_model,
    num_queues_per_dim, injection_scale, rendezvous_protocol,
    multidim_p2p, custom_collective_scaling, threads, timeline. The
    simulator's warnings become Python warnings."""
    said = []

    def diag(ctx, p):
        said.append(p.contents.what.decode("utf-8", "replace") if p.contents.what else "")
    fn = _lib.DiagFn(diag)
    options = dict(options, system_configuration=system_configuration, network_configuration=network_configuration)
    report = _call(_lib.lib.chakra_sim_json, traces, options, fn, None)
    for what in said:
        warnings.warn(f"chakra_c.simulate: {what}", stacklevel=2)
    return report
