/* test_reader.c - pins the streaming .et reader (chakra_reader_*) at the
 * edges of the framing, spec section 1.4: what is a valid file (metadata
 * only, zero-length messages), what is an error and what the error names
 * (file, byte offset, message index, reason), gzip transparency (single and
 * concatenated members), and the wire tolerance of section 1.1 (unpacked
 * repeated fields, any field order, last scalar wins, unknown fields). Files
 * are made byte by byte in a temporary directory. */
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "testutil.h"

/* Writes b to tu_dir/name; returns the path (malloc'd). */
static char *put_file(const char *name, const tu_buf *b) {
  char *p = tu_join(tu_dir, name);
  tu_write_bytes(p, b->p, b->n);
  return p;
}

/* Reads every node; returns the final status (0 = clean end) and counts. */
static int read_all(const char *path, const chakra_reader_options *opt, uint64_t *nodes,
                    chakra_error *err) {
  chakra_reader *r;
  *nodes = 0;
  int rc = chakra_reader_open(&r, path, opt, err);
  if (rc) {
    assert_null(r);
    return rc;
  }
  chakra_node *n;
  while ((rc = chakra_reader_next(r, &n, err)) == 1) ++*nodes;
  chakra_reader_close(r);
  return rc;
}

/* The number after "offset " in an error message. */
static uint64_t offset_in(const char *msg) {
  const char *p = strstr(msg, "offset ");
  if (!p) fail_msg("no offset in \"%s\"", msg);
  return strtoull(p + 7, NULL, 10);
}

/* A node body: id, name. */
static void put_node_body(tu_buf *b, uint64_t id, const char *name) {
  if (id) {
    tu_put_tag(b, 1, 0);
    tu_put_varint(b, id);
  }
  if (name) {
    tu_put_tag(b, 2, 2);
    tu_put_varint(b, strlen(name));
    tu_put(b, name, strlen(name));
  }
}

static void put_node(tu_buf *b, uint64_t id, const char *name) {
  tu_buf body = {0};
  put_node_body(&body, id, name);
  tu_put_framed(b, body.p, body.n);
  tu_buf_free(&body);
}

/* gzip-compresses data as one member. */
static void gzip_member(tu_buf *out, const void *data, size_t n) {
  z_stream z;
  memset(&z, 0, sizeof z);
  assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  uLong bound = deflateBound(&z, n) + 32;
  uint8_t *tmp = malloc(bound);
  z.next_in = (Bytef *)data;
  z.avail_in = (uInt)n;
  z.next_out = tmp;
  z.avail_out = (uInt)bound;
  assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
  tu_put(out, tmp, bound - z.avail_out);
  deflateEnd(&z);
  free(tmp);
}

/* ---- valid files --------------------------------------------------------- */

static void test_reader_metadata_only_file_has_zero_nodes(void **state) {
  (void)state;
  tu_buf b = {0};
  tu_put_metadata(&b);
  char *p = put_file("meta_only.et", &b);
  chakra_error err = {0};
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, p, NULL, &err), CHAKRA_OK);
  assert_string_equal(chakra_reader_metadata(r)->version, "1.0.0");
  chakra_node *n = (chakra_node *)1;
  assert_int_equal(chakra_reader_next(r, &n, &err), 0);
  assert_null(n);
  assert_int_equal(chakra_reader_next(r, &n, &err), 0); /* end stays end */
  assert_int_equal(chakra_reader_offset(r), b.n);
  assert_int_equal(chakra_reader_is_gzip(r), 0);
  assert_string_equal(chakra_reader_path(r), p);
  chakra_reader_close(r);
  free(p);
  tu_buf_free(&b);
}

static void test_reader_empty_file_is_error_no_global_metadata(void **state) {
  (void)state;
  tu_buf b = {0};
  char *p = put_file("empty.et", &b);
  chakra_error err = {0};
  uint64_t n;
  assert_int_equal(read_all(p, NULL, &n, &err), CHAKRA_EFORMAT);
  assert_int_equal(err.code, CHAKRA_EFORMAT);
  assert_contains(err.msg, p);
  assert_contains(err.msg, "no GlobalMetadata");
  assert_contains(err.msg, "offset 0");
  free(p);
}

