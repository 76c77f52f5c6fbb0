"""read(), columns() and write(): a trace through libchakra's flat arrays
(include/chakra/flat.h). The library decodes the whole file in C; Python
copies the columns once and builds node objects only when they are
looked at."""

import array
import collections
import ctypes
import struct
import warnings

from . import _lib
from ._model import (VALUE_FIELDS, FIELD_KIND, AttrList, AttributeProto, GlobalMetadata, IOInfo, NodeBase, ValueList)

try:
    import numpy as _np
except ImportError:  # columns() then returns array.array
    _np = None

Trace = collections.namedtuple("Trace", "metadata nodes")
Trace.__doc__ = "What read() returns: the GlobalMetadata and the nodes (unpacks as metadata, nodes)."

_MASK = (1 << 64) - 1
_SIGNED = {7: 32, 15: 32, 23: 32, 9: 64, 17: 64, 25: 64}     # int32, sint32, sfixed32, int64, sint64, sfixed64
_UNSIGNED = {11: 32, 19: 32, 13: 64, 21: 64}                  # uint32, fixed32, uint64, fixed64
_REAL = (3, 5)                                                 # double, float
_PLAIN_KINDS = frozenset((11, 13, 19, 21))                    # unsigned: the cell is the value
_WIDE_SIGNED = frozenset((9, 17, 25))                          # int64, sint64, sfixed64
_new = object.__new__
_dbits = struct.Struct("<d")
_qbits = struct.Struct("<Q")


def _array(ptr, count, code):
    """count elements at ptr copied into a new array.array."""
    a = array.array(code, [0]) * count if count else array.array(code)
    if count:
        ctypes.memmove(a.buffer_info()[0], ptr, count * a.itemsize)
    return a


_CTYPE = {"Q": ctypes.c_uint64, "q": ctypes.c_int64, "i": ctypes.c_int32, "I": ctypes.c_uint32, "B": ctypes.c_uint8}


class _Owned:
    """A chakra_flat the library allocated, freed when the last array
    viewing its memory is gone."""

    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self):
        _lib.lib.chakra_flat_free(self.ptr)


def _ndarray(ptr, count, code, owner):
    """A numpy array over count elements at ptr (no copy: owner keeps the
    memory), or an array.array copy without numpy."""
    if _np is None:
        return _array(ptr, count, code)
    if not count:
        return _np.empty(0, dtype=code)
    view = (_CTYPE[code] * count).from_address(ctypes.cast(ptr, ctypes.c_void_p).value)
    view.owner = owner
    return _np.frombuffer(view, dtype=code)


def _read_flat(path, flags):
    out = ctypes.POINTER(_lib.Flat)()
    err = _lib.Error()
    problems = []

    def diag(ctx, p):
        p = p.contents
        problems.append(p.what.decode("utf-8", "replace") if p.what else "")
    fn = _lib.DiagFn(diag)
    opt = _lib.FlatOptions(flags, 0, fn, None)
    _lib.check(_lib.lib.chakra_flat_read(ctypes.byref(out), _lib.fspath(path), ctypes.byref(opt),
                                         ctypes.byref(err)), err)
    for what in problems[:5]:
        warnings.warn(f"chakra_c: {path}: {what}", stacklevel=3)
    return out


