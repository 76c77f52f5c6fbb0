/* test_attr.c - pins chakra_std_attrs_resolve(), the one place the
 * attribute-kind tolerance of spec section 4 and quirks 10-12 lives:
 * bools from any integer kind, integers of any kind with range checks,
 * integral doubles accepted with a warning, strings for numbers refused,
 * negative sizes refused, the first of duplicated names used (warned),
 * attributes with no value, involved_dim as bool or 0/1 integer list, and
 * the legacy STAGE comm_group standing in for pg_name. */
#include <stdio.h>

#include "chakra/attr.h"
#include "testutil.h"

typedef struct issues {
  int warnings, errors;
  char name[8][64];
  char what[8][256];
  int sev[8];
  int n;
} issues;

static void collect(void *ctx, const chakra_problem *p) {
  issues *is = ctx;
  if (p->severity == CHAKRA_SEV_ERROR) is->errors++;
  else is->warnings++;
  if (is->n < 8) {
    snprintf(is->name[is->n], sizeof is->name[0], "%s", p->field);
    snprintf(is->what[is->n], sizeof is->what[0], "%s", p->what);
    is->sev[is->n] = p->severity;
  }
  is->n++;
}

static chakra_attr a_none(const char *name) {
  chakra_attr a = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  a.name = (char *)name;
  return a;
}
#define ATTR(nm) a_none(nm)
static chakra_attr a_bool(const char *name, int v) {
  chakra_attr a = ATTR(name);
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
  a.bool_val = v;
  return a;
}
static chakra_attr a_i32(const char *name, int32_t v) {
  chakra_attr a = ATTR(name);
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL;
  a.int32_val = v;
  return a;
}
static chakra_attr a_i64(const char *name, int64_t v) {
  chakra_attr a = ATTR(name);
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
  a.int64_val = v;
  return a;
}
static chakra_attr a_u64(const char *name, uint64_t v) {
  chakra_attr a = ATTR(name);
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL;
  a.uint64_val = v;
  return a;
}
static chakra_attr a_sint64(const char *name, int64_t v) {
  chakra_attr a = ATTR(name);
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL;
  a.sint64_val = v;
  return a;
}
static chakra_attr a_double(const char *name, double v) {
  chakra_attr a = ATTR(name);
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL;
  a.double_val = v;
  return a;
}
static chakra_attr a_float(const char *name, float v) {
  chakra_attr a = ATTR(name);
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FLOAT_VAL;
  a.float_val = v;
  return a;
}
static chakra_attr a_str(const char *name, const char *v) {
  chakra_attr a = ATTR(name);
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
  a.string_val = (char *)v;
  return a;
}

/* Resolves the n attributes as one node's list. */
static int resolve(chakra_attr *attrs, size_t n, chakra_std_attrs *out, issues *is) {
  chakra_attr *ptrs[16];
  for (size_t i = 0; i < n; i++) ptrs[i] = &attrs[i];
  chakra_node node = CHAKRA_PROTO_MSG__NODE__INIT;
  node.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
  node.n_attr = n;
  node.attr = ptrs;
  memset(is, 0, sizeof *is);
  return chakra_std_attrs_resolve(&node, out, collect, is);
}

/* ---- is_cpu_op -------------------------------------------------------------- */

static void test_attr_is_cpu_op_from_bool(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr t[] = {a_bool("is_cpu_op", 1)};
  assert_int_equal(resolve(t, 1, &s, &is), CHAKRA_OK);
  assert_true(s.present & CHAKRA_HAS_IS_CPU_OP);
  assert_int_equal(s.is_cpu_op, 1);
  /* false is written on the wire (oneof) and reads as present, false */
  chakra_attr f[] = {a_bool("is_cpu_op", 0)};
  assert_int_equal(resolve(f, 1, &s, &is), CHAKRA_OK);
  assert_true(s.present & CHAKRA_HAS_IS_CPU_OP);
  assert_int_equal(s.is_cpu_op, 0);
  assert_int_equal(is.n, 0);
}

