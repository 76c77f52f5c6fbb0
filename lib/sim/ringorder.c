/* ringorder.c - agreed service order per ring; see ringorder.h. */
#include "ringorder.h"

#include <stdlib.h>
#include <string.h>

#include "../util/hmap.h"
#include "../util/vec.h"

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
  ro_log **logs;
  size_t n, cap;
  hmap idx;                /* key -> index into logs */
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
  for (size_t i = 0; i < t->n; i++) log_free(t->logs[i]);
  free(t->logs);
  hmap_free(&t->idx);
  free(t);
}

ro_log *ro_get(ro_table *t, uint64_t key, uint32_t n) {
  uint32_t i = hmap_get_u64(&t->idx, key);
  if (i != HMAP_NONE) return t->logs[i];
  if (t->n >= UINT32_MAX - 1 || VEC_ROOM(t->logs, t->n, t->cap, 1)) return NULL;
  ro_log *l = calloc(1, sizeof *l);
  if (l) l->next = calloc(n ? n : 1, sizeof *l->next);
  int oom = !l || !l->next;
  if (!oom) hmap_put_u64(&t->idx, key, (uint32_t)t->n, &oom);
  if (oom) {
    log_free(l);
    return NULL;
  }
  l->key = key;
  l->n = n;
  t->logs[t->n++] = l;
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