class _Store:
    """The columns of one trace, copied out of the library's memory, and
    what read()'s nodes loaded or were given since."""

    def __init__(self, f):
        n = self.n = f.n
        self.id = _array(f.id, n, "Q")
        self.start = _array(f.start_time_micros, n, "Q")
        self.dur = _array(f.duration_micros, n, "Q")
        self.type = _array(f.type, n, "i")
        self.name = _array(f.name, n, "Q")
        self.ddo = _array(f.data_dep_off, n + 1, "Q")
        self.dd = _array(f.data_deps, self.ddo[n], "Q")
        self.cdo = _array(f.ctrl_dep_off, n + 1, "Q")
        self.cd = _array(f.ctrl_deps, self.cdo[n], "Q")
        self.ao = _array(f.attr_off, n + 1, "Q") if f.attr_off else None
        self.io = _array(f.io, n, "B") if f.io else None
        self.ios = _array(f.io_strings, 6 * n, "Q") if f.io else None
        m = self.n_attrs = f.n_attrs
        self.an, self.ad = _array(f.attr_name, m, "Q"), _array(f.attr_doc, m, "Q")
        self.ak = _array(f.attr_kind, m, "i")
        self.av, self.ac = _array(f.attr_value, m, "Q"), _array(f.attr_count, m, "Q")
        self.values = _array(f.values, f.n_values, "Q")
        self.stroff = _array(f.str_off, f.n_strings + 1, "Q")
        self.blob = ctypes.string_at(f.strings, self.stroff[-1]) if self.stroff[-1] else b""
        self.version, self.n_meta = f.version, f.n_meta_attrs
        self.names = {}        # string index -> str, for the few strings met often (attribute names)
        # The lists a node handed out (changes made in place stay) and the
        # fields it was given, per field: node index -> value.
        self.loaded = {f: [_UNLOADED] * n for f in _MUTABLE}
        self.c_ctrl, self.c_data = self.loaded["ctrl_deps"], self.loaded["data_deps"]
        self.given = {}

    def __getattr__(self, name):
        """The columns as Python lists, made on first use (list indexing
        hands out ready ints; a slice of one is one allocation)."""
        make = _LISTS.get(name)
        if make is None:
            raise AttributeError(name)
        v = make(self)
        setattr(self, name, v)
        return v

    def joined(self, index):
        """The strings of an index column, all at once (chakra_flat_join)."""
        b = _store_flat(self)
        f = b.flat()
        index_arr = getattr(self, index)
        return _strings_of(f, ctypes.cast(index_arr.buffer_info()[0], _lib.u64p), len(index_arr))

    def string(self, s):
        o = self.stroff
        return self.blob[o[s]:o[s + 1]].decode("utf-8", "surrogateescape")

    def raw(self, s):
        o = self.stroff
        return self.blob[o[s]:o[s + 1]]

    def cached_string(self, s):
        v = self.names.get(s)
        if v is None:
            v = self.names[s] = self.string(s)
        return v

    def cell(self, kind, c):
        """A value cell (flat.h's encoding) as the Python value protobuf gives."""
        if kind in _SIGNED:
            return c - (1 << 64) if c >> 63 else c
        if kind in _REAL:
            return _dbits.unpack(_qbits.pack(c))[0]
        if kind == 27:
            return bool(c)
        if kind == 29:
            return self.string(c)
        if kind == 31:
            return self.raw(c)
        return c

    def value(self, kind, r):
        """Row r's value (a list kind's as a ValueList)."""
        v, c = self.av[r], self.ac[r]
        if kind % 2 == 0:
            return ValueList([self.cell(kind - 1, x) for x in self.values[v:v + c]])
        return self.cell(kind, v)

    def attrs(self, lo, hi):
        """Rows lo..hi as AttributeProto objects; the usual kinds inline."""
        out = AttrList()
        ak, av, an, ad, names = self.ak, self.av, self.an, self.ad, self.names
        for r in range(lo, hi):
            kind = ak[r]
            if kind == 27:
                value = av[r] != 0
            elif kind in _PLAIN_KINDS:
                value = av[r]
            elif kind in _WIDE_SIGNED:
                value = av[r]
                if value >> 63:
                    value -= 1 << 64
            elif kind:
                value = self.value(kind, r)
            else:
                value = None
            name = names.get(an[r])
            if name is None:
                name = self.cached_string(an[r])
            a = _new(AttributeProto)
            a.name, a.doc_string, a._kind, a._value = name, self.cached_string(ad[r]) if ad[r] else "", kind, value
            out.append(a)
        return out

    def io_info(self, i, which):
        if self.io is None or not self.io[i] & (1 << which):
            return None
        k = 6 * i + 3 * which
        s = self.ios
        return IOInfo(self.string(s[k]), self.string(s[k + 1]), self.string(s[k + 2]))

    def metadata(self):
        return GlobalMetadata(self.string(self.version), self.attrs(0, self.n_meta))

    def original(self, field, i):
        """Mutable field of node i as the trace has it."""
        if field == "data_deps":
            return self.dd[self.ddo[i]:self.ddo[i + 1]].tolist()
        if field == "ctrl_deps":
            return self.cd[self.cdo[i]:self.cdo[i + 1]].tolist()
        if field == "attr":
            return self.attrs(self.ao[i], self.ao[i + 1]) if self.ao is not None else AttrList()
        return self.io_info(i, 0 if field == "_inputs" else 1)

    def load(self, field, i):
        """A mutable field of node i, made once and kept (changes made in
        place must stay)."""
        cache = self.loaded[field]
        v = cache[i]
        if v is _UNLOADED:
            v = cache[i] = self.original(field, i)
        return v

    def changed(self):
        """Whether a node was given a field, or a list it handed out no
        longer matches the trace: write() then encodes the nodes anew."""
        return bool(self.given) or any(v is not _UNLOADED and v != self.original(f, i)
                                       for f, cache in self.loaded.items() for i, v in enumerate(cache))