static void test_reader_zero_length_node_is_empty_node_id_0_invalid_type(void **state) {
  (void)state;
  tu_buf b = {0};
  tu_put_metadata(&b);
  tu_put_byte(&b, 0x00);  /* a Node of length 0 */
  put_node(&b, 7, "after");  /* and the file goes on */
  char *p = put_file("zero_len_node.et", &b);
  chakra_error err = {0};
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, p, NULL, &err), CHAKRA_OK);
  chakra_node *n;
  assert_int_equal(chakra_reader_next(r, &n, &err), 1);
  assert_int_equal(n->id, 0);
  assert_int_equal(n->type, CHAKRA_PROTO_MSG__NODE_TYPE__INVALID_NODE);
  assert_int_equal(n->n_attr, 0);
  assert_int_equal(n->n_data_deps + n->n_ctrl_deps, 0);
  assert_int_equal(chakra_reader_message_index(r), 1);
  assert_int_equal(chakra_reader_next(r, &n, &err), 1);
  assert_int_equal(n->id, 7);
  assert_string_equal(n->name, "after");
  assert_int_equal(chakra_reader_next(r, &n, &err), 0);
  chakra_reader_close(r);
  free(p);
  tu_buf_free(&b);
}

/* Quirk 1: the Python reader stops at a zero-length message; a file whose
 * all-default GlobalMetadata is empty must not look empty to us. */
static void test_reader_zero_length_global_metadata_does_not_end_the_stream(void **state) {
  (void)state;
  tu_buf b = {0};
  tu_put_byte(&b, 0x00);
  put_node(&b, 1, "a");
  put_node(&b, 2, "b");
  char *p = put_file("zero_len_meta.et", &b);
  chakra_error err = {0};
  uint64_t n;
  assert_int_equal(read_all(p, NULL, &n, &err), 0);
  assert_int_equal(n, 2);
  free(p);
  tu_buf_free(&b);
}

static void test_reader_tracks_message_offsets_and_indexes(void **state) {
  (void)state;
  tu_buf b = {0};
  tu_put_metadata(&b);
  uint64_t off[3];
  for (int i = 0; i < 3; i++) {
    off[i] = b.n;
    put_node(&b, 10 + i, i == 1 ? "a longer name to shift offsets" : "x");
  }
  char *p = put_file("offsets.et", &b);
  chakra_error err = {0};
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, p, NULL, &err), CHAKRA_OK);
  assert_int_equal(chakra_reader_message_offset(r), 0);
  assert_int_equal(chakra_reader_message_index(r), 0);
  chakra_node *n;
  for (int i = 0; i < 3; i++) {
    assert_int_equal(chakra_reader_next(r, &n, &err), 1);
    assert_int_equal(n->id, 10 + i);
    assert_int_equal(chakra_reader_message_offset(r), off[i]);
    assert_int_equal(chakra_reader_message_index(r), i + 1);
  }
  assert_int_equal(chakra_reader_offset(r), b.n);
  chakra_reader_close(r);
  free(p);
  tu_buf_free(&b);
}

/* Spec 1.1: readers accept unpacked repeated scalars, fields in any order,
 * repeated scalars (last wins) and unknown fields (skipped). */
static void test_reader_accepts_any_field_order_unpacked_deps_and_unknown_fields(void **state) {
  (void)state;
  tu_buf body = {0};
  tu_put_tag(&body, 3, 0);  /* type first */
  tu_put_varint(&body, 4);
  tu_put_tag(&body, 5, 0);  /* data_deps unpacked: 7, then 9 */
  tu_put_varint(&body, 7);
  tu_put_tag(&body, 1, 0);  /* id 1 ... */
  tu_put_varint(&body, 1);
  tu_put_tag(&body, 5, 0);
  tu_put_varint(&body, 9);
  tu_put_tag(&body, 99, 0); /* unknown varint field */
  tu_put_varint(&body, 12345);
  tu_put_tag(&body, 100, 2); /* unknown length-delimited field */
  tu_put_framed(&body, "zzz", 3);
  tu_put_tag(&body, 1, 0);  /* ... then id 42: the last one wins */
  tu_put_varint(&body, 42);
  tu_put_tag(&body, 5, 2);  /* and a packed run too: [11, 300] */
  tu_put_varint(&body, 3);
  tu_put_varint(&body, 11);
  tu_put_varint(&body, 300);
  tu_buf b = {0};
  tu_put_metadata(&b);
  tu_put_framed(&b, body.p, body.n);
  char *p = put_file("tolerant.et", &b);
  chakra_error err = {0};
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, p, NULL, &err), CHAKRA_OK);
  chakra_node *n;
  assert_int_equal(chakra_reader_next(r, &n, &err), 1);
  assert_int_equal(n->id, 42);
  assert_int_equal(n->type, CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE);
  assert_int_equal(n->n_data_deps, 4);
  assert_int_equal(n->data_deps[0], 7);
  assert_int_equal(n->data_deps[1], 9);
  assert_int_equal(n->data_deps[2], 11);
  assert_int_equal(n->data_deps[3], 300);
  assert_int_equal(n->base.n_unknown_fields, 2);
  assert_int_equal(chakra_reader_next(r, &n, &err), 0);
  chakra_reader_close(r);
  free(p);
  tu_buf_free(&b);
  tu_buf_free(&body);
}