static void test_attr_is_cpu_op_from_int32_as_stage_writes_it(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr z[] = {a_i32("is_cpu_op", 0)};
  assert_int_equal(resolve(z, 1, &s, &is), CHAKRA_OK);
  assert_true(s.present & CHAKRA_HAS_IS_CPU_OP);
  assert_int_equal(s.is_cpu_op, 0);
  chakra_attr one[] = {a_i32("is_cpu_op", 1)};
  assert_int_equal(resolve(one, 1, &s, &is), CHAKRA_OK);
  assert_int_equal(s.is_cpu_op, 1);
  chakra_attr other[] = {a_i64("is_cpu_op", -7)}; /* any non-zero integer is true */
  assert_int_equal(resolve(other, 1, &s, &is), CHAKRA_OK);
  assert_int_equal(s.is_cpu_op, 1);
  assert_int_equal(is.n, 0);
}

static void test_attr_is_cpu_op_absent_is_false_and_not_present(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr none[] = {a_i64("comm_type", 0)};
  assert_int_equal(resolve(none, 1, &s, &is), CHAKRA_OK);
  assert_false(s.present & CHAKRA_HAS_IS_CPU_OP);
  assert_int_equal(s.is_cpu_op, 0);
}

static void test_attr_is_cpu_op_as_string_is_refused(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr t[] = {a_str("is_cpu_op", "true")};
  assert_int_equal(resolve(t, 1, &s, &is), CHAKRA_EFORMAT);
  assert_int_equal(is.errors, 1);
  assert_string_equal(is.name[0], "is_cpu_op");
  assert_false(s.present & CHAKRA_HAS_IS_CPU_OP);
}

/* ---- comm_size and other integers ------------------------------------------ */

static void test_attr_comm_size_from_int64_and_uint64(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr i[] = {a_i64("comm_size", 1048576)};
  assert_int_equal(resolve(i, 1, &s, &is), CHAKRA_OK);
  assert_true(s.present & CHAKRA_HAS_COMM_SIZE);
  assert_int_equal(s.comm_size, 1048576);
  /* uint64 sizes above INT64_MAX are legal sizes */
  chakra_attr u[] = {a_u64("comm_size", UINT64_MAX - 1)};
  assert_int_equal(resolve(u, 1, &s, &is), CHAKRA_OK);
  assert_true(s.comm_size == UINT64_MAX - 1);
  chakra_attr z[] = {a_sint64("comm_size", 4096)};
  assert_int_equal(resolve(z, 1, &s, &is), CHAKRA_OK);
  assert_int_equal(s.comm_size, 4096);
  assert_int_equal(is.n, 0);
}

static void test_attr_comm_size_integral_double_is_accepted_with_a_warning(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr d[] = {a_double("comm_size", 212480.0)};
  assert_int_equal(resolve(d, 1, &s, &is), CHAKRA_OK);
  assert_true(s.present & CHAKRA_HAS_COMM_SIZE);
  assert_int_equal(s.comm_size, 212480);
  assert_int_equal(is.warnings, 1);
  assert_int_equal(is.errors, 0);
  assert_string_equal(is.name[0], "comm_size");
  assert_contains(is.what[0], "floating point");
  chakra_attr f[] = {a_float("comm_size", 1024.0f)};
  assert_int_equal(resolve(f, 1, &s, &is), CHAKRA_OK);
  assert_int_equal(s.comm_size, 1024);
  assert_int_equal(is.warnings, 1);
}

static void test_attr_comm_size_non_integral_double_is_refused(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr d[] = {a_double("comm_size", 1.5)};
  assert_int_equal(resolve(d, 1, &s, &is), CHAKRA_EFORMAT);
  assert_false(s.present & CHAKRA_HAS_COMM_SIZE);
  assert_int_equal(is.errors, 1);
  assert_string_equal(is.name[0], "comm_size");
  chakra_attr nan[] = {a_double("comm_size", 0.0 / 0.0)};
  assert_int_equal(resolve(nan, 1, &s, &is), CHAKRA_EFORMAT);
  chakra_attr huge[] = {a_double("comm_size", 1e30)};
  assert_int_equal(resolve(huge, 1, &s, &is), CHAKRA_EFORMAT);
}

static void test_attr_string_for_a_number_is_refused_naming_the_attribute(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr t[] = {a_str("comm_size", "1048576")};
  assert_int_equal(resolve(t, 1, &s, &is), CHAKRA_EFORMAT);
  assert_int_equal(is.errors, 1);
  assert_int_equal(is.sev[0], CHAKRA_SEV_ERROR);
  assert_string_equal(is.name[0], "comm_size");
  assert_contains(is.what[0], "string_val");
  assert_false(s.present & CHAKRA_HAS_COMM_SIZE);
}

