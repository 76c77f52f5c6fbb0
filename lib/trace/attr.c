/* attr.c - standard attribute resolution; see include/chakra/attr.h. */
#include "chakra/attr.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef ChakraProtoMsg__AttributeProto__ValueCase vcase;

const chakra_attr *chakra_attr_find(const chakra_node *node, const char *name) {
  for (size_t i = 0; i < node->n_attr; i++)
    if (node->attr[i]->name && strcmp(node->attr[i]->name, name) == 0) return node->attr[i];
  return NULL;
}

int chakra_attr_as_int(const chakra_attr *a, int64_t *out, int *from_double) {
  *from_double = 0;
  switch ((int)a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: *out = a->int32_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: *out = a->int64_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: *out = a->uint32_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL: *out = a->sint32_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL: *out = a->sint64_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED32_VAL: *out = a->fixed32_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED32_VAL: *out = a->sfixed32_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED64_VAL: *out = a->sfixed64_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL: *out = a->bool_val ? 1 : 0; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL:
      if (a->uint64_val > INT64_MAX) return -1;
      *out = (int64_t)a->uint64_val;
      return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED64_VAL:
      if (a->fixed64_val > INT64_MAX) return -1;
      *out = (int64_t)a->fixed64_val;
      return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL:
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FLOAT_VAL: {
      double d = a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL ? a->double_val
                                                                                   : a->float_val;
      if (!(d == floor(d)) || d < -9.2e18 || d > 9.2e18) return -1;
      *out = (int64_t)d;
      *from_double = 1;
      return 0;
    }
    default:
      return -1;
  }
}

typedef struct resolver {
  chakra_diag_fn diag;
  void *ctx;
  uint64_t node_id;
  int errors;
} resolver;

static void report(resolver *rs, chakra_severity sev, const char *name, const char *what) {
  if (sev >= CHAKRA_SEV_ERROR) rs->errors++;
  if (!rs->diag) return;
  chakra_problem p = chakra_problem_make(sev, what);
  p.has_node = 1;
  p.node_id = rs->node_id;
  p.field = name;
  rs->diag(rs->ctx, &p);
}

static const char *kind_name(const chakra_attr *a) {
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field(a->base.descriptor, (unsigned)a->value_case);
  return f ? f->name : "no value";
}

/* Reads an integer attribute within [lo, hi]; returns 1 if *out was set. */
static int read_int(resolver *rs, const chakra_attr *a, int64_t lo, int64_t hi, int64_t *out) {
  int from_double;
  char msg[128];
  if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE__NOT_SET) {
    report(rs, CHAKRA_SEV_WARNING, a->name, "present with no value; ignored");
    return 0;
  }
  if (chakra_attr_as_int(a, out, &from_double) != 0) {
    snprintf(msg, sizeof msg, "expected an integer, found %s", kind_name(a));
    report(rs, CHAKRA_SEV_ERROR, a->name, msg);
    return 0;
  }
  if (from_double) report(rs, CHAKRA_SEV_WARNING, a->name, "integral value stored as floating point");
  if (*out < lo || *out > hi) {
    snprintf(msg, sizeof msg, "value %lld out of range [%lld, %lld]", (long long)*out, (long long)lo,
             (long long)hi);
    report(rs, CHAKRA_SEV_ERROR, a->name, msg);
    return 0;
  }
  return 1;
}

static int read_uint(resolver *rs, const chakra_attr *a, uint64_t *out) {
  /* uint64 kinds above INT64_MAX are legal sizes; take them directly. */
  if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL) {
    *out = a->uint64_val;
    return 1;
  }
  if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED64_VAL) {
    *out = a->fixed64_val;
    return 1;
  }
  int64_t v;
  if (!read_int(rs, a, 0, INT64_MAX, &v)) return 0;
  *out = (uint64_t)v;
  return 1;
}

static void read_involved_dim(resolver *rs, const chakra_attr *a, chakra_std_attrs *o) {
  uint32_t mask = 0;
  size_t n = 0;
  if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_LIST) {
    n = a->bool_list->n_values;
    for (size_t i = 0; i < n && i < CHAKRA_MAX_DIMS; i++)
      if (a->bool_list->values[i]) mask |= 1u << i;
  } else if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_LIST ||
             a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST ||
             a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_LIST ||
             a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_LIST) {
    /* An integer list of 0/1 is accepted; the element width differs per kind. */
    for (size_t i = 0;; i++) {
      int64_t v;
      if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_LIST) {
        if (i >= (n = a->int32_list->n_values)) break;
        v = a->int32_list->values[i];
      } else if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST) {
        if (i >= (n = a->int64_list->n_values)) break;
        v = a->int64_list->values[i];
      } else if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_LIST) {
        if (i >= (n = a->uint32_list->n_values)) break;
        v = a->uint32_list->values[i];
      } else {
        if (i >= (n = a->uint64_list->n_values)) break;
        v = a->uint64_list->values[i] > 1 ? 2 : (int64_t)a->uint64_list->values[i];
      }
      if (v != 0 && v != 1) {
        report(rs, CHAKRA_SEV_ERROR, a->name, "integer list must hold only 0 and 1");
        return;
      }
      if (v && i < CHAKRA_MAX_DIMS) mask |= 1u << i;
    }
  } else {
    report(rs, CHAKRA_SEV_ERROR, a->name, "expected a bool list");
    return;
  }
  if (n > CHAKRA_MAX_DIMS) {
    report(rs, CHAKRA_SEV_ERROR, a->name, "more than 32 dimensions");
    return;
  }
  o->involved_dim = mask;
  o->n_involved_dim = (int)n;
  o->present |= CHAKRA_HAS_INVOLVED_DIM;
}

