/* idmap.h - open-addressing map from 64-bit node ids to 32-bit array indexes
 * (private to libchakra). Ids are arbitrary (sparse, shared counters across
 * files), so the graph keeps nodes in arrays and maps ids through this. */
#ifndef CHAKRA_IDMAP_H
#define CHAKRA_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#define IDMAP_NONE UINT32_MAX

/* The map stores only indexes; ids are read from the caller's records:
 * the id of index i is the uint64_t at base + i * stride. */
typedef struct idmap {
  uint32_t *slots;  /* node index, or IDMAP_NONE */
  size_t mask;      /* capacity - 1 (capacity is a power of two) */
  const unsigned char *base;
  size_t stride;
} idmap;

/* Sizes the table for n entries; returns -1 when out of memory. */
int idmap_init(idmap *m, size_t n, const void *base, size_t stride);
/* Returns the index already holding idx's id (a duplicate), or IDMAP_NONE
 * after inserting idx. */
uint32_t idmap_insert(idmap *m, uint32_t idx);
uint32_t idmap_find(const idmap *m, uint64_t id);
void idmap_free(idmap *m);

#endif