static void test_attr_negative_size_is_refused(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr t[] = {a_i64("comm_size", -1), a_i32("tensor_size", -5), a_i64("num_ops", -2)};
  assert_int_equal(resolve(t, 3, &s, &is), CHAKRA_EFORMAT);
  assert_int_equal(is.errors, 3);
  assert_false(s.present & (CHAKRA_HAS_COMM_SIZE | CHAKRA_HAS_TENSOR_SIZE | CHAKRA_HAS_NUM_OPS));
  assert_contains(is.what[0], "out of range");
}

static void test_attr_int32_fields_refuse_values_outside_int32(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr t[] = {a_i64("comm_src", (int64_t)INT32_MAX + 1), a_i64("comm_dst", 3),
                     a_i64("comm_tag", INT32_MIN), a_i32("comm_priority", 2)};
  assert_int_equal(resolve(t, 4, &s, &is), CHAKRA_EFORMAT);
  assert_int_equal(is.errors, 1);
  assert_string_equal(is.name[0], "comm_src");
  assert_false(s.present & CHAKRA_HAS_COMM_SRC);
  assert_true(s.present & CHAKRA_HAS_COMM_DST);
  assert_int_equal(s.comm_dst, 3);
  assert_int_equal(s.comm_tag, INT32_MIN);
  assert_int_equal(s.comm_priority, 2);
}

static void test_attr_comm_type_num_ops_tensor_size_from_any_integer_kind(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr t[] = {a_i32("comm_type", 7), a_u64("num_ops", 123456789012ull),
                     a_i64("tensor_size", 4096)};
  assert_int_equal(resolve(t, 3, &s, &is), CHAKRA_OK);
  assert_int_equal(s.comm_type, 7);
  assert_int_equal(s.num_ops, 123456789012ull);
  assert_int_equal(s.tensor_size, 4096);
  assert_int_equal(s.present, CHAKRA_HAS_COMM_TYPE | CHAKRA_HAS_NUM_OPS | CHAKRA_HAS_TENSOR_SIZE);
}

/* ---- duplicates and empty attributes --------------------------------------- */

static void test_attr_duplicate_name_first_wins_with_a_warning(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr t[] = {a_i64("comm_size", 100), a_bool("is_cpu_op", 0), a_i64("comm_size", 200),
                     a_bool("is_cpu_op", 1)};
  assert_int_equal(resolve(t, 4, &s, &is), CHAKRA_OK);
  assert_int_equal(s.comm_size, 100);
  assert_int_equal(s.is_cpu_op, 0);
  assert_int_equal(is.warnings, 2);
  assert_int_equal(is.errors, 0);
  assert_string_equal(is.name[0], "comm_size");
  assert_contains(is.what[0], "duplicate");
  assert_string_equal(is.name[1], "is_cpu_op");
}

static void test_attr_duplicate_after_an_unreadable_first_does_not_replace_it(void **state) {
  (void)state;
  /* FeederV3 uses the first occurrence; a bad first one is not rescued by a
   * good second one. */
  chakra_std_attrs s;
  issues is;
  chakra_attr t[] = {a_str("comm_size", "x"), a_i64("comm_size", 5)};
  assert_int_equal(resolve(t, 2, &s, &is), CHAKRA_EFORMAT);
  assert_false(s.present & CHAKRA_HAS_COMM_SIZE);
  assert_int_equal(is.errors, 1);
  assert_int_equal(is.warnings, 1);
}

static void test_attr_with_no_value_is_not_present_and_warned(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr t[] = {a_none("comm_size")};
  assert_int_equal(resolve(t, 1, &s, &is), CHAKRA_OK);
  assert_false(s.present & CHAKRA_HAS_COMM_SIZE);
  assert_int_equal(is.warnings, 1);
  assert_int_equal(is.errors, 0);
  assert_contains(is.what[0], "no value");
}