static void read_pg_name(resolver *rs, const chakra_attr *a, chakra_std_attrs *o) {
  if (a->value_case != CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL) {
    report(rs, CHAKRA_SEV_ERROR, a->name, "expected a string");
    return;
  }
  o->pg_name = a->string_val;
  o->present |= CHAKRA_HAS_PG_NAME;
}

/* Legacy STAGE comm_group (int32) stands for pg_name when that is absent. */
static void read_comm_group(resolver *rs, const chakra_attr *a, chakra_std_attrs *o) {
  int64_t v;
  if (o->present & CHAKRA_HAS_PG_NAME) return;
  if (!read_int(rs, a, INT32_MIN, INT32_MAX, &v)) return;
  snprintf(o->pg_buf, sizeof o->pg_buf, "%lld", (long long)v);
  o->pg_name = o->pg_buf;
  o->present |= CHAKRA_HAS_PG_NAME;
}

static void resolve_one(resolver *rs, const chakra_attr *a, chakra_std_attrs *o, uint32_t *seen) {
  const char *n = a->name ? a->name : "";
  int64_t v;
  uint32_t bit = 0;
  /* Dispatch on the name; the first occurrence of a name wins. */
#define ONCE(b)                                                                 \
  do {                                                                          \
    bit = (b);                                                                  \
    if (*seen & bit) {                                                          \
      report(rs, CHAKRA_SEV_WARNING, n, "duplicate attribute; first one used"); \
      return;                                                                   \
    }                                                                           \
    *seen |= bit;                                                               \
  } while (0)
  if (strcmp(n, "is_cpu_op") == 0) {
    ONCE(CHAKRA_HAS_IS_CPU_OP);
    if (read_int(rs, a, INT64_MIN, INT64_MAX, &v)) {
      o->is_cpu_op = v != 0;
      o->present |= bit;
    }
  } else if (strcmp(n, "comm_type") == 0) {
    ONCE(CHAKRA_HAS_COMM_TYPE);
    if (read_int(rs, a, INT32_MIN, INT32_MAX, &v)) o->comm_type = v, o->present |= bit;
  } else if (strcmp(n, "comm_size") == 0) {
    ONCE(CHAKRA_HAS_COMM_SIZE);
    if (read_uint(rs, a, &o->comm_size)) o->present |= bit;
  } else if (strcmp(n, "comm_src") == 0) {
    ONCE(CHAKRA_HAS_COMM_SRC);
    if (read_int(rs, a, INT32_MIN, INT32_MAX, &v)) o->comm_src = (int32_t)v, o->present |= bit;
  } else if (strcmp(n, "comm_dst") == 0) {
    ONCE(CHAKRA_HAS_COMM_DST);
    if (read_int(rs, a, INT32_MIN, INT32_MAX, &v)) o->comm_dst = (int32_t)v, o->present |= bit;
  } else if (strcmp(n, "comm_tag") == 0) {
    ONCE(CHAKRA_HAS_COMM_TAG);
    if (read_int(rs, a, INT32_MIN, INT32_MAX, &v)) o->comm_tag = (int32_t)v, o->present |= bit;
  } else if (strcmp(n, "comm_priority") == 0) {
    ONCE(CHAKRA_HAS_COMM_PRIORITY);
    if (read_int(rs, a, INT32_MIN, INT32_MAX, &v)) o->comm_priority = (int32_t)v, o->present |= bit;
  } else if (strcmp(n, "num_ops") == 0) {
    ONCE(CHAKRA_HAS_NUM_OPS);
    if (read_uint(rs, a, &o->num_ops)) o->present |= bit;
  } else if (strcmp(n, "tensor_size") == 0) {
    ONCE(CHAKRA_HAS_TENSOR_SIZE);
    if (read_uint(rs, a, &o->tensor_size)) o->present |= bit;
  } else if (strcmp(n, "pg_name") == 0) {
    ONCE(CHAKRA_HAS_PG_NAME);
    read_pg_name(rs, a, o);
  } else if (strcmp(n, "involved_dim") == 0) {
    ONCE(CHAKRA_HAS_INVOLVED_DIM);
    read_involved_dim(rs, a, o);
  }
#undef ONCE
}

int chakra_std_attrs_resolve(const chakra_node *node, chakra_std_attrs *out,
                             chakra_diag_fn diag, void *ctx) {
  memset(out, 0, sizeof *out);
  resolver rs = {.diag = diag, .ctx = ctx, .node_id = node->id};
  uint32_t seen = 0;
  const chakra_attr *comm_group = NULL;
  for (size_t i = 0; i < node->n_attr; i++) {
    const chakra_attr *a = node->attr[i];
    if (a->name && strcmp(a->name, "comm_group") == 0) {
      if (!comm_group) comm_group = a;
      continue;
    }
    resolve_one(&rs, a, out, &seen);
  }
  if (comm_group) read_comm_group(&rs, comm_group, out);
  return rs.errors ? CHAKRA_EFORMAT : CHAKRA_OK;
}

static const char *const node_types[] = {
    "INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE",
    "COMP_NODE",    "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"};
static const char *const comm_types[] = {
    "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER",  "SCATTER",
    "BROADCAST",  "ALL_TO_ALL",     "REDUCE_SCATTER",       "REDUCE_SCATTER_BLOCK", "BARRIER"};

const char *chakra_node_type_name(int v) {
  return v >= 0 && v < 8 ? node_types[v] : NULL;
}

const char *chakra_comm_type_name(int64_t v) {
  return v >= 0 && v < 10 ? comm_types[v] : NULL;
}

int chakra_comm_type_parse(const char *s) {
  for (int i = 0; i < 10; i++)
    if (strcasecmp(s, comm_types[i]) == 0) return i;
  return -1;
}
