/* obfuscate.c - rewriting a trace without its names, strings, shapes and
 * (optionally) exact timings; see include/chakra/obfuscate.h.
 *
 * Each node is decoded, edited in place (names and strings replaced by
 * tokens allocated in a per-node arena, unwanted attributes unlinked) and
 * encoded again, so fields outside the schema survive as the format spec
 * requires for rewriting tools. All writing goes through put_node(). */
#include "chakra/obfuscate.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/arena.h"
#include "chakra/attr.h"
#include "chakra/node.h"
#include "keyhash.h"

#ifndef CHAKRA_VERSION
#define CHAKRA_VERSION "unknown"
#endif

typedef ChakraProtoMsg__AttributeProto attr_t;

void chakra_obfuscate_key(const void *data, size_t len, uint8_t key[16]) {
  static const uint8_t k0[16] = {'c', 'h', 'a', 'k', 'r', 'a', '-', 'o', 'b', 'f', 'u', 's', 'c', 'a', 't', 'e'};
  uint64_t a = keyhash_sip(k0, data, len);
  uint8_t k1[16];
  memcpy(k1, k0, 16);
  k1[0] ^= 1;
  uint64_t b = keyhash_sip(k1, data, len);
  memcpy(key, &a, 8);
  memcpy(key + 8, &b, 8);
}

/* The kind of node a name was, kept visible in the token. */
static void class_token(const chakra_node_class *c, char *out, size_t size) {
  static const char *const kinds[CHAKRA_KINDS] = {"comp", "comp_cpu", "coll", "send", "recv",
                                                  "mem_load", "mem_store", "metadata", "invalid", "node"};
  const char *t = c->kind == CHAKRA_KIND_COLL && c->comm_type >= 0 ? chakra_comm_type_name(c->comm_type) : kinds[c->kind];
  size_t i = 0;
  for (; t[i] && i + 1 < size; i++) out[i] = (char)tolower((unsigned char)t[i]);
  out[i] = 0;
}

static void name_token(const chakra_obfuscate_options *o, const chakra_node *n, const chakra_node_class *c, char *out,
                       size_t size) {
  if (!n->name || !n->name[0]) {
    if (size) out[0] = 0;
    return;
  }
  char cls[32];
  class_token(c, cls, sizeof cls);
  snprintf(out, size, "%s#%016llx", cls, (unsigned long long)keyhash_sip(o->key, n->name, strlen(n->name)));
}

void chakra_obfuscate_name(const chakra_obfuscate_options *o, const chakra_node *n, int is_cpu, char *out,
                           size_t size) {
  chakra_gnode g;
  chakra_std_attrs a;
  chakra_node_resolve(n, &g, &a, NULL, NULL);
  g.flags = (uint8_t)(is_cpu ? g.flags | CHAKRA_GNODE_CPU : g.flags & ~CHAKRA_GNODE_CPU);
  chakra_node_class c;
  chakra_node_classify(&g, 0, 0, &c);
  name_token(o, n, &c, out, size);
}

/* ---- one node ---- */

typedef struct obf {
  const chakra_obfuscate_options *o;
  chakra_obfuscate_stats *st;
  uint32_t rank;
  arena scratch;   /* tokens of the current node */
} obf;

static int kept(const obf *b, const char *name) {
  if (strcmp(name, "pg_name") == 0) return 1; /* the simulator matches groups by it */
  for (size_t i = 0; i < b->o->n_keep; i++)
    if (strcmp(b->o->keep[i], name) == 0) return 1;
  return 0;
}

static char *string_token(obf *b, const char *s) {
  char *t = arena_alloc(&b->scratch, 20);
  if (t) snprintf(t, 20, "s#%016llx", (unsigned long long)keyhash_sip(b->o->key, s, strlen(s)));
  return t;
}

static int hash_attr(obf *b, attr_t *a) {
  if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL) {
    return (a->string_val = string_token(b, a->string_val)) ? 0 : -1;
  }
  ChakraProtoMsg__StringList *l = a->string_list;
  if (!l) return 0;
  for (size_t i = 0; i < l->n_values; i++)
    if (!(l->values[i] = string_token(b, l->values[i]))) return -1;
  return 0;
}

static int is_stringish(int vc) {
  return vc == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL ||
         vc == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_LIST ||
         vc == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BYTES_VAL ||
         vc == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BYTES_LIST;
}

/* Multiplies a whole number of time units by factor, rounding, never below 0. */
static uint64_t scaled(uint64_t v, double factor) {
  double x = nearbyint((double)v * factor);
  return x <= 0 ? 0 : x >= 1.8e19 ? v : (uint64_t)x;
}

static int filter_attrs(obf *b, chakra_node *n, double factor) {
  static char empty[] = "";
  size_t k = 0;
  for (size_t i = 0; i < n->n_attr; i++) {
    attr_t *a = n->attr[i];
    if (kept(b, a->name)) {
      n->attr[k++] = a;
      continue;
    }
    a->doc_string = empty;
    if (is_stringish(a->value_case)) {
      int bytes = a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BYTES_VAL ||
                  a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BYTES_LIST;
      if (!b->o->hash_strings || bytes) {
        b->st->attrs_dropped++;
        continue;
      }
      if (hash_attr(b, a)) return -1;
      b->st->attrs_hashed++;
    } else if (factor != 1.0 && strcmp(a->name, "duration_ns") == 0) {
      if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL) a->uint64_val = scaled(a->uint64_val, factor);
      else if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL && a->int64_val > 0)
        a->int64_val = (int64_t)scaled((uint64_t)a->int64_val, factor);
    }
    n->attr[k++] = a;
  }
  n->n_attr = k;
  return 0;
}