/* Spec 2.2: proto3 enums are open; a type outside 0-7 is readable. */
static void test_reader_keeps_unknown_node_type_number(void **state) {
  (void)state;
  tu_buf body = {0};
  put_node_body(&body, 5, "odd");
  tu_put_tag(&body, 3, 0);
  tu_put_varint(&body, 99);
  tu_buf b = {0};
  tu_put_metadata(&b);
  tu_put_framed(&b, body.p, body.n);
  char *p = put_file("type99.et", &b);
  chakra_error err = {0};
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, p, NULL, &err), CHAKRA_OK);
  chakra_node *n;
  assert_int_equal(chakra_reader_next(r, &n, &err), 1);
  assert_int_equal((int)n->type, 99);
  chakra_reader_close(r);
  free(p);
  tu_buf_free(&b);
  tu_buf_free(&body);
}

static void test_reader_accepts_message_exactly_at_the_size_cap(void **state) {
  (void)state;
  tu_buf body = {0};
  put_node_body(&body, 1, "0123456789012345678901234567890123456789");
  tu_buf b = {0};
  tu_put_metadata(&b);
  tu_put_framed(&b, body.p, body.n);
  char *p = put_file("at_cap.et", &b);
  chakra_reader_options opt = {.max_message_size = body.n};
  chakra_error err = {0};
  uint64_t n;
  assert_int_equal(read_all(p, &opt, &n, &err), 0);
  assert_int_equal(n, 1);
  opt.max_message_size = body.n - 1;
  assert_int_equal(read_all(p, &opt, &n, &err), CHAKRA_EFORMAT);
  assert_contains(err.msg, p);
  assert_contains(err.msg, tu_fmt("offset %zu", (size_t)8));
  assert_contains(err.msg, "message 1");
  assert_contains(err.msg, tu_fmt("length %zu exceeds the limit of %zu", body.n, body.n - 1));
  free(p);
  tu_buf_free(&b);
  tu_buf_free(&body);
}

/* Messages bigger than the read chunk and the initial buffer, and many
 * small ones straddling chunk boundaries, come out intact. */
static void test_reader_handles_messages_larger_than_its_buffer(void **state) {
  (void)state;
  size_t big = 5u << 20;
  char *name = malloc(big + 1);
  for (size_t i = 0; i < big; i++) name[i] = (char)('a' + i % 26);
  name[big] = 0;
  tu_buf b = {0};
  tu_put_metadata(&b);
  for (uint64_t i = 1; i <= 20000; i++) {
    char small[256];
    size_t len = (size_t)(i * 37 % 200);
    memset(small, 'x', len);
    small[len] = 0;
    put_node(&b, i, i == 15000 ? name : small);
  }
  char *p = put_file("big.et", &b);
  chakra_error err = {0};
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, p, NULL, &err), CHAKRA_OK);
  chakra_node *n;
  for (uint64_t i = 1; i <= 20000; i++) {
    assert_int_equal(chakra_reader_next(r, &n, &err), 1);
    assert_int_equal(n->id, i);
    if (i == 15000) {
      assert_int_equal(strlen(n->name), big);
      assert_int_equal(memcmp(n->name, name, big), 0);
    } else {
      assert_int_equal(strlen(n->name), i * 37 % 200);
    }
  }
  assert_int_equal(chakra_reader_next(r, &n, &err), 0);
  chakra_reader_close(r);
  free(name);
  free(p);
  tu_buf_free(&b);
}

/* ---- framing errors -------------------------------------------------------- */

