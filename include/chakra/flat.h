/* flat.h - a whole trace as flat arrays, read in one call and written in
 * one call: every field of every node in columns, every string in one
 * buffer, every attribute in one table. No protobuf type appears, so a
 * language binding (python/chakra_c uses ctypes) or a columnar analysis
 * reads a trace without decoding messages itself.
 *
 * Layout. Strings are numbered: string s is the bytes
 * strings[str_off[s] .. str_off[s+1]) (not NUL-terminated); string 0 is
 * always "" and stands for an empty or absent string. Per-node lists are
 * CSR: node i's data deps are data_deps[data_dep_off[i] .. data_dep_off[i+1]),
 * likewise ctrl deps and attributes. The GlobalMetadata's attributes are
 * the table's first n_meta_attrs rows (attr_off[0] == n_meta_attrs).
 *
 * An attribute row holds its name and doc_string (string indexes), its
 * kind (the AttributeProto value field number, CHAKRA_AV_*; 0 = no value)
 * and its value in one 64-bit cell: a signed integer kind as int64 two's
 * complement, an unsigned one as is, bool 0 or 1, double and float as the
 * bits of a double (a float is widened exactly), string and bytes as a
 * string index. A list kind's cell is the index of its first element in
 * values[] and attr_count its length; elements are cells of the same
 * encoding (a string or bytes list's elements are string indexes). A
 * scalar's attr_count is 1, a row without a value has 0.
 *
 * Reading fills a chakra_flat the library owns (chakra_flat_free());
 * writing takes one the caller filled, borrowing its arrays for the call,
 * checks it (every offset, index and kind; a value that does not fit its
 * kind) and writes the trace all or nothing. Ownership and errors follow
 * docs/library.md. */
#ifndef CHAKRA_FLAT_H
#define CHAKRA_FLAT_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/export.h"
#include "chakra/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Attribute value kinds: AttributeProto's value field numbers. */
enum chakra_attr_kind {
  CHAKRA_AV_NONE = 0,
  CHAKRA_AV_DOUBLE = 3, CHAKRA_AV_DOUBLE_LIST = 4,
  CHAKRA_AV_FLOAT = 5, CHAKRA_AV_FLOAT_LIST = 6,
  CHAKRA_AV_INT32 = 7, CHAKRA_AV_INT32_LIST = 8,
  CHAKRA_AV_INT64 = 9, CHAKRA_AV_INT64_LIST = 10,
  CHAKRA_AV_UINT32 = 11, CHAKRA_AV_UINT32_LIST = 12,
  CHAKRA_AV_UINT64 = 13, CHAKRA_AV_UINT64_LIST = 14,
  CHAKRA_AV_SINT32 = 15, CHAKRA_AV_SINT32_LIST = 16,
  CHAKRA_AV_SINT64 = 17, CHAKRA_AV_SINT64_LIST = 18,
  CHAKRA_AV_FIXED32 = 19, CHAKRA_AV_FIXED32_LIST = 20,
  CHAKRA_AV_FIXED64 = 21, CHAKRA_AV_FIXED64_LIST = 22,
  CHAKRA_AV_SFIXED32 = 23, CHAKRA_AV_SFIXED32_LIST = 24,
  CHAKRA_AV_SFIXED64 = 25, CHAKRA_AV_SFIXED64_LIST = 26,
  CHAKRA_AV_BOOL = 27, CHAKRA_AV_BOOL_LIST = 28,
  CHAKRA_AV_STRING = 29, CHAKRA_AV_STRING_LIST = 30,
  CHAKRA_AV_BYTES = 31, CHAKRA_AV_BYTES_LIST = 32
};

/* Bits of chakra_flat.io: which of a node's IOInfo messages are present. */
enum { CHAKRA_FLAT_INPUTS = 1u << 0, CHAKRA_FLAT_OUTPUTS = 1u << 1 };