_MUTABLE = ("ctrl_deps", "data_deps", "attr", "_inputs", "_outputs")
_LISTS = {
    "id_l": lambda s: s.id.tolist(), "type_l": lambda s: s.type.tolist(), "start_l": lambda s: s.start.tolist(),
    "dur_l": lambda s: s.dur.tolist(), "name_l": lambda s: s.joined("name"),
    "dd_l": lambda s: s.dd.tolist(), "ddo_l": lambda s: s.ddo.tolist(),
    "cd_l": lambda s: s.cd.tolist(), "cdo_l": lambda s: s.cdo.tolist(),
}


_MISSING = object()
_UNLOADED = object()


# The getters are generated from these templates: a node field is read
# millions of times in an analysis loop, and one generic getter (getattr
# by name, a converter call) cost twice the time of these.
_SCALAR_GET = """
def get(self):
    s = self._s
    if s.given:
        v = s.given.get((self._i, {field!r}), _MISSING)
        if v is not _MISSING:
            return v
    return {expr}
"""
_DEPS_GET = """
def get(self):
    s = self._s
    i = self._i
    v = s.{cache}[i]
    if v is _UNLOADED:
        o = s.{off}
        v = s.{cache}[i] = s.{deps}[o[i]:o[i + 1]]
    return v
"""


def _generated(template, **names):
    scope = {"_MISSING": _MISSING, "_UNLOADED": _UNLOADED}
    exec(template.format(**names), scope)
    return scope["get"]


def _scalar(field, expr):
    def set_(self, v):
        self._s.given[(self._i, field)] = v
    return property(_generated(_SCALAR_GET, field=field, expr=expr), set_)


def _mutable(field, get=None):
    def set_(self, v):
        self._s.loaded[field][self._i] = v
        self._s.given[(self._i, field)] = True
    if get is None:
        def get(self):
            return self._s.load(field, self._i)
    return property(get, set_)




