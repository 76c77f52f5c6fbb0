/* store.h - where the ingest readers keep bytes and strings (private).
 *
 * bpool: an append-only byte pool in large chunks (no per-object header,
 * alignment only when asked), for the per-node blobs that live until the
 * output is written.
 * strtab: string interning; op names, schemas, kernel names and categories
 * repeat across nodes, so each distinct string is stored once and nodes
 * carry a 32-bit id (0 = no string). */
#ifndef CHAKRA_INGEST_STORE_H
#define CHAKRA_INGEST_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/hmap.h"

typedef struct bpool_chunk bpool_chunk;

typedef struct bpool {
  bpool_chunk *head;
  char *cur, *lim;
  size_t bytes;      /* held in chunks */
  size_t next_size;  /* chunks grow from 64 KiB to 2 MiB (huge pages) */
  int oom;
} bpool;

/* n bytes that stay valid until bpool_free(); NULL when out of memory. */
char *bpool_alloc(bpool *p, size_t n);
/* The same, 8-byte aligned, for arrays of integers or structs. */
void *bpool_alloc8(bpool *p, size_t n);
void bpool_free(bpool *p);

#define STRTAB_NONE 0u
#define STRTAB_OOM UINT32_MAX

typedef struct strtab {
  hmap ids; /* string -> id */
  const char **str;
  uint32_t *len;
  uint32_t n; /* ids 1..n are in use */
  uint32_t cap;
  bpool pool;
} strtab;

void strtab_init(strtab *t);
/* The id of s (added if new); STRTAB_OOM when out of memory. */
uint32_t strtab_intern(strtab *t, const char *s, size_t n);
/* The id of s if present, else STRTAB_NONE. */
uint32_t strtab_find(const strtab *t, const char *s, size_t n);
static inline const char *strtab_str(const strtab *t, uint32_t id) { return id ? t->str[id] : ""; }
static inline uint32_t strtab_len(const strtab *t, uint32_t id) { return id ? t->len[id] : 0; }
size_t strtab_memory(const strtab *t);
void strtab_free(strtab *t);

/* Sorts (key, index) pairs by key, stably (LSD radix on the key bits that
 * differ); -1 when out of memory. */
typedef struct store_kv {
  uint64_t k;
  uint32_t v;
} store_kv;
int store_sort_kv(store_kv *a, size_t n);
/* In a[0..m) sorted by key: the first pair whose key is not below key
 * (with duplicate keys, the earliest of the stable sort), and whether key
 * is present (*v = its index). */
size_t store_kv_lower_bound(const store_kv *a, size_t m, uint64_t key);
int store_kv_find(const store_kv *a, size_t m, uint64_t key, uint32_t *v);

#endif