static void test_reader_reports_truncated_length_varint_with_offset_and_index(void **state) {
  (void)state;
  tu_buf b = {0};
  tu_put_metadata(&b);
  put_node(&b, 1, "a");
  size_t at = b.n;
  tu_put_byte(&b, 0x80);  /* "more bytes follow" - then end of file */
  char *p = put_file("trunc_varint.et", &b);
  chakra_error err = {0};
  uint64_t n;
  assert_int_equal(read_all(p, NULL, &n, &err), CHAKRA_EFORMAT);
  assert_int_equal(n, 1);
  assert_contains(err.msg, p);
  assert_int_equal(offset_in(err.msg), at);
  assert_contains(err.msg, "message 2");
  assert_contains(err.msg, "length varint truncated");
  free(p);
  tu_buf_free(&b);
}

static void test_reader_refuses_length_varint_longer_than_5_bytes(void **state) {
  (void)state;
  tu_buf b = {0};
  tu_put_metadata(&b);
  size_t at = b.n;
  /* 1 encoded in 6 bytes: valid protobuf in principle, but no length
   * prefix needs more than 5 and FeederV3 reads at most 5. */
  tu_put(&b, "\x81\x80\x80\x80\x80\x00", 6);
  tu_put_byte(&b, 0x08);
  char *p = put_file("long_varint.et", &b);
  chakra_error err = {0};
  uint64_t n;
  assert_int_equal(read_all(p, NULL, &n, &err), CHAKRA_EFORMAT);
  assert_int_equal(n, 0);
  assert_contains(err.msg, p);
  assert_int_equal(offset_in(err.msg), at);
  assert_contains(err.msg, "message 1");
  assert_contains(err.msg, "longer than 5 bytes");
  free(p);
  tu_buf_free(&b);
}

static void test_reader_refuses_length_of_2_pow_31_or_more(void **state) {
  (void)state;
  chakra_reader_options opt = {.max_message_size = SIZE_MAX}; /* only the 2^31 rule applies */
  const char *prefixes[] = {"\x80\x80\x80\x80\x08", "\xff\xff\xff\xff\x0f"};
  for (int i = 0; i < 2; i++) {
    tu_buf b = {0};
    tu_put_metadata(&b);
    tu_put(&b, prefixes[i], 5);
    tu_put(&b, "\x08\x01", 2);
    char *p = put_file("huge_len.et", &b);
    chakra_error err = {0};
    uint64_t n;
    assert_int_equal(read_all(p, &opt, &n, &err), CHAKRA_EFORMAT);
    assert_contains(err.msg, p);
    assert_int_equal(offset_in(err.msg), 8);
    assert_contains(err.msg, "message 1");
    assert_contains(err.msg, i == 0 ? "length 2147483648" : "length 4294967295");
    free(p);
    tu_buf_free(&b);
  }
}

static void test_reader_default_cap_refuses_a_corrupt_huge_length(void **state) {
  (void)state;
  tu_buf b = {0};
  tu_put_metadata(&b);
  tu_put(&b, "\xff\xff\xff\xff\x07", 5); /* 2^31 - 1 */
  char *p = put_file("cap.et", &b);
  chakra_error err = {0};
  uint64_t n;
  assert_int_equal(read_all(p, NULL, &n, &err), CHAKRA_EFORMAT);
  assert_contains(err.msg, "length 2147483647 exceeds the limit of 268435456 bytes");
  free(p);
  tu_buf_free(&b);
}

static void test_reader_reports_truncated_body_with_offset_and_missing_bytes(void **state) {
  (void)state;
  tu_buf body = {0};
  put_node_body(&body, 216, "a node whose body is cut short by the end of the file");
  tu_buf b = {0};
  tu_put_metadata(&b);
  put_node(&b, 1, "whole");
  size_t at = b.n;
  tu_put_varint(&b, body.n);
  tu_put(&b, body.p, 10);
  char *p = put_file("trunc_body.et", &b);
  chakra_error err = {0};
  uint64_t n;
  assert_int_equal(read_all(p, NULL, &n, &err), CHAKRA_EFORMAT);
  assert_int_equal(n, 1); /* the whole node before it was delivered */
  assert_contains(err.msg, p);
  assert_int_equal(offset_in(err.msg), at);
  assert_contains(err.msg, "message 2");
  assert_contains(err.msg, "truncated");
  /* The message states the declared length and what is left; the missing
   * count is their difference. */
  assert_contains(err.msg, tu_fmt("declares %zu bytes but only 10 remain", body.n));
  free(p);
  tu_buf_free(&b);
  tu_buf_free(&body);
}