static void test_attr_stage_outputs_with_no_value_is_silent(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr t[] = {a_none("outputs"), a_none("inputs"), a_str("op_type", "M"),
                     a_i64("rf_id", 3)};
  assert_int_equal(resolve(t, 4, &s, &is), CHAKRA_OK);
  assert_int_equal(s.present, 0);
  assert_int_equal(is.n, 0);
}

/* ---- involved_dim ----------------------------------------------------------- */

static void test_attr_involved_dim_from_bool_list(void **state) {
  (void)state;
  protobuf_c_boolean v[] = {1, 0, 1};
  ChakraProtoMsg__BoolList bl = CHAKRA_PROTO_MSG__BOOL_LIST__INIT;
  bl.n_values = 3;
  bl.values = v;
  chakra_attr a = ATTR("involved_dim");
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_LIST;
  a.bool_list = &bl;
  chakra_std_attrs s;
  issues is;
  assert_int_equal(resolve(&a, 1, &s, &is), CHAKRA_OK);
  assert_true(s.present & CHAKRA_HAS_INVOLVED_DIM);
  assert_int_equal(s.n_involved_dim, 3);
  assert_int_equal(s.involved_dim, 0x5);
  /* [true] as in pytorch_converted.0.et */
  bl.n_values = 1;
  assert_int_equal(resolve(&a, 1, &s, &is), CHAKRA_OK);
  assert_int_equal(s.n_involved_dim, 1);
  assert_int_equal(s.involved_dim, 0x1);
}

static void test_attr_involved_dim_from_integer_lists_of_0_and_1(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  int32_t v32[] = {0, 1, 1, 0};
  ChakraProtoMsg__Int32List l32 = CHAKRA_PROTO_MSG__INT32_LIST__INIT;
  l32.n_values = 4;
  l32.values = v32;
  chakra_attr a = ATTR("involved_dim");
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_LIST;
  a.int32_list = &l32;
  assert_int_equal(resolve(&a, 1, &s, &is), CHAKRA_OK);
  assert_int_equal(s.n_involved_dim, 4);
  assert_int_equal(s.involved_dim, 0x6);
  int64_t v64[] = {1, 1};
  ChakraProtoMsg__Int64List l64 = CHAKRA_PROTO_MSG__INT64_LIST__INIT;
  l64.n_values = 2;
  l64.values = v64;
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST;
  a.int64_list = &l64;
  assert_int_equal(resolve(&a, 1, &s, &is), CHAKRA_OK);
  assert_int_equal(s.n_involved_dim, 2);
  assert_int_equal(s.involved_dim, 0x3);
  uint64_t vu[] = {0, 2};
  ChakraProtoMsg__Uint64List lu = CHAKRA_PROTO_MSG__UINT64_LIST__INIT;
  lu.n_values = 2;
  lu.values = vu;
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_LIST;
  a.uint64_list = &lu;
  assert_int_equal(resolve(&a, 1, &s, &is), CHAKRA_EFORMAT); /* 2 is not 0/1 */
  assert_false(s.present & CHAKRA_HAS_INVOLVED_DIM);
  assert_string_equal(is.name[0], "involved_dim");
}

static void test_attr_involved_dim_of_another_kind_is_refused(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr t[] = {a_i64("involved_dim", 1)};
  assert_int_equal(resolve(t, 1, &s, &is), CHAKRA_EFORMAT);
  assert_false(s.present & CHAKRA_HAS_INVOLVED_DIM);
  assert_contains(is.what[0], "bool list");
}

static void test_attr_involved_dim_over_32_dimensions_is_refused(void **state) {
  (void)state;
  protobuf_c_boolean v[33];
  for (int i = 0; i < 33; i++) v[i] = 1;
  ChakraProtoMsg__BoolList bl = CHAKRA_PROTO_MSG__BOOL_LIST__INIT;
  bl.n_values = 33;
  bl.values = v;
  chakra_attr a = ATTR("involved_dim");
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_LIST;
  a.bool_list = &bl;
  chakra_std_attrs s;
  issues is;
  assert_int_equal(resolve(&a, 1, &s, &is), CHAKRA_EFORMAT);
  assert_false(s.present & CHAKRA_HAS_INVOLVED_DIM);
  bl.n_values = 32;
  assert_int_equal(resolve(&a, 1, &s, &is), CHAKRA_OK);
  assert_int_equal(s.involved_dim, 0xffffffffu);
}

