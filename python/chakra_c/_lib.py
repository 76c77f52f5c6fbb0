"""Finding and loading libchakra.so, and the ctypes declarations of the C
entry points the package uses (include/chakra/flat.h, oneshot.h)."""

import ctypes
import ctypes.util
import os

from . import _builds, _version

_HERE = os.path.dirname(os.path.abspath(__file__))


class ChakraError(Exception):
    """A libchakra call failed: bad input, unreadable file, bad option.

    ``code`` is the library's status (a negative CHAKRA_E* value) and the
    message is the library's one line, naming the file and the place."""

    def __init__(self, message, code=-4):
        super().__init__(message)
        self.code = code


def _candidates():
    """Where libchakra.so may be, in the order tried (docs/python.md)."""
    env = os.environ.get("CHAKRA_LIB")
    if env:
        # A file, or a folder holding it: the user's choice wins.
        yield os.path.join(env, "libchakra.so") if os.path.isdir(env) else env
        return
    yield os.path.join(_HERE, "libchakra.so")  # bundled by pip install
    repo = os.path.dirname(os.path.dirname(_HERE))  # python/chakra_c -> the repository
    yield from _builds.libraries(repo)
    d = _HERE
    while True:  # an installed prefix: PREFIX/lib/python3*/...
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
        for libdir in ("lib", "lib64", os.path.join("lib", "x86_64-linux-gnu")):
            yield os.path.join(d, libdir, "libchakra.so")
    found = ctypes.util.find_library("chakra")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        return lib, path
    raise ImportError(
        "chakra_c: libchakra.so not found; build the project (cmake --build build) or set CHAKRA_LIB "
        "to the library or its folder. Tried: " + "; ".join(tried[:8]))


lib, path = _load()
lib.chakra_version.restype = ctypes.c_char_p
lib.chakra_version.argtypes = []
library_version = lib.chakra_version().decode()
# Before 1.0 every minor version is an ABI of its own (docs/library.md):
# the structures below are those of the package's MAJOR.MINOR.
if library_version.split(".")[:2] != _version.__version__.split(".")[:2]:
    raise ImportError(f"chakra_c {_version.__version__} needs libchakra {_version.__version__}, but {path} "
                      f"is {library_version}; set CHAKRA_LIB to a matching library")

u64p = ctypes.POINTER(ctypes.c_uint64)
i32p = ctypes.POINTER(ctypes.c_int32)
u32p = ctypes.POINTER(ctypes.c_uint32)
u8p = ctypes.POINTER(ctypes.c_uint8)
i64p = ctypes.POINTER(ctypes.c_int64)


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 1024)]


class Flat(ctypes.Structure):
    """chakra_flat (include/chakra/flat.h), field for field."""
    _fields_ = [
        ("version", ctypes.c_uint64), ("n_meta_attrs", ctypes.c_uint64),
        ("n", ctypes.c_uint64),
        ("id", u64p), ("start_time_micros", u64p), ("duration_micros", u64p),
        ("type", i32p), ("name", u64p),
        ("data_dep_off", u64p), ("data_deps", u64p), ("ctrl_dep_off", u64p), ("ctrl_deps", u64p),
        ("attr_off", u64p), ("io", u8p), ("io_strings", u64p),
        ("n_attrs", ctypes.c_uint64),
        ("attr_name", u64p), ("attr_doc", u64p), ("attr_kind", i32p), ("attr_value", u64p), ("attr_count", u64p),
        ("n_values", ctypes.c_uint64), ("values", u64p),
        ("n_strings", ctypes.c_uint64), ("str_off", u64p), ("strings", ctypes.c_void_p),
        ("std_present", u32p), ("std_is_cpu_op", u8p), ("std_comm_type", i64p),
        ("std_comm_size", u64p), ("std_num_ops", u64p), ("std_tensor_size", u64p),
        ("std_comm_src", i32p), ("std_comm_dst", i32p), ("std_comm_tag", i32p), ("std_pg_name", u64p),
        ("unknown_fields", ctypes.c_uint64),
    ]


class Problem(ctypes.Structure):
    _fields_ = [("severity", ctypes.c_int), ("file", ctypes.c_char_p), ("rank", ctypes.c_int64),
                ("has_node", ctypes.c_int), ("node_id", ctypes.c_uint64), ("has_offset", ctypes.c_int),
                ("offset", ctypes.c_uint64), ("line", ctypes.c_int64), ("field", ctypes.c_char_p),
                ("what", ctypes.c_char_p)]


DiagFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(Problem))
WriteFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


class FlatOptions(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint), ("max_message_size", ctypes.c_size_t), ("diag", DiagFn),
                ("diag_ctx", ctypes.c_void_p)]


class Sink(ctypes.Structure):
    _fields_ = [("file", ctypes.c_void_p), ("write", WriteFn), ("ctx", ctypes.c_void_p), ("name", ctypes.c_char_p)]


FLAT_NO_ATTRS, FLAT_NO_IO, FLAT_STD = 1, 2, 4

_err = ctypes.POINTER(Error)
lib.chakra_flat_read.argtypes = [ctypes.POINTER(ctypes.POINTER(Flat)), ctypes.c_char_p,
                                 ctypes.POINTER(FlatOptions), _err]
lib.chakra_flat_read.restype = ctypes.c_int
lib.chakra_flat_free.argtypes = [ctypes.POINTER(Flat)]
lib.chakra_flat_free.restype = None
lib.chakra_flat_write.argtypes = [ctypes.POINTER(Flat), ctypes.c_char_p, _err]
lib.chakra_flat_write.restype = ctypes.c_int
lib.chakra_flat_join.argtypes = [ctypes.POINTER(Flat), u64p, ctypes.c_uint64, ctypes.c_char, ctypes.c_char_p,
                                 ctypes.c_uint64, u64p, _err]
lib.chakra_flat_join.restype = ctypes.c_int
_strs = ctypes.POINTER(ctypes.c_char_p)
for _name in ("chakra_validate_json", "chakra_stats_json"):
    getattr(lib, _name).argtypes = [_strs, ctypes.c_uint32, _strs, ctypes.c_size_t, ctypes.POINTER(Sink), _err]
    getattr(lib, _name).restype = ctypes.c_int
lib.chakra_sim_json.argtypes = [_strs, ctypes.c_uint32, _strs, ctypes.c_size_t, ctypes.POINTER(Sink), DiagFn,
                                ctypes.c_void_p, _err]
lib.chakra_sim_json.restype = ctypes.c_int


def check(rc, err):
    if rc:
        raise ChakraError(err.msg.decode("utf-8", "replace"), rc)


def fspath(path):
    """A path argument as the bytes the C library takes."""
    return os.fsencode(os.fspath(path))


def strings(items):
    """A C array of char* from str/bytes/path items (kept alive by the caller)."""
    arr = (ctypes.c_char_p * max(len(items), 1))()
    for i, s in enumerate(items):
        arr[i] = s if isinstance(s, bytes) else fspath(s) if not isinstance(s, str) else s.encode()
    return arr


class Collector:
    """A sink that gathers what the library writes, for json.loads."""

    def __init__(self):
        self.parts = []
        self.fn = WriteFn(self._write)  # kept referenced while the call runs
        self.sink = Sink(None, self.fn, None, b"<python>")

    def _write(self, ctx, data, size):
        self.parts.append(ctypes.string_at(data, size))
        return 0

    def text(self):
        return b"".join(self.parts).decode("utf-8", "surrogateescape")