static void test_reader_reports_truncated_metadata_as_message_0(void **state) {
  (void)state;
  tu_buf b = {0};
  tu_put(&b, "\x07\x0a\x05" "1.0", 6);
  char *p = put_file("trunc_meta.et", &b);
  chakra_error err = {0};
  uint64_t n;
  assert_int_equal(read_all(p, NULL, &n, &err), CHAKRA_EFORMAT);
  assert_contains(err.msg, "offset 0");
  assert_contains(err.msg, "message 0");
  assert_contains(err.msg, "declares 7 bytes but only 5 remain");
  free(p);
  tu_buf_free(&b);
}

/* ---- bodies that do not parse --------------------------------------------- */

/* Frames body as node message 1 after the metadata, reads, and returns the
 * error; *body_at receives the file offset of the body's first byte. */
static chakra_error read_bad_node(const char *name, const tu_buf *body, size_t *body_at) {
  tu_buf b = {0};
  tu_put_metadata(&b);
  tu_put_varint(&b, body->n);
  *body_at = b.n;
  tu_put(&b, body->p, body->n);
  char *p = put_file(name, &b);
  chakra_error err = {0};
  uint64_t n;
  assert_int_equal(read_all(p, NULL, &n, &err), CHAKRA_EFORMAT);
  assert_int_equal(err.code, CHAKRA_EFORMAT);
  assert_contains(err.msg, p);
  assert_contains(err.msg, "message 1 (Node)");
  free(p);
  tu_buf_free(&b);
  return err;
}

static void test_reader_reports_wrong_wire_type_with_offset_and_message_index(void **state) {
  (void)state;
  tu_buf body = {0};
  put_node_body(&body, 3, "ok");
  size_t field_at = body.n;
  tu_put_tag(&body, 7, 2); /* duration_micros is a varint, not length-delimited */
  tu_put_framed(&body, "\x01\x02", 2);
  size_t at;
  chakra_error err = read_bad_node("wire_type.et", &body, &at);
  assert_contains(err.msg, "duration_micros");
  assert_contains(err.msg, "wire type 2");
  assert_int_equal(offset_in(err.msg), at + field_at); /* the field's tag */
  tu_buf_free(&body);
}

static void test_reader_reports_fixed_width_wire_type_on_varint_field(void **state) {
  (void)state;
  tu_buf body = {0};
  tu_put_tag(&body, 1, 1); /* id as fixed64 */
  tu_put(&body, "\x01\x00\x00\x00\x00\x00\x00\x00", 8);
  size_t at;
  chakra_error err = read_bad_node("fixed_on_varint.et", &body, &at);
  assert_contains(err.msg, "'id'");
  assert_contains(err.msg, "wire type 1");
  assert_int_equal(offset_in(err.msg), at);
  tu_buf_free(&body);
}

static void test_reader_reports_length_past_end_inside_the_message(void **state) {
  (void)state;
  tu_buf body = {0};
  put_node_body(&body, 3, NULL);
  size_t field_at = body.n;
  tu_put_tag(&body, 2, 2);
  tu_put_varint(&body, 50); /* name says 50 bytes, 3 follow */
  tu_put(&body, "abc", 3);
  size_t at;
  chakra_error err = read_bad_node("len_past_end.et", &body, &at);
  assert_contains(err.msg, "'name'");
  assert_contains(err.msg, "length 50 runs past the end of the message");
  assert_int_equal(offset_in(err.msg), at + field_at);
  tu_buf_free(&body);
}

static void test_reader_reports_invalid_wire_type_7(void **state) {
  (void)state;
  tu_buf body = {0};
  put_node_body(&body, 3, NULL);
  size_t field_at = body.n;
  tu_put_tag(&body, 4, 7);
  tu_put_byte(&body, 0);
  size_t at;
  chakra_error err = read_bad_node("wire7.et", &body, &at);
  assert_contains(err.msg, "invalid wire type 7");
  assert_int_equal(offset_in(err.msg), at + field_at);
  tu_buf_free(&body);
}

