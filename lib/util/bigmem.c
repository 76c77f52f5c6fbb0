/* bigmem.c - large arrays on transparent huge pages; see bigmem.h. */
#include "bigmem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE (2u << 20)
#define BIG_MIN (1u << 20)
#define HDR 64

/* Each big block starts with its header: the mapped length (0 = malloc). */
static size_t *hdr_of(void *p) { return (size_t *)((char *)p - HDR); }

static void *map_aligned(size_t len) {
  void *m = mmap(NULL, len + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  uintptr_t a = ((uintptr_t)m + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
  if (a > (uintptr_t)m) munmap(m, a - (uintptr_t)m);
  uintptr_t end = (uintptr_t)m + len + HUGE;
  if (end > a + len) munmap((void *)(a + len), end - (a + len));
#ifdef MADV_HUGEPAGE
  madvise((void *)a, len, MADV_HUGEPAGE);
#endif
  return (void *)a;
}

static void *bigmem_get(size_t n, int zero) {
  if (n > SIZE_MAX - HDR - HUGE) return NULL;
  if (n < BIG_MIN) {
    char *p = zero ? calloc(1, n + HDR) : malloc(n + HDR);
    if (!p) return NULL;
    ((size_t *)p)[0] = 0;
    ((size_t *)p)[1] = n;
    return p + HDR;
  }
  size_t len = (n + HDR + HUGE - 1) & ~(size_t)(HUGE - 1);
  char *p = map_aligned(len);
  if (!p) return NULL;
  *(size_t *)p = len;
  return p + HDR;
}

void *bigmem_alloc(size_t n) { return bigmem_get(n, 0); }
void *bigmem_calloc(size_t n) { return bigmem_get(n, 1); }

void *bigmem_realloc(void *p, size_t n) {
  if (!p) return bigmem_alloc(n);
  /* Beyond this, rounding to huge pages would wrap to a small length. */
  if (n > SIZE_MAX - HDR - HUGE) return NULL;
  size_t mapped = *hdr_of(p);
  if (mapped) {
    if (n + HDR <= mapped) return p;
    size_t len = (n + HDR + HUGE - 1) & ~(size_t)(HUGE - 1);
    char *base = (char *)p - HDR;
    char *q = mremap(base, mapped, len, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(q, len, MADV_HUGEPAGE);
#endif
    *(size_t *)q = len;
    return q + HDR;
  }
  if (n < BIG_MIN) {
    char *q = realloc((char *)p - HDR, n + HDR);
    if (!q) return NULL;
    ((size_t *)q)[1] = n;
    return q + HDR;
  }
  void *q = bigmem_alloc(n);
  if (!q) return NULL;
  size_t old = hdr_of(p)[1];
  memcpy(q, p, old < n ? old : n);
  free((char *)p - HDR);
  return q;
}

void bigmem_free(void *p) {
  if (!p) return;
  size_t mapped = *hdr_of(p);
  if (mapped) munmap((char *)p - HDR, mapped);
  else free((char *)p - HDR);
}
