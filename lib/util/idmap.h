/* idmap.h - map from 64-bit node ids to 32-bit array indexes (private to
 * libchakra). Ids are arbitrary (sparse, shared counters across files), so
 * the graph keeps nodes in arrays and maps ids through this.
 *
 * Two layouts, chosen at init from the ids themselves: when they are dense
 * (max - min < 2.5n, as producers number nodes) a plain array indexed by
 * id - min: one memory access per lookup and sequential ids touch
 * sequential memory; otherwise an open-addressing hash with linear probing
 * at load factor <= 3/4. Either way at most 10.7 bytes per node.
 *
 * Not hmap.h: that table keeps a 64-bit hash beside each value (12 bytes
 * a slot, 16 a node at its load), which the graph of a million-node rank
 * cannot afford; here a slot is the 4-byte index alone, the id being read
 * back from the caller's record, and the dense layout needs no hashing. */
#ifndef CHAKRA_IDMAP_H
#define CHAKRA_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#define IDMAP_NONE UINT32_MAX

/* The map stores only indexes; ids are read from the caller's records:
 * the id of index i is the uint64_t at base + i * stride. */
typedef struct idmap {
  uint32_t *slots;  /* node index, or IDMAP_NONE */
  size_t mask;      /* hash: capacity - 1 (a power of two); direct: max - min */
  uint64_t min;     /* direct: smallest id */
  int direct;       /* slots[id - min] instead of hashing */
  const unsigned char *base;
  size_t stride;
} idmap;

/* Sizes the table for the n records at base (their ids must be in place);
 * returns -1 when out of memory. */
int idmap_init(idmap *m, size_t n, const void *base, size_t stride);
/* Returns the index already holding idx's id (a duplicate), or IDMAP_NONE
 * after inserting idx. */
uint32_t idmap_insert(idmap *m, uint32_t idx);
uint32_t idmap_find(const idmap *m, uint64_t id);
/* Bytes held by the table. */
size_t idmap_memory(const idmap *m);
void idmap_free(idmap *m);

#endif