static void test_reader_reports_bad_packed_run_at_its_field(void **state) {
  (void)state;
  tu_buf body = {0};
  put_node_body(&body, 3, NULL);
  size_t field_at = body.n;
  tu_put_tag(&body, 5, 2); /* data_deps packed: 5, then a varint cut short */
  tu_put_framed(&body, "\x05\x80\x80", 3);
  size_t at;
  chakra_error err = read_bad_node("packed_cut.et", &body, &at);
  assert_contains(err.msg, "'data_deps': packed varint runs past the end of the field");
  assert_int_equal(offset_in(err.msg), at + field_at);
  tu_buf_free(&body);
}

static void test_reader_reports_defect_inside_a_nested_attribute(void **state) {
  (void)state;
  tu_buf attr = {0};
  tu_put_tag(&attr, 1, 2);
  tu_put_framed(&attr, "comm_size", 9);
  size_t inner_at = attr.n;
  tu_put_tag(&attr, 9, 2); /* int64_val length-delimited */
  tu_put_framed(&attr, "\x05", 1);
  tu_buf body = {0};
  put_node_body(&body, 3, NULL);
  tu_put_tag(&body, 10, 2);
  tu_put_varint(&body, attr.n);
  size_t attr_at = body.n;
  tu_put(&body, attr.p, attr.n);
  size_t at;
  chakra_error err = read_bad_node("nested.et", &body, &at);
  assert_contains(err.msg, "int64_val");
  assert_int_equal(offset_in(err.msg), at + attr_at + inner_at);
  tu_buf_free(&attr);
  tu_buf_free(&body);
}

static void test_reader_reports_bad_global_metadata_as_message_0(void **state) {
  (void)state;
  tu_buf b = {0};
  tu_put(&b, "\x02\x08\x01", 3); /* version (a string) as a varint */
  char *p = put_file("bad_meta.et", &b);
  chakra_error err = {0};
  uint64_t n;
  assert_int_equal(read_all(p, NULL, &n, &err), CHAKRA_EFORMAT);
  assert_contains(err.msg, p);
  assert_contains(err.msg, "message 0 (GlobalMetadata)");
  assert_contains(err.msg, "'version'");
  assert_int_equal(offset_in(err.msg), 1);
  free(p);
  tu_buf_free(&b);
}

static void test_reader_open_of_missing_file_names_it(void **state) {
  (void)state;
  char *p = tu_join(tu_dir, "does-not-exist.et");
  chakra_error err = {0};
  chakra_reader *r = (chakra_reader *)1;
  assert_int_equal(chakra_reader_open(&r, p, NULL, &err), CHAKRA_EIO);
  assert_null(r);
  assert_contains(err.msg, p);
  assert_contains(err.msg, "cannot open");
  free(p);
}

/* ---- gzip ------------------------------------------------------------------- */

static void make_plain_trace(tu_buf *b, int nodes) {
  tu_put_metadata(b);
  for (int i = 1; i <= nodes; i++) put_node(b, (uint64_t)i, "node name that compresses well");
}

static void test_reader_reads_gzip_transparently(void **state) {
  (void)state;
  tu_buf plain = {0}, gz = {0};
  make_plain_trace(&plain, 500);
  gzip_member(&gz, plain.p, plain.n);
  char *p = put_file("trace.et", &gz); /* the name does not matter, the magic does */
  chakra_error err = {0};
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, p, NULL, &err), CHAKRA_OK);
  assert_int_equal(chakra_reader_is_gzip(r), 1);
  chakra_node *n;
  uint64_t count = 0;
  int rc;
  while ((rc = chakra_reader_next(r, &n, &err)) == 1) assert_int_equal(n->id, ++count);
  assert_int_equal(rc, 0);
  assert_int_equal(count, 500);
  assert_int_equal(chakra_reader_offset(r), plain.n); /* offsets are uncompressed */
  chakra_reader_close(r);
  free(p);
  tu_buf_free(&plain);
  tu_buf_free(&gz);
}

static void test_reader_reads_concatenated_gzip_members(void **state) {
  (void)state;
  tu_buf plain = {0}, gz = {0};
  make_plain_trace(&plain, 300);
  /* Cut in the middle of a message: members are a byte stream, not frames. */
  size_t cut1 = plain.n / 3 + 1, cut2 = 2 * plain.n / 3 + 2;
  gzip_member(&gz, plain.p, cut1);
  gzip_member(&gz, plain.p + cut1, cut2 - cut1);
  gzip_member(&gz, plain.p + cut2, plain.n - cut2);
  char *p = put_file("concat.et.gz", &gz);
  chakra_error err = {0};
  uint64_t n;
  assert_int_equal(read_all(p, NULL, &n, &err), 0);
  assert_int_equal(n, 300);
  free(p);
  tu_buf_free(&plain);
  tu_buf_free(&gz);
}