/* Noise of one node: the same seed, rank and id give the same factor, so a
 * run is reproducible whatever the order of the work. */
static double noise_factor(const obf *b, uint64_t id) {
  if (b->o->time_noise_pct == 0) return 1.0;
  uint64_t h = hmap_mix(b->o->seed ^ hmap_mix(b->rank + 0x100000001ull) ^ hmap_mix(id ^ 0xabcdefull));
  double u = (double)(h >> 11) * 0x1.0p-53 * 2.0 - 1.0;
  return 1.0 + u * b->o->time_noise_pct / 100.0;
}

static int obfuscate_node(obf *b, chakra_node *n) {
  static char empty[] = "";
  chakra_gnode g;
  chakra_std_attrs a;
  chakra_node_resolve(n, &g, &a, NULL, NULL);
  chakra_node_class c;
  chakra_node_classify(&g, 0, 0, &c);
  char *name = arena_alloc(&b->scratch, 64);
  if (!name) return -1;
  name_token(b->o, n, &c, name, 64);
  n->name = name;
  double factor = noise_factor(b, n->id);
  if (factor != 1.0) {
    n->duration_micros = scaled(n->duration_micros, factor);
    n->start_time_micros = 0; /* exact starts would give the durations away */
    b->st->durations_noised++;
  }
  if (filter_attrs(b, n, factor)) return -1;
  /* The simulator reads PyTorch process groups from METADATA inputs. */
  if (c.kind == CHAKRA_KIND_METADATA && chakra_node_process_groups(n)) {
    n->inputs->shapes = empty;
    n->inputs->types = empty;
  } else if (n->inputs) {
    n->inputs = NULL;
    b->st->io_removed++;
  }
  if (n->outputs) {
    n->outputs = NULL;
    b->st->io_removed++;
  }
  if (n->base.n_unknown_fields) b->st->unknown_kept++;
  b->st->nodes++;
  return 0;
}

/* The one place obfuscated messages are written. */
static int put_message(chakra_writer *w, const ProtobufCMessage *m, chakra_error *err) {
  return chakra_writer_put(w, m, err);
}

/* Version and the schema attribute (the simulator reads it to know size
 * units) are kept; everything else in the GlobalMetadata (input files,
 * times, pids) is dropped, and the producer is named. */
static int put_metadata(chakra_writer *w, const chakra_metadata *in, chakra_error *err) {
  ChakraProtoMsg__GlobalMetadata md = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
  attr_t schema = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT, producer = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
  attr_t *attrs[2];
  md.version = in->version;
  md.attr = attrs;
  for (size_t i = 0; i < in->n_attr; i++)
    if (in->attr[i]->name && strcmp(in->attr[i]->name, "schema") == 0 &&
        in->attr[i]->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL) {
      schema.name = "schema";
      schema.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
      schema.string_val = in->attr[i]->string_val;
      attrs[md.n_attr++] = &schema;
      break;
    }
  producer.name = "producer";
  producer.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
  producer.string_val = "chakra-c " CHAKRA_VERSION " obfuscate";
  attrs[md.n_attr++] = &producer;
  return put_message(w, &md.base, err);
}

int chakra_obfuscate_stream(const char *in, chakra_writer *w, uint32_t rank, const chakra_obfuscate_options *o,
                            chakra_obfuscate_stats *st, chakra_error *err) {
  chakra_input input = {.path = in};
  return chakra_obfuscate_input(&input, w, rank, o, st, err);
}

/* Obfuscates what r reads into w; closes r. */
static int obfuscate_reader(chakra_reader *r, chakra_writer *w, uint32_t rank, const chakra_obfuscate_options *o,
                            chakra_obfuscate_stats *st, chakra_error *err) {
  const char *in = chakra_reader_path(r);
  chakra_obfuscate_stats local = {0};
  obf b = {.o = o, .st = st ? st : &local, .rank = rank};
  arena_init(&b.scratch, 4096);
  int rc = put_metadata(w, chakra_reader_metadata(r), err);
  chakra_node *n;
  while (!rc && (rc = chakra_reader_next(r, &n, err)) == 1) {
    arena_reset(&b.scratch);
    if (obfuscate_node(&b, n)) {
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", in);
      break;
    }
    rc = put_message(w, &n->base, err);
  }
  chakra_reader_close(r);
  arena_free(&b.scratch);
  return rc < 0 ? rc : 0;
}

int chakra_obfuscate_input(const chakra_input *input, chakra_writer *w, uint32_t rank, const chakra_obfuscate_options *o,
                           chakra_obfuscate_stats *st, chakra_error *err) {
  chakra_reader *r;
  int rc = chakra_reader_open_input(&r, input, NULL, err);
  return rc ? rc : obfuscate_reader(r, w, rank, o, st, err);
}

int chakra_obfuscate_set_rank(const chakra_set *s, uint32_t rank, chakra_writer *w, const chakra_obfuscate_options *o,
                              chakra_obfuscate_stats *st, chakra_error *err) {
  chakra_reader *r;
  int rc = chakra_set_reader(s, rank, NULL, &r, err);
  return rc ? rc : obfuscate_reader(r, w, rank, o, st, err);
}
