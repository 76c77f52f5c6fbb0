/* arena.c - bump allocator; see arena.h. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
  arena_block *next;
  size_t size;
  _Alignas(16) unsigned char data[];
};

static void *pb_alloc(void *data, size_t size) { return arena_alloc(data, size); }
static void pb_free(void *data, void *ptr) { (void)data; (void)ptr; }

void arena_init(arena *a, size_t default_block_size) {
  memset(a, 0, sizeof *a);
  a->default_size = default_block_size ? default_block_size : 64 * 1024;
  a->pb.alloc = pb_alloc;
  a->pb.free = pb_free;
  a->pb.allocator_data = a;
}

/* size is already rounded by arena_alloc(), unless beyond ARENA_MAX. */
void *arena_alloc_slow(arena *a, size_t size) {
  if (size > ARENA_MAX) {
    a->failed = 1;
    return NULL;
  }
  size_t bsize = size > a->default_size ? size : a->default_size;
  arena_block *b = malloc(sizeof *b + bsize);
  if (!b) {
    a->failed = 1;
    return NULL;
  }
  b->size = bsize;
  b->next = a->head;
  a->head = b;
  a->cur = b->data + size;
  a->lim = b->data + bsize;
  return b->data;
}

void arena_reset(arena *a) {
  arena_block *keep = a->head;
  if (keep && keep->next) {
    keep = NULL;
    for (arena_block *b = a->head; b;) {
      arena_block *next = b->next;
      if (!keep || b->size > keep->size) {
        if (keep) free(keep);
        keep = b;
      } else {
        free(b);
      }
      b = next;
    }
    keep->next = NULL;
  }
  a->head = keep;
  a->cur = keep ? keep->data : NULL;
  a->lim = keep ? keep->data + keep->size : NULL;
  a->failed = 0;
}

void arena_free(arena *a) {
  for (arena_block *b = a->head; b;) {
    arena_block *next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
  a->cur = a->lim = NULL;
}
