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

static arena_block *arena_grow(arena *a, size_t need) {
  size_t size = need > a->default_size ? need : a->default_size;
  arena_block *b = malloc(sizeof *b + size);
  if (!b) return NULL;
  b->size = size;
  b->next = a->head;
  a->head = b;
  a->used = 0;
  return b;
}

void *arena_alloc(arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  if (!a->head || a->head->size - a->used < size) {
    if (!arena_grow(a, size)) {
      a->failed = 1;
      return NULL;
    }
  }
  void *p = a->head->data + a->used;
  a->used += size;
  return p;
}

char *arena_strndup(arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

void arena_reset(arena *a) {
  arena_block *keep = NULL;
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
  if (keep) keep->next = NULL;
  a->head = keep;
  a->used = 0;
  a->failed = 0;
}

void arena_free(arena *a) {
  for (arena_block *b = a->head; b;) {
    arena_block *next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
  a->used = 0;
}
