"""chakra_c: Chakra execution traces in Python through libchakra.

    import chakra_c
    metadata, nodes = chakra_c.read("trace.0.et")
    for node in nodes:
        if node.type == chakra_c.COMM_COLL_NODE:
            for a in node.attr:
                if a.name == "comm_size":
                    print(node.id, a.int64_val)
    cols = chakra_c.columns("trace.0.et")      # numpy arrays when numpy is there
    chakra_c.write("copy.0.et", metadata, nodes)
    chakra_c.validate("trace"), chakra_c.stats("trace"), chakra_c.simulate("trace", "sys.json", "net.yml")

Nodes carry the field names of the reference's protobuf classes
(et_def_pb2), so analysis code ports by changing its import. See
docs/python.md."""

from ._lib import ChakraError, library_version
from ._lib import path as library_path
from ._model import (AttributeProto, CollectiveCommType, GlobalMetadata, Has, IOInfo, Node, NodeType, ValueList)
from ._ops import simulate, stats, validate
from ._trace import NodeList, NodeView, Trace, columns, read, write
from ._version import __version__

# The enums' values as module constants, as et_def_pb2 has them.
for _enum in (NodeType, CollectiveCommType):
    globals().update(_enum.items())
del _enum

__all__ = ["read", "columns", "write", "validate", "stats", "simulate", "Trace", "Node", "NodeView", "NodeList",
           "GlobalMetadata", "AttributeProto", "IOInfo", "ValueList", "NodeType", "CollectiveCommType", "Has",
           "ChakraError", "library_path", "library_version", "__version__"] + NodeType.keys() + CollectiveCommType.keys()