static void test_reader_refuses_garbage_after_gzip_member(void **state) {
  (void)state;
  tu_buf plain = {0}, gz = {0};
  make_plain_trace(&plain, 3);
  gzip_member(&gz, plain.p, plain.n);
  tu_put(&gz, "junk", 4);
  char *p = put_file("trailing.et.gz", &gz);
  chakra_error err = {0};
  uint64_t n;
  assert_int_not_equal(read_all(p, NULL, &n, &err), 0);
  assert_contains(err.msg, p);
  assert_contains(err.msg, "after the end of the gzip stream");
  free(p);
  tu_buf_free(&plain);
  tu_buf_free(&gz);
}

static void test_reader_reports_truncated_gzip_stream(void **state) {
  (void)state;
  tu_buf plain = {0}, gz = {0};
  make_plain_trace(&plain, 200);
  gzip_member(&gz, plain.p, plain.n);
  gz.n -= 12; /* lose the trailer and some data */
  char *p = put_file("cut.et.gz", &gz);
  chakra_error err = {0};
  uint64_t n;
  assert_int_equal(read_all(p, NULL, &n, &err), CHAKRA_EFORMAT);
  assert_contains(err.msg, p);
  assert_contains(err.msg, "truncated");
  assert_contains(err.msg, "offset");
  free(p);
  tu_buf_free(&plain);
  tu_buf_free(&gz);
}

static void test_reader_reports_corrupt_gzip_data(void **state) {
  (void)state;
  tu_buf plain = {0}, gz = {0};
  make_plain_trace(&plain, 200);
  gzip_member(&gz, plain.p, plain.n);
  for (size_t i = 20; i < 40; i++) gz.p[i] ^= 0x5a;
  char *p = put_file("corrupt.et.gz", &gz);
  chakra_error err = {0};
  uint64_t n;
  assert_int_not_equal(read_all(p, NULL, &n, &err), 0);
  assert_contains(err.msg, p);
  assert_contains(err.msg, "offset");
  free(p);
  tu_buf_free(&plain);
  tu_buf_free(&gz);
}

static void test_reader_one_byte_1f_file_is_not_taken_for_gzip(void **state) {
  (void)state;
  tu_buf b = {0};
  tu_put_byte(&b, 0x1f);
  char *p = put_file("one_byte.et", &b);
  chakra_error err = {0};
  uint64_t n;
  assert_int_equal(read_all(p, NULL, &n, &err), CHAKRA_EFORMAT);
  /* 0x1f: a 31-byte GlobalMetadata that is not there */
  assert_contains(err.msg, "truncated, declares 31 bytes but only 0 remain");
  free(p);
  tu_buf_free(&b);
}

/* ---- seeking ---------------------------------------------------------------- */

static void check_seek(const char *p) {
  chakra_error err = {0};
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, p, NULL, &err), CHAKRA_OK);
  uint64_t offs[50];
  chakra_node *n;
  for (int i = 0; i < 50; i++) {
    assert_int_equal(chakra_reader_next(r, &n, &err), 1);
    offs[i] = chakra_reader_message_offset(r);
  }
  int order[] = {17, 3, 49, 0, 17};
  for (int k = 0; k < 5; k++) {
    assert_int_equal(chakra_reader_seek(r, offs[order[k]], &err), 0);
    assert_int_equal(chakra_reader_next(r, &n, &err), 1);
    assert_int_equal(n->id, order[k] + 1);
    assert_int_equal(chakra_reader_message_offset(r), offs[order[k]]);
    /* Index 0 here is the first node: seeking back there restores indexes. */
    if (order[k] == 0) assert_int_equal(chakra_reader_message_index(r), 1);
    else assert_true(chakra_reader_message_index(r) == UINT64_MAX);
  }
  assert_int_equal(chakra_reader_next(r, &n, &err), 1);
  assert_true(chakra_reader_message_index(r) == UINT64_MAX);
  chakra_reader_close(r);
}

