"""Node, GlobalMetadata, AttributeProto and IOInfo with the field names of
the reference's protobuf classes (proto/et_def.proto), so code written
against et_def_pb2 reads them unchanged: ``node.id``, ``node.attr``,
``a.int64_val``, ``a.WhichOneof("value")``, ``node.HasField("inputs")``."""

import enum

# AttributeProto's value fields, by field number (include/chakra/flat.h's
# CHAKRA_AV_* are these numbers).
VALUE_FIELDS = {
    3: "double_val", 4: "double_list", 5: "float_val", 6: "float_list", 7: "int32_val", 8: "int32_list",
    9: "int64_val", 10: "int64_list", 11: "uint32_val", 12: "uint32_list", 13: "uint64_val", 14: "uint64_list",
    15: "sint32_val", 16: "sint32_list", 17: "sint64_val", 18: "sint64_list", 19: "fixed32_val",
    20: "fixed32_list", 21: "fixed64_val", 22: "fixed64_list", 23: "sfixed32_val", 24: "sfixed32_list",
    25: "sfixed64_val", 26: "sfixed64_list", 27: "bool_val", 28: "bool_list", 29: "string_val",
    30: "string_list", 31: "bytes_val", 32: "bytes_list",
}
FIELD_KIND = {name: k for k, name in VALUE_FIELDS.items()}


def default_of(kind):
    """What protobuf returns for a value field that is not the one set."""
    if kind % 2 == 0:
        return ValueList(())
    base = VALUE_FIELDS[kind]
    if base in ("double_val", "float_val"):
        return 0.0
    if base == "bool_val":
        return False
    if base == "string_val":
        return ""
    if base == "bytes_val":
        return b""
    return 0


class _EnumType:
    """The enum wrappers of et_def_pb2: Name(), Value(), keys(), values(),
    items(), and each name as an attribute."""

    def __init__(self, name, members):
        self._name = name
        self._by_name = dict(members)
        self._by_value = {v: k for k, v in members}
        for k, v in members:
            setattr(self, k, v)

    def Name(self, number):
        try:
            return self._by_value[number]
        except KeyError:
            raise ValueError(f"Enum {self._name} has no name defined for value {number!r}") from None

    def Value(self, name):
        try:
            return self._by_name[name]
        except KeyError:
            raise ValueError(f"Enum {self._name} has no value defined for name {name!r}") from None

    def keys(self):
        return list(self._by_name)

    def values(self):
        return list(self._by_name.values())

    def items(self):
        return list(self._by_name.items())


NodeType = _EnumType("NodeType", [
    ("INVALID_NODE", 0), ("METADATA_NODE", 1), ("MEM_LOAD_NODE", 2), ("MEM_STORE_NODE", 3), ("COMP_NODE", 4),
    ("COMM_SEND_NODE", 5), ("COMM_RECV_NODE", 6), ("COMM_COLL_NODE", 7)])
CollectiveCommType = _EnumType("CollectiveCommType", [
    ("ALL_REDUCE", 0), ("REDUCE", 1), ("ALL_GATHER", 2), ("GATHER", 3), ("SCATTER", 4), ("BROADCAST", 5),
    ("ALL_TO_ALL", 6), ("REDUCE_SCATTER", 7), ("REDUCE_SCATTER_BLOCK", 8), ("BARRIER", 9)])


class Has(enum.IntFlag):
    """Bits of columns()["present"]: which standard attributes a node has."""
    IS_CPU_OP = 1 << 0
    COMM_TYPE = 1 << 1
    COMM_SIZE = 1 << 2
    COMM_SRC = 1 << 3
    COMM_DST = 1 << 4
    COMM_TAG = 1 << 5
    PG_NAME = 1 << 6
    INVOLVED_DIM = 1 << 7
    NUM_OPS = 1 << 8
    TENSOR_SIZE = 1 << 9
    COMM_PRIORITY = 1 << 10


class ValueList:
    """A list attribute's value message (Int64List, StringList, ...):
    ``a.int64_list.values``."""
    __slots__ = ("values",)

    def __init__(self, values=()):
        self.values = list(values)

    def __eq__(self, other):
        return list(self.values) == list(getattr(other, "values", other))

    def __repr__(self):
        return f"ValueList({self.values!r})"


class AttributeProto:
    """One attribute: ``name``, ``doc_string`` and one value field, as the
    reference's class (``AttributeProto(name="comm_size", int64_val=1024)``).
    Reading a value field that is not the one set gives its default, as in
    protobuf; setting one replaces the value."""
    __slots__ = ("name", "doc_string", "_kind", "_value")

    def __init__(self, name="", doc_string="", **value):
        self.name = name
        self.doc_string = doc_string
        self._kind = 0
        self._value = None
        if len(value) > 1:
            raise ValueError(f"an attribute holds one value, got {sorted(value)}")
        for field, v in value.items():
            if field not in FIELD_KIND:
                raise ValueError(f"AttributeProto has no field {field!r}")
            setattr(self, field, v)

    def WhichOneof(self, group):
        if group != "value":
            raise ValueError(f"AttributeProto has no oneof {group!r}")
        return VALUE_FIELDS.get(self._kind)

    def HasField(self, field):
        if field == "value":
            return self._kind != 0
        return FIELD_KIND.get(field) == self._kind

    def __eq__(self, other):
        return (isinstance(other, AttributeProto) and self.name == other.name and
                self.doc_string == other.doc_string and self._kind == other._kind and self._value == other._value)

    __hash__ = None

    def __repr__(self):
        which = VALUE_FIELDS.get(self._kind)
        value = f", {which}={self._value!r}" if which else ""
        return f"AttributeProto(name={self.name!r}{value})"