class NodeView(NodeBase):
    """A node of a trace read by read(): its fields come from the trace's
    columns when first looked at. Lists it hands out (deps, attr) are kept,
    so changes made in place stay; assigning a field works too, and
    write() then writes the change."""
    __slots__ = ("_s", "_i")

    def __init__(self, store, i):
        self._s = store
        self._i = i

    id = _scalar("id", "s.id_l[self._i]")
    name = _scalar("name", "s.name_l[self._i]")
    type = _scalar("type", "s.type_l[self._i]")
    start_time_micros = _scalar("start_time_micros", "s.start_l[self._i]")
    duration_micros = _scalar("duration_micros", "s.dur_l[self._i]")
    ctrl_deps = _mutable("ctrl_deps", _generated(_DEPS_GET, cache="c_ctrl", off="cdo_l", deps="cd_l"))
    data_deps = _mutable("data_deps", _generated(_DEPS_GET, cache="c_data", off="ddo_l", deps="dd_l"))
    attr = _mutable("attr")
    _inputs = _mutable("_inputs")
    _outputs = _mutable("_outputs")

    @property
    def inputs(self):
        v = self._inputs
        return IOInfo() if v is None else v

    @inputs.setter
    def inputs(self, v):
        self._inputs = v

    @property
    def outputs(self):
        v = self._outputs
        return IOInfo() if v is None else v

    @outputs.setter
    def outputs(self, v):
        self._outputs = v

    def _present(self, field):
        return getattr(self, "_" + field) is not None

    def ClearField(self, field):
        default = {"inputs": None, "outputs": None, "name": "", "ctrl_deps": [], "data_deps": [],
                   "attr": AttrList()}.get(field, 0)
        setattr(self, "_" + field if field in ("inputs", "outputs") else field, default)

    def __reduce__(self):
        from ._model import Node
        return (Node, (self.id, self.name, self.type, self.ctrl_deps, self.data_deps, self.start_time_micros,
                       self.duration_micros, self._inputs, self._outputs, self.attr))


class NodeList(collections.abc.Sequence):
    """The nodes of a trace in file order: len(), indexing, slicing,
    iteration. Nodes are made when reached."""

    def __init__(self, store):
        self._s = store

    def __len__(self):
        return self._s.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [NodeView(self._s, k) for k in range(*i.indices(self._s.n))]
        n = self._s.n
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("node index out of range")
        return NodeView(self._s, i)

    def __iter__(self):
        s = self._s
        return (NodeView(s, i) for i in range(s.n))

    def __repr__(self):
        return f"<NodeList of {self._s.n} nodes>"


def read(path):
    """The trace at path (gzip or plain; "-" is standard input) as
    Trace(metadata, nodes): the GlobalMetadata and a sequence of nodes
    with the reference protobuf classes' fields."""
    f = _read_flat(path, 0)
    try:
        store = _Store(f.contents)
        if f.contents.unknown_fields:
            warnings.warn(f"chakra_c: {path}: {f.contents.unknown_fields} field(s) outside the schema were dropped",
                          stacklevel=2)
    finally:
        _lib.lib.chakra_flat_free(f)
    metadata = store.metadata()
    store.meta_snapshot = (metadata.version, list(metadata.attr))
    return Trace(metadata, NodeList(store))


_COLUMNS = [  # key, chakra_flat field, type code (numpy's and array's agree for these)
    ("id", "id", "Q"), ("type", "type", "i"), ("start_time_micros", "start_time_micros", "Q"),
    ("duration_micros", "duration_micros", "Q"),
    ("present", "std_present", "I"), ("is_cpu_op", "std_is_cpu_op", "B"), ("comm_type", "std_comm_type", "q"),
    ("comm_size", "std_comm_size", "Q"), ("num_ops", "std_num_ops", "Q"), ("tensor_size", "std_tensor_size", "Q"),
    ("comm_src", "std_comm_src", "i"), ("comm_dst", "std_comm_dst", "i"), ("comm_tag", "std_comm_tag", "i"),
]


def _any_nonzero(a):
    return bool(a.any()) if _np is not None else a.count(0) != len(a)


