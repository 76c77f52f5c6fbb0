/* live.c - see live.h. A doubly linked list of headers in front of each
 * block, so that a release costs two pointer writes. */
#include "live.h"

#include <stdalign.h>
#include <stdlib.h>

typedef struct live_hdr {
  alignas(max_align_t) struct live_hdr *prev;
  struct live_hdr *next;
} live_hdr;

void *live_alloc(live_list *l, size_t n) {
  live_hdr *h = calloc(1, sizeof *h + n);
  if (!h) return NULL;
  h->next = l->head;
  if (l->head) l->head->prev = h;
  l->head = h;
  return h + 1;
}

void live_release(live_list *l, void *p) {
  if (!p) return;
  live_hdr *h = (live_hdr *)p - 1;
  if (h->prev) h->prev->next = h->next;
  else l->head = h->next;
  if (h->next) h->next->prev = h->prev;
  free(h);
}

void live_free_all(live_list *l) {
  for (live_hdr *h = l->head, *nx; h; h = nx) {
    nx = h->next;
    free(h);
  }
  l->head = NULL;
}