/* ---- pg_name and comm_group ------------------------------------------------- */

static void test_attr_pg_name_is_a_string(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr t[] = {a_str("pg_name", "3")};
  assert_int_equal(resolve(t, 1, &s, &is), CHAKRA_OK);
  assert_true(s.present & CHAKRA_HAS_PG_NAME);
  assert_string_equal(s.pg_name, "3");
  chakra_attr n[] = {a_i64("pg_name", 3)};
  assert_int_equal(resolve(n, 1, &s, &is), CHAKRA_EFORMAT);
  assert_false(s.present & CHAKRA_HAS_PG_NAME);
}

static void test_attr_legacy_comm_group_becomes_pg_name(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr t[] = {a_i32("comm_group", 2)};
  assert_int_equal(resolve(t, 1, &s, &is), CHAKRA_OK);
  assert_true(s.present & CHAKRA_HAS_PG_NAME);
  assert_string_equal(s.pg_name, "2");
  chakra_attr neg[] = {a_i32("comm_group", -12)};
  assert_int_equal(resolve(neg, 1, &s, &is), CHAKRA_OK);
  assert_string_equal(s.pg_name, "-12");
}

static void test_attr_pg_name_wins_over_comm_group_in_either_order(void **state) {
  (void)state;
  chakra_std_attrs s;
  issues is;
  chakra_attr a[] = {a_i32("comm_group", 2), a_str("pg_name", "7")};
  assert_int_equal(resolve(a, 2, &s, &is), CHAKRA_OK);
  assert_string_equal(s.pg_name, "7");
  chakra_attr b[] = {a_str("pg_name", "7"), a_i32("comm_group", 2)};
  assert_int_equal(resolve(b, 2, &s, &is), CHAKRA_OK);
  assert_string_equal(s.pg_name, "7");
  assert_int_equal(is.n, 0);
}

/* ---- helpers of attr.h ------------------------------------------------------ */

static void test_attr_find_returns_the_first_of_that_name(void **state) {
  (void)state;
  chakra_attr t[] = {a_i64("x", 1), a_i64("y", 2), a_i64("x", 3)};
  chakra_attr *ptrs[] = {&t[0], &t[1], &t[2]};
  chakra_node node = CHAKRA_PROTO_MSG__NODE__INIT;
  node.n_attr = 3;
  node.attr = ptrs;
  assert_ptr_equal(chakra_attr_find(&node, "x"), &t[0]);
  assert_ptr_equal(chakra_attr_find(&node, "y"), &t[1]);
  assert_null(chakra_attr_find(&node, "z"));
}

static void test_attr_as_int_reads_every_integer_kind_and_refuses_overflow(void **state) {
  (void)state;
  int64_t v;
  int from_double;
  chakra_attr a = a_u64("v", (uint64_t)INT64_MAX + 1);
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), -1);
  a = a_u64("v", 5);
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), 0);
  assert_int_equal(v, 5);
  a = a_double("v", -3.0);
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), 0);
  assert_int_equal(v, -3);
  assert_int_equal(from_double, 1);
  a = a_none("v");
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), -1);
  a = a_bool("v", 1);
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), 0);
  assert_int_equal(v, 1);
  /* the remaining integer kinds, each at a value that tells its sign handling */
  a = a_i32("v", INT32_MIN);
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), 0);
  assert_int_equal(v, INT32_MIN);
  assert_int_equal(from_double, 0);
  a = a_i64("v", INT64_MIN);
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), 0);
  assert_true(v == INT64_MIN);
  a = a_sint64("v", -7);
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), 0);
  assert_int_equal(v, -7);
  a = ATTR("v");
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL;
  a.uint32_val = UINT32_MAX;
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), 0);
  assert_int_equal(v, (int64_t)UINT32_MAX);
  a = ATTR("v");
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL;
  a.sint32_val = -9;
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), 0);
  assert_int_equal(v, -9);
  a = ATTR("v");
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED32_VAL;
  a.fixed32_val = UINT32_MAX;
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), 0);
  assert_int_equal(v, (int64_t)UINT32_MAX);
  a = ATTR("v");
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED32_VAL;
  a.sfixed32_val = -11;
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), 0);
  assert_int_equal(v, -11);
  a = ATTR("v");
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED64_VAL;
  a.sfixed64_val = -13;
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), 0);
  assert_int_equal(v, -13);
  a = ATTR("v");
  a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED64_VAL;
  a.fixed64_val = INT64_MAX;
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), 0);
  assert_true(v == INT64_MAX);
  a.fixed64_val = (uint64_t)INT64_MAX + 1;
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), -1);
  /* a float converts like a double; a fractional one and a string do not */
  a = a_float("v", 4.0f);
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), 0);
  assert_int_equal(v, 4);
  assert_int_equal(from_double, 1);
  a = a_double("v", 2.5);
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), -1);
  a = a_str("v", "5");
  assert_int_equal(chakra_attr_as_int(&a, &v, &from_double), -1);
}