def _string_table(f):
    """Every string of the chakra_flat f, as a list of str: joined by the
    library with a separator none of them holds, then split (one str per
    distinct string; the library stores each name once)."""
    count = f.n_strings
    if not count:
        return [""]
    total = f.str_off[count]
    room = total + count  # each string and its separator
    if _np is not None:  # neither is zeroed first, unlike ctypes buffers
        every = _np.arange(count, dtype=_np.uint64)
        buf = _np.empty(room, dtype=_np.uint8)
        index, at = every.ctypes.data_as(_lib.u64p), buf.ctypes.data_as(ctypes.c_char_p)
    else:
        every = array.array("Q", range(count))
        buf = at = ctypes.create_string_buffer(room)
        index = ctypes.cast(every.buffer_info()[0], _lib.u64p)
    err = _lib.Error()
    need = ctypes.c_uint64()
    for sep in (b"\n", b"\0", b"\x1f", b"\x01"):
        rc = _lib.lib.chakra_flat_join(ctypes.byref(f), index, count, sep, at, room, ctypes.byref(need),
                                       ctypes.byref(err))
        if rc == 0 and need.value <= room:
            text = str(memoryview(buf)[:need.value], "utf-8", "surrogateescape")
            return text.split(sep.decode())[:-1]
    # every separator occurs in some string: one at a time
    blob = ctypes.string_at(f.strings, total) if total else b""
    off = f.str_off
    return [blob[off[s]:off[s + 1]].decode("utf-8", "surrogateescape") for s in range(count)]


def _strings_of(f, index, n):
    """The strings an index column of the chakra_flat f names (n of them),
    as a list of str, repeated strings the same object."""
    table = _string_table(f)
    if not n:
        return []
    if _np is not None:
        return _np.array(table, dtype=object)[_np.ctypeslib.as_array(index, shape=(n,))].tolist()
    return [table[index[k]] for k in range(n)]


def columns(path, names=True):
    """The trace at path as a dict of columns, one entry per node (numpy
    arrays when numpy is installed, else array.array): id, type,
    start_time_micros, duration_micros, the standard attributes resolved
    as the library resolves them (is_cpu_op, comm_type (-1: none),
    comm_size, num_ops, tensor_size, comm_src, comm_dst, comm_tag (-1:
    none), present (Has bits)), data_deps and ctrl_deps in CSR form with
    their *_offsets (n + 1 entries), and name and pg_name as lists of str
    (names=False leaves name out)."""
    f = _read_flat(path, _lib.FLAT_NO_ATTRS | _lib.FLAT_NO_IO | _lib.FLAT_STD)
    owner = _Owned(f)
    c = f.contents
    n = c.n
    out = {key: _ndarray(getattr(c, field), n, code, owner) for key, field, code in _COLUMNS}
    for key, off, deps in (("data_deps", "data_dep_off", "data_deps"), ("ctrl_deps", "ctrl_dep_off", "ctrl_deps")):
        offsets = _ndarray(getattr(c, off), n + 1, "Q", owner)
        out[key + "_offsets"] = offsets
        out[key] = _ndarray(getattr(c, deps), int(offsets[n]), "Q", owner)
    if names:
        out["name"] = _strings_of(c, c.name, n)
    pg = _ndarray(c.std_pg_name, n, "Q", owner)
    # most traces name no group: no strings to make then
    out["pg_name"] = _strings_of(c, c.std_pg_name, n) if _any_nonzero(pg) else [""] * n
    return out


# ---- write ---------------------------------------------------------------------


def _field(obj, name, default):
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _present(node, field):
    """Whether node has inputs / outputs (protobuf's HasField)."""
    if isinstance(node, dict):
        return node.get(field) is not None
    has = getattr(node, "HasField", None)
    if has is not None:
        return has(field)
    return getattr(node, field, None) is not None


def _attr_parts(a):
    """(name, doc_string, kind, value) of an attribute: ours, a protobuf
    message, or a dict such as {"name": "comm_size", "int64_val": 8}."""
    if isinstance(a, AttributeProto):
        return a.name, a.doc_string, a._kind, a._value
    if isinstance(a, dict):
        for key, v in a.items():
            if key in FIELD_KIND:
                return a.get("name", ""), a.get("doc_string", ""), FIELD_KIND[key], v
        return a.get("name", ""), a.get("doc_string", ""), 0, None
    which = a.WhichOneof("value")
    return a.name, a.doc_string, FIELD_KIND[which] if which else 0, getattr(a, which) if which else None