typedef struct chakra_flat {
  /* The GlobalMetadata. */
  uint64_t version;                  /* string index */
  uint64_t n_meta_attrs;
  /* Nodes, in file order. */
  uint64_t n;
  const uint64_t *id, *start_time_micros, *duration_micros;
  const int32_t *type;               /* NodeType wire value (may be outside the schema) */
  const uint64_t *name;              /* string index */
  const uint64_t *data_dep_off, *data_deps; /* n + 1 offsets; ids */
  const uint64_t *ctrl_dep_off, *ctrl_deps;
  const uint64_t *attr_off;          /* n + 1 offsets into the attribute rows */
  /* inputs and outputs: NULL when no node has either. io[i] holds
   * CHAKRA_FLAT_* bits; io_strings[6i .. 6i+6) the string indexes of
   * inputs.values, .shapes, .types, outputs.values, .shapes, .types. */
  const uint8_t *io;
  const uint64_t *io_strings;
  /* Attribute rows. */
  uint64_t n_attrs;
  const uint64_t *attr_name, *attr_doc; /* string indexes */
  const int32_t *attr_kind;          /* CHAKRA_AV_* */
  const uint64_t *attr_value, *attr_count;
  /* List elements. */
  uint64_t n_values;
  const uint64_t *values;
  /* Strings. */
  uint64_t n_strings;
  const uint64_t *str_off;           /* n_strings + 1 offsets */
  const char *strings;
  /* With CHAKRA_FLAT_STD: the standard attributes resolved per node with
   * the format's tolerance rules (chakra/attr.h): present (CHAKRA_HAS_*
   * bits), is_cpu_op 0/1, comm_type (-1 when absent or not a collective),
   * comm_size, num_ops, tensor_size (0 when absent), comm_src, comm_dst,
   * comm_tag (-1 when absent), pg_name (string index). NULL otherwise;
   * ignored by the writers. */
  const uint32_t *std_present;
  const uint8_t *std_is_cpu_op;
  const int64_t *std_comm_type;
  const uint64_t *std_comm_size, *std_num_ops, *std_tensor_size;
  const int32_t *std_comm_src, *std_comm_dst, *std_comm_tag;
  const uint64_t *std_pg_name;
  /* What reading saw: fields of a newer schema, which have no column and
   * are not written back (a warning went to diag for the first). */
  uint64_t unknown_fields;
} chakra_flat;

/* What to read; every field may be zero. */
enum {
  CHAKRA_FLAT_NO_ATTRS = 1u << 0, /* no attribute rows (attr_off NULL) */
  CHAKRA_FLAT_NO_IO = 1u << 1,    /* no inputs and outputs */
  CHAKRA_FLAT_STD = 1u << 2       /* the std_* columns */
};
typedef struct chakra_flat_options {
  unsigned flags;                 /* CHAKRA_FLAT_* above */
  size_t max_message_size;        /* 0 = CHAKRA_DEFAULT_MAX_MESSAGE */
  chakra_diag_fn diag;            /* warnings: unreadable standard attributes, unknown fields; may be NULL */
  void *diag_ctx;
} chakra_flat_options;

/* Reads the trace at path ("-" = standard input; gzip detected) or from
 * in (chakra/stream.h). opt may be NULL. On failure *out is NULL and err
 * names the file and offset. Free the result with chakra_flat_free(). */
CHAKRA_API int chakra_flat_read(chakra_flat **out, const char *path, const chakra_flat_options *opt,
                                chakra_error *err);
CHAKRA_API int chakra_flat_read_input(chakra_flat **out, const chakra_input *in, const chakra_flat_options *opt,
                                      chakra_error *err);
/* Frees what chakra_flat_read() returned. NULL is allowed. */
CHAKRA_API void chakra_flat_free(chakra_flat *f);

/* The strings index[0 .. n) each followed by sep, in out: the fast way
 * for a binding to make n strings at once (one buffer to split on sep).
 * *len receives the bytes needed; out (size bytes, may be NULL) is filled
 * only when they fit. CHAKRA_EINVAL when an index is not a string of f, or
 * when one of the strings holds sep (choose another). */
CHAKRA_API int chakra_flat_join(const chakra_flat *f, const uint64_t *index, uint64_t n, char sep, char *out,
                                uint64_t size, uint64_t *len, chakra_error *err);

/* Writes f as a trace to path, atomically (a name ending in .gz is
 * compressed), or to a sink. f is checked first: a bad offset or index, an
 * unknown kind, a value outside its kind (int32_val 2^31), a NUL inside a
 * string field (protobuf strings cannot hold one here) is CHAKRA_EINVAL
 * naming the node (by index and id) and the field, with nothing written.
 * The std_* columns and unknown_fields are ignored. The bytes are those
 * protobuf-c packs for the same messages, so a trace read and written
 * back unchanged is the same file. */
CHAKRA_API int chakra_flat_write(const chakra_flat *f, const char *path, chakra_error *err);
CHAKRA_API int chakra_flat_write_to(const chakra_flat *f, const chakra_sink *out, chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