static void test_attr_enum_names_match_the_schema(void **state) {
  (void)state;
  assert_string_equal(chakra_node_type_name(0), "INVALID_NODE");
  assert_string_equal(chakra_node_type_name(7), "COMM_COLL_NODE");
  assert_null(chakra_node_type_name(8));
  assert_null(chakra_node_type_name(-1));
  assert_null(chakra_node_type_name(99));
  assert_string_equal(chakra_comm_type_name(0), "ALL_REDUCE");
  assert_string_equal(chakra_comm_type_name(9), "BARRIER");
  assert_null(chakra_comm_type_name(10));
  assert_int_equal(chakra_comm_type_parse("all_gather"), 2);
  assert_int_equal(chakra_comm_type_parse("REDUCE_SCATTER"), 7);
  assert_int_equal(chakra_comm_type_parse("ring"), -1);
  /* the table agrees with the generated schema */
  for (int v = 0; v < 8; v++)
    assert_string_equal(chakra_node_type_name(v),
                        protobuf_c_enum_descriptor_get_value(&chakra_proto_msg__node_type__descriptor, v)->name);
  for (int v = 0; v < 10; v++)
    assert_string_equal(chakra_comm_type_name(v),
                        protobuf_c_enum_descriptor_get_value(&chakra_proto_msg__collective_comm_type__descriptor, v)->name);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_attr_is_cpu_op_from_bool),
      cmocka_unit_test(test_attr_is_cpu_op_from_int32_as_stage_writes_it),
      cmocka_unit_test(test_attr_is_cpu_op_absent_is_false_and_not_present),
      cmocka_unit_test(test_attr_is_cpu_op_as_string_is_refused),
      cmocka_unit_test(test_attr_comm_size_from_int64_and_uint64),
      cmocka_unit_test(test_attr_comm_size_integral_double_is_accepted_with_a_warning),
      cmocka_unit_test(test_attr_comm_size_non_integral_double_is_refused),
      cmocka_unit_test(test_attr_string_for_a_number_is_refused_naming_the_attribute),
      cmocka_unit_test(test_attr_negative_size_is_refused),
      cmocka_unit_test(test_attr_int32_fields_refuse_values_outside_int32),
      cmocka_unit_test(test_attr_comm_type_num_ops_tensor_size_from_any_integer_kind),
      cmocka_unit_test(test_attr_duplicate_name_first_wins_with_a_warning),
      cmocka_unit_test(test_attr_duplicate_after_an_unreadable_first_does_not_replace_it),
      cmocka_unit_test(test_attr_with_no_value_is_not_present_and_warned),
      cmocka_unit_test(test_attr_stage_outputs_with_no_value_is_silent),
      cmocka_unit_test(test_attr_involved_dim_from_bool_list),
      cmocka_unit_test(test_attr_involved_dim_from_integer_lists_of_0_and_1),
      cmocka_unit_test(test_attr_involved_dim_of_another_kind_is_refused),
      cmocka_unit_test(test_attr_involved_dim_over_32_dimensions_is_refused),
      cmocka_unit_test(test_attr_pg_name_is_a_string),
      cmocka_unit_test(test_attr_legacy_comm_group_becomes_pg_name),
      cmocka_unit_test(test_attr_pg_name_wins_over_comm_group_in_either_order),
      cmocka_unit_test(test_attr_find_returns_the_first_of_that_name),
      cmocka_unit_test(test_attr_as_int_reads_every_integer_kind_and_refuses_overflow),
      cmocka_unit_test(test_attr_enum_names_match_the_schema),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