def _value_property(kind):
    default = default_of(kind)
    if kind % 2 == 0:
        def get(self):
            return self._value if self._kind == kind else ValueList(())
    else:
        def get(self):
            return self._value if self._kind == kind else default

    def set_(self, v):
        if kind % 2 == 0 and not isinstance(v, ValueList):
            v = ValueList(getattr(v, "values", v))
        self._kind = kind
        self._value = v
    return property(get, set_)


for _kind, _field in VALUE_FIELDS.items():
    setattr(AttributeProto, _field, _value_property(_kind))
del _kind, _field

_new = object.__new__


def make_attr(name, doc, kind, value):
    """An AttributeProto without the keyword parsing (for read())."""
    a = _new(AttributeProto)
    a.name, a.doc_string, a._kind, a._value = name, doc, kind, value
    return a


class AttrList(list):
    """A repeated attribute field: a list with protobuf's ``add()``."""

    def add(self, **fields):
        a = AttributeProto(**fields)
        self.append(a)
        return a


class IOInfo:
    __slots__ = ("values", "shapes", "types")

    def __init__(self, values="", shapes="", types=""):
        self.values, self.shapes, self.types = values, shapes, types

    def __eq__(self, other):
        return (isinstance(other, IOInfo) and (self.values, self.shapes, self.types) ==
                (other.values, other.shapes, other.types))

    def __repr__(self):
        return f"IOInfo(values={self.values!r}, shapes={self.shapes!r}, types={self.types!r})"


class GlobalMetadata:
    __slots__ = ("version", "attr")

    def __init__(self, version="", attr=()):
        self.version = version
        self.attr = AttrList(attr)

    def __repr__(self):
        return f"GlobalMetadata(version={self.version!r}, attr={list(self.attr)!r})"


NODE_FIELDS = ("id", "name", "type", "ctrl_deps", "data_deps", "start_time_micros", "duration_micros",
               "inputs", "outputs", "attr")


class NodeBase:
    """What every node class shares: protobuf's HasField, equality by
    fields, a short repr."""
    __slots__ = ()

    def HasField(self, field):
        if field not in ("inputs", "outputs"):
            raise ValueError(f"Node has no presence for field {field!r}")
        return self._present(field)

    def __eq__(self, other):
        if not hasattr(other, "attr"):
            return NotImplemented
        for f in NODE_FIELDS:
            a, b = getattr(self, f), getattr(other, f)
            if f in ("ctrl_deps", "data_deps", "attr"):
                a, b = list(a), list(b)
            if a != b:
                return False
        return all(self.HasField(f) == other.HasField(f) for f in ("inputs", "outputs"))

    __hash__ = None

    def __repr__(self):
        return (f"Node(id={self.id!r}, name={self.name!r}, type={NodeType._by_value.get(self.type, self.type)}, "
                f"data_deps={list(self.data_deps)!r}, ctrl_deps={list(self.ctrl_deps)!r}, "
                f"duration_micros={self.duration_micros!r}, attr={list(self.attr)!r})")


def _io_property(slot):
    def get(self):
        v = getattr(self, slot)
        return IOInfo() if v is None else v

    def set_(self, v):
        setattr(self, slot, v)
    return property(get, set_)


class Node(NodeBase):
    """One node, with the reference class's fields. ``inputs`` and
    ``outputs`` read as an empty IOInfo when absent, as in protobuf;
    ``HasField`` tells."""
    __slots__ = ("id", "name", "type", "ctrl_deps", "data_deps", "start_time_micros", "duration_micros",
                 "_inputs", "_outputs", "attr")

    def __init__(self, id=0, name="", type=0, ctrl_deps=(), data_deps=(), start_time_micros=0,
                 duration_micros=0, inputs=None, outputs=None, attr=()):
        self.id, self.name, self.type = id, name, type
        self.ctrl_deps, self.data_deps = list(ctrl_deps), list(data_deps)
        self.start_time_micros, self.duration_micros = start_time_micros, duration_micros
        self._inputs, self._outputs = inputs, outputs
        self.attr = AttrList(attr)

    inputs = _io_property("_inputs")
    outputs = _io_property("_outputs")

    def _present(self, field):
        return getattr(self, "_" + field) is not None

    def ClearField(self, field):
        slot = "_" + field if field in ("inputs", "outputs") else field
        setattr(self, slot, getattr(Node(), slot))