static void test_reader_seek_returns_to_a_message_in_plain_and_gzip_files(void **state) {
  (void)state;
  tu_buf plain = {0}, gz = {0};
  make_plain_trace(&plain, 50);
  gzip_member(&gz, plain.p, plain.n);
  char *p1 = put_file("seek.et", &plain);
  char *p2 = put_file("seek.et.gz", &gz);
  check_seek(p1);
  check_seek(p2);
  free(p1);
  free(p2);
  tu_buf_free(&plain);
  tu_buf_free(&gz);
}

static void test_reader_next_raw_hands_back_the_message_bytes(void **state) {
  (void)state;
  tu_buf body = {0};
  put_node_body(&body, 9, "raw");
  tu_buf b = {0};
  tu_put_metadata(&b);
  tu_put_framed(&b, body.p, body.n);
  char *p = put_file("raw.et", &b);
  chakra_error err = {0};
  chakra_reader *r;
  assert_int_equal(chakra_reader_open(&r, p, NULL, &err), CHAKRA_OK);
  const uint8_t *data;
  size_t len;
  assert_int_equal(chakra_reader_next_raw(r, &data, &len, &err), 1);
  assert_int_equal(len, body.n);
  assert_memory_equal(data, body.p, len);
  chakra_node *n = chakra_node_decode(data, len);
  assert_non_null(n);
  assert_int_equal(n->id, 9);
  chakra_node_free(n);
  chakra_node_free(NULL); /* allowed, like free() */
  assert_int_equal(chakra_reader_next_raw(r, &data, &len, &err), 0);
  chakra_reader_close(r);
  free(p);
  tu_buf_free(&b);
  tu_buf_free(&body);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reader_metadata_only_file_has_zero_nodes),
      cmocka_unit_test(test_reader_empty_file_is_error_no_global_metadata),
      cmocka_unit_test(test_reader_zero_length_node_is_empty_node_id_0_invalid_type),
      cmocka_unit_test(test_reader_zero_length_global_metadata_does_not_end_the_stream),
      cmocka_unit_test(test_reader_tracks_message_offsets_and_indexes),
      cmocka_unit_test(test_reader_accepts_any_field_order_unpacked_deps_and_unknown_fields),
      cmocka_unit_test(test_reader_keeps_unknown_node_type_number),
      cmocka_unit_test(test_reader_accepts_message_exactly_at_the_size_cap),
      cmocka_unit_test(test_reader_handles_messages_larger_than_its_buffer),
      cmocka_unit_test(test_reader_reports_truncated_length_varint_with_offset_and_index),
      cmocka_unit_test(test_reader_refuses_length_varint_longer_than_5_bytes),
      cmocka_unit_test(test_reader_refuses_length_of_2_pow_31_or_more),
      cmocka_unit_test(test_reader_default_cap_refuses_a_corrupt_huge_length),
      cmocka_unit_test(test_reader_reports_truncated_body_with_offset_and_missing_bytes),
      cmocka_unit_test(test_reader_reports_truncated_metadata_as_message_0),
      cmocka_unit_test(test_reader_reports_wrong_wire_type_with_offset_and_message_index),
      cmocka_unit_test(test_reader_reports_fixed_width_wire_type_on_varint_field),
      cmocka_unit_test(test_reader_reports_length_past_end_inside_the_message),
      cmocka_unit_test(test_reader_reports_invalid_wire_type_7),
      cmocka_unit_test(test_reader_reports_bad_packed_run_at_its_field),
      cmocka_unit_test(test_reader_reports_defect_inside_a_nested_attribute),
      cmocka_unit_test(test_reader_reports_bad_global_metadata_as_message_0),
      cmocka_unit_test(test_reader_open_of_missing_file_names_it),
      cmocka_unit_test(test_reader_reads_gzip_transparently),
      cmocka_unit_test(test_reader_reads_concatenated_gzip_members),
      cmocka_unit_test(test_reader_refuses_garbage_after_gzip_member),
      cmocka_unit_test(test_reader_reports_truncated_gzip_stream),
      cmocka_unit_test(test_reader_reports_corrupt_gzip_data),
      cmocka_unit_test(test_reader_one_byte_1f_file_is_not_taken_for_gzip),
      cmocka_unit_test(test_reader_seek_returns_to_a_message_in_plain_and_gzip_files),
      cmocka_unit_test(test_reader_next_raw_hands_back_the_message_bytes),
  };
  return cmocka_run_group_tests(tests, tu_dir_setup, tu_dir_teardown);
}