class _Builder:
    """The flat arrays of a trace being written, filled from node objects."""

    def __init__(self):
        for name in ("id", "start", "dur", "name", "dd", "cd", "an", "ad", "av", "ac", "values", "ios"):
            setattr(self, name, array.array("Q"))
        self.type, self.ak = array.array("i"), array.array("i")
        self.ddo, self.cdo, self.ao = array.array("Q", [0]), array.array("Q", [0]), None
        self.io = None
        self.blob = bytearray()
        self.stroff = array.array("Q", [0, 0])
        self.index = {"": 0, b"": 0}
        self.where = "metadata"

    def fail(self, what):
        raise ValueError(f"chakra_c.write: {self.where}: {what}")

    def string(self, s):
        k = self.index.get(s)
        if k is None:
            if isinstance(s, str):
                data = s.encode("utf-8", "surrogateescape")
            elif isinstance(s, (bytes, bytearray)):
                data = bytes(s)
            else:
                self.fail(f"expected text, got {type(s).__name__} {s!r}")
            self.blob += data
            self.stroff.append(len(self.blob))
            k = self.index[s] = len(self.stroff) - 2
        return k

    def cell(self, kind, v, field):
        if kind in _REAL:
            try:
                return _qbits.unpack(_dbits.pack(float(v)))[0]
            except (TypeError, ValueError):
                self.fail(f"{field}: expected a number, got {v!r}")
        if kind == 27:
            return 1 if v else 0
        if kind in (29, 31):
            return self.string(v)
        if isinstance(v, bool) or not isinstance(v, int):
            if not hasattr(v, "__index__"):
                self.fail(f"{field}: expected an integer, got {v!r}")
            v = v.__index__()
        bits = _SIGNED.get(kind)
        if bits is not None:
            if not -(1 << (bits - 1)) <= v < 1 << (bits - 1):
                self.fail(f"{field}: {v} does not fit {bits} signed bits")
            return v & _MASK
        bits = _UNSIGNED[kind]
        if not 0 <= v < 1 << bits:
            self.fail(f"{field}: {v} does not fit {bits} unsigned bits")
        return v

    def attr(self, a):
        name, doc, kind, v = _attr_parts(a)
        field = VALUE_FIELDS.get(kind, "value")
        self.an.append(self.string(name or ""))
        self.ad.append(self.string(doc or ""))
        self.ak.append(kind)
        if kind == 0:
            self.av.append(0)
            self.ac.append(0)
        elif kind % 2 == 0:
            items = list(getattr(v, "values", v))
            self.av.append(len(self.values))
            self.ac.append(len(items))
            self.values.extend(self.cell(kind - 1, x, f"attribute {name!r} {field}") for x in items)
        else:
            self.av.append(self.cell(kind, v, f"attribute {name!r} {field}"))
            self.ac.append(1)

    def metadata(self, m):
        self.version = self.string(_field(m, "version", "") or "") if m is not None else 0
        for a in (_field(m, "attr", ()) if m is not None else ()):
            self.attr(a)
        self.n_meta = len(self.an)
        self.ao = array.array("Q", [self.n_meta])

    def io_of(self, node, k):
        if self.io is None:
            if not (_present(node, "inputs") or _present(node, "outputs")):
                return
            self.io = bytearray(k)
            self.ios.extend([0] * (6 * k))
        flags = 0
        for bit, which in ((1, "inputs"), (2, "outputs")):
            present = _present(node, which)
            io = _field(node, which, None) if present else None
            flags |= bit if present else 0
            for part in ("values", "shapes", "types"):
                self.ios.append(self.string(_field(io, part, "") or "") if io is not None else 0)
        self.io.append(flags)

    def node(self, node, k):
        self.where = f"node {k}"
        try:
            self.id.append(_field(node, "id", 0))
            self.start.append(_field(node, "start_time_micros", 0))
            self.dur.append(_field(node, "duration_micros", 0))
            self.type.append(_field(node, "type", 0))
            self.dd.extend(_field(node, "data_deps", ()))
            self.cd.extend(_field(node, "ctrl_deps", ()))
        except (TypeError, OverflowError) as e:
            self.fail(f"id, type, deps or times: {e}")
        self.name.append(self.string(_field(node, "name", "") or ""))
        self.ddo.append(len(self.dd))
        self.cdo.append(len(self.cd))
        for a in _field(node, "attr", ()):
            self.attr(a)
        self.ao.append(len(self.an))
        self.io_of(node, k)

    def flat(self):
        """A chakra_flat over these arrays (which must outlive it)."""
        f = _lib.Flat()
        f.version, f.n_meta_attrs, f.n = self.version, self.n_meta, len(self.id)
        _point(f, self, [("id", "id"), ("start_time_micros", "start"), ("duration_micros", "dur"),
                         ("type", "type"), ("name", "name"), ("data_dep_off", "ddo"), ("data_deps", "dd"),
                         ("ctrl_dep_off", "cdo"), ("ctrl_deps", "cd"), ("attr_off", "ao"), ("attr_name", "an"),
                         ("attr_doc", "ad"), ("attr_kind", "ak"), ("attr_value", "av"), ("attr_count", "ac"),
                         ("values", "values"), ("str_off", "stroff")])
        if self.io is not None:
            self.io_arr = array.array("B", self.io)
            _point(f, self, [("io", "io_arr"), ("io_strings", "ios")])
        f.n_attrs, f.n_values, f.n_strings = len(self.an), len(self.values), len(self.stroff) - 1
        self.blob_bytes = bytes(self.blob)
        f.strings = ctypes.cast(ctypes.c_char_p(self.blob_bytes), ctypes.c_void_p)
        return f


