/* ringorder.c - agreed service order per ring; see ringorder.h. */
#include "ringorder.h"
#include "../util/vec.h"

#include <stdlib.h>
#include <string.h>

typedef struct ro_entry {
  uint64_t tag;
  int32_t phase;
} ro_entry;

struct ro_log {
  uint64_t key;
  uint32_t n;              /* members */
  uint64_t base;           /* place of e[0]: every member is past the places before it */
  ro_entry *e;
  uint32_t len, cap;
  uint64_t *next;          /* per member: the place it runs next */
};

struct ro_table {
  ro_log **slot;           /* open addressing by key */
  size_t cap, used;
};

ro_table *ro_new(void) { return calloc(1, sizeof(ro_table)); }

static void log_free(ro_log *l) {
  if (!l) return;
  free(l->e);
  free(l->next);
  free(l);
}

void ro_free(ro_table *t) {
  if (!t) return;
  for (size_t i = 0; i < t->cap; i++) log_free(t->slot[i]);
  free(t->slot);
  free(t);
}

static size_t key_hash(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return (size_t)k;
}

static void put(ro_log **slot, size_t cap, ro_log *l) {
  size_t i = key_hash(l->key) & (cap - 1);
  while (slot[i]) i = (i + 1) & (cap - 1);
  slot[i] = l;
}

static int grow_table(ro_table *t) {
  size_t cap = t->cap ? t->cap * 2 : 64;
  ro_log **slot = calloc(cap, sizeof *slot);
  if (!slot) return -1;
  for (size_t i = 0; i < t->cap; i++)
    if (t->slot[i]) put(slot, cap, t->slot[i]);
  free(t->slot);
  t->slot = slot;
  t->cap = cap;
  return 0;
}

ro_log *ro_get(ro_table *t, uint64_t key, uint32_t n) {
  for (size_t i = t->cap ? key_hash(key) & (t->cap - 1) : 0; t->cap && t->slot[i]; i = (i + 1) & (t->cap - 1))
    if (t->slot[i]->key == key) return t->slot[i];
  if (4 * (t->used + 1) > 3 * t->cap && grow_table(t)) return NULL;
  ro_log *l = calloc(1, sizeof *l);
  if (l) l->next = calloc(n ? n : 1, sizeof *l->next);
  if (!l || !l->next) {
    log_free(l);
    return NULL;
  }
  l->key = key;
  l->n = n;
  put(t->slot, t->cap, l);
  t->used++;
  return l;
}

int ro_next(const ro_log *l, uint32_t m, uint64_t *tag, int *phase) {
  uint64_t p = l->next[m];
  if (p >= l->base + l->len) return 0;
  *tag = l->e[p - l->base].tag;
  *phase = l->e[p - l->base].phase;
  return 1;
}

/* Room for one more entry: the places every member is past go first. */
static int make_room(ro_log *l) {
  if (l->len < l->cap) return 0;
  uint64_t low = l->next[0];
  for (uint32_t m = 1; m < l->n; m++)
    if (l->next[m] < low) low = l->next[m];
  uint32_t drop = (uint32_t)(low - l->base);
  if (drop > 0) {
    memmove(l->e, l->e + drop, (size_t)(l->len - drop) * sizeof *l->e);
    l->len -= drop;
    l->base = low;
  }
  if (l->len < l->cap / 2) return 0; /* else grow: trimming a little each time would rescan every member */
  size_t cap = vec_next_cap(l->cap, (size_t)l->cap + 1, VEC_MIN_CAP, sizeof *l->e, UINT32_MAX);
  if (!cap || vec_resize(&l->e, cap, sizeof *l->e)) return -1;
  l->cap = (uint32_t)cap;
  return 0;
}

int ro_ran(ro_log *l, uint32_t m, uint64_t tag, int phase) {
  if (l->next[m] == l->base + l->len) {
    if (make_room(l)) return -1;
    l->e[l->len++] = (ro_entry){tag, phase};
  }
  l->next[m]++;
  return 0;
}
