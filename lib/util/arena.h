/* arena.h - bump allocator (private to libchakra).
 *
 * Decoding a trace allocates many small objects per node that all die
 * together; an arena turns that into pointer bumps and one reset per node,
 * which keeps iteration in constant memory and off malloc's hot path. */
#ifndef CHAKRA_ARENA_H
#define CHAKRA_ARENA_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

typedef struct arena_block arena_block;

typedef struct arena {
  arena_block *head;   /* block being filled; older blocks follow */
  unsigned char *cur;  /* next free byte of head (NULL without a block) */
  unsigned char *lim;  /* end of head */
  size_t default_size; /* size of ordinary blocks */
  int failed;          /* an allocation failed since the last reset */
  ProtobufCAllocator pb; /* protobuf-c view of this arena */
} arena;

/* Larger requests fail (their rounding and block header would overflow). */
#define ARENA_MAX (SIZE_MAX / 2)

void arena_init(arena *a, size_t default_block_size);
/* Allocation that needs a new block (private to arena_alloc). */
void *arena_alloc_slow(arena *a, size_t size);

/* Returns 16-byte aligned memory, or NULL when out of memory. */
static inline void *arena_alloc(arena *a, size_t size) {
  /* A size within 15 of SIZE_MAX would round to a small one. */
  if (size > ARENA_MAX) return arena_alloc_slow(a, size);
  size = size ? (size + 15) & ~(size_t)15 : 16;
  if ((size_t)(a->lim - a->cur) < size) return arena_alloc_slow(a, size);
  void *p = a->cur;
  a->cur += size;
  return p;
}

/* Frees everything allocated since init but keeps the largest block, so a
 * steady stream of similar nodes never touches malloc again. */
void arena_reset(arena *a);
void arena_free(arena *a);

#endif