def _point(f, owner, pairs):
    """Points fields of f at owner's arrays (empty ones stay NULL)."""
    for field, attr in pairs:
        arr = getattr(owner, attr)
        if arr is not None and len(arr):
            ctype = dict(_lib.Flat._fields_)[field]
            setattr(f, field, ctypes.cast(arr.buffer_info()[0], ctype))


def _store_flat(s):
    """A chakra_flat over a store read by read() and left unchanged."""
    b = _Builder.__new__(_Builder)
    b.version, b.n_meta = s.version, s.n_meta
    for mine, theirs in (("id", "id"), ("start", "start"), ("dur", "dur"), ("type", "type"), ("name", "name"),
                         ("ddo", "ddo"), ("dd", "dd"), ("cdo", "cdo"), ("cd", "cd"), ("ao", "ao"), ("an", "an"),
                         ("ad", "ad"), ("ak", "ak"), ("av", "av"), ("ac", "ac"), ("values", "values"),
                         ("stroff", "stroff"), ("ios", "ios")):
        setattr(b, mine, getattr(s, theirs))
    b.io, b.blob = s.io, s.blob
    return b


def write(path, metadata, nodes):
    """Writes a trace: the GlobalMetadata (ours, a protobuf message, a dict
    or None) and the nodes (read()'s, chakra_c.Node, protobuf Node
    messages or dicts with the same field names). The file appears whole
    or not at all; a name ending in .gz is compressed."""
    s = getattr(nodes, "_s", None)
    if (isinstance(nodes, NodeList) and metadata is not None and
            (metadata.version, list(metadata.attr)) == s.meta_snapshot and not s.changed()):
        b = _store_flat(s)  # unchanged since read(): written from its columns
    else:
        b = _Builder()
        b.metadata(metadata)
        for k, node in enumerate(nodes):
            b.node(node, k)
    f = b.flat()
    err = _lib.Error()
    _lib.check(_lib.lib.chakra_flat_write(ctypes.byref(f), _lib.fspath(path), ctypes.byref(err)), err)
