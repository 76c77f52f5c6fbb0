/* htsegment.c - the parallel parse of a large host ET; see htsegment.h. */
#include "htsegment.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/bigmem.h"
#include "../util/tasks.h"
#include "../util/cmp.h"

static int feed_range(segment *s, uint64_t from, uint64_t to) {
  enum { CHUNK = 256 * 1024 };
  unsigned char *buf = malloc(CHUNK);
  if (!buf) return chakra_error_set(&s->p.err, CHAKRA_ENOMEM, "out of memory");
  int rc = 0;
  for (uint64_t off = from; off < to && !rc;) {
    if (s->p.abort_flag && *s->p.abort_flag) break;
    size_t want = to - off < CHUNK ? (size_t)(to - off) : CHUNK;
    ssize_t n = pread(s->fd, buf, want, (off_t)off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      rc = chakra_error_set(&s->p.err, CHAKRA_EIO, "%s: read failed at byte %llu", s->p.path, (unsigned long long)off);
      break;
    }
    rc = ht_feed(&s->p, buf, (size_t)n, off);
    off += (uint64_t)n;
    if (s->last && s->p.nodes_done) break;
  }
  free(buf);
  return rc;
}

static int seg_at_boundary(const hparse *p) {
  return !p->capd && p->depth >= 1 && p->fr[p->depth - 1] == F_NODES && p->at_boundary &&
         p->depth == (p->seg_nodes ? 1 : 2);
}

static void *seg_run(void *arg);

/* Segment 0 reads the document's head up to the first cut; the others
 * run seg_run(). */
typedef struct seg_jobs {
  segment *seg;
  volatile int *abort_flag;
  int rc0;
} seg_jobs;

static int seg_job(void *ctx, size_t i) {
  seg_jobs *J = ctx;
  if (i > 0) {
    seg_run(&J->seg[i]);
    return 0;
  }
  J->rc0 = feed_range(&J->seg[0], 0, J->seg[0].end);
  if (!J->rc0) J->seg[0].boundary_ok = seg_at_boundary(&J->seg[0].p);
  else *J->abort_flag = 1;
  return 0;
}

static void *seg_run(void *arg) {
  segment *s = arg;
  static const unsigned char open[] = "[";
  int rc = ht_feed(&s->p, open, 1, s->start - 1);
  if (!rc) rc = feed_range(s, s->start, s->end);
  if (!rc && !s->last) {
    s->boundary_ok = seg_at_boundary(&s->p);
    static const unsigned char close[] = "]";
    if (s->boundary_ok) {
      rc = ht_feed(&s->p, close, 1, s->end);
      if (!rc) rc = ht_finish_doc(&s->p);
    }
  } else if (!rc && s->last) {
    if (!s->p.nodes_done) rc = ht_finish_doc(&s->p);
  }
  s->rc = rc;
  return NULL;
}

/* Offset of a ',' between two nodes near `target`, or 0: a '}' then ','
 * then a line break and '{' as the first thing on its line; among the
 * candidates in the window, the least indented (nodes are the shallowest
 * objects of a pretty-printed trace). The parsers verify it. */
static uint64_t find_boundary(int fd, uint64_t target, uint64_t size) {
  enum { WIN = 1 << 20 };
  unsigned char *buf = malloc(WIN);
  if (!buf) return 0;
  uint64_t best = 0;
  int best_indent = 1 << 30;
  ssize_t n = pread(fd, buf, WIN, (off_t)target);
  if (n > 0) {
    for (ssize_t i = 0; i < n; i++) {
      if (buf[i] != '}') continue;
      ssize_t j = i + 1;
      while (j < n && (buf[j] == ' ' || buf[j] == '\t' || buf[j] == '\r')) j++;
      if (j >= n || buf[j] != ',') continue;
      ssize_t comma = j++;
      while (j < n && (buf[j] == ' ' || buf[j] == '\t' || buf[j] == '\r')) j++;
      if (j >= n || buf[j] != '\n') continue;
      j++;
      ssize_t ind = j;
      while (j < n && (buf[j] == ' ' || buf[j] == '\t')) j++;
      if (j >= n || buf[j] != '{') continue;
      int indent = (int)(j - ind);
      if (indent < best_indent) {
        best_indent = indent;
        best = target + (uint64_t)comma;
        if (indent == 0) break;
      }
    }
  }
  free(buf);
  return best && best + 2 < size ? best : 0;
}

/* Moves the segments' results into h; string ids are remapped into one
 * table. */
int ht_segments_merge(hostet *h, segment *seg, int k) {
  size_t total = 0, total_side = 0;
  for (int i = 0; i < k; i++) total += seg[i].p.n, total_side += seg[i].p.n_side;
  if (k == 1) {
    h->nodes = seg[0].p.nodes, h->n = seg[0].p.n;
    h->side = seg[0].p.side, h->n_side = seg[0].p.n_side;
    h->strings = seg[0].p.st;
    seg[0].p.nodes = NULL, seg[0].p.side = NULL;
    strtab_init(&seg[0].p.st);
  } else {
    /* Grow segment 0's arrays in place and append the others, freeing each
     * as it is copied: at most one segment is held twice. */
    ht_node *nodes = bigmem_realloc(seg[0].p.nodes, (total ? total : 1) * sizeof *nodes);
    if (!nodes) return CHAKRA_ENOMEM;
    seg[0].p.nodes = NULL;
    h->nodes = nodes;
    ht_side *side = realloc(seg[0].p.side, (total_side ? total_side : 1) * sizeof *side);
    if (!side) return CHAKRA_ENOMEM;
    seg[0].p.side = NULL;
    h->side = side;
    strtab_init(&h->strings);
    size_t at = 0, at_side = 0;
    for (int i = 0; i < k; i++) {
      hparse *p = &seg[i].p;
      uint32_t *map = malloc(((size_t)p->st.n + 1) * sizeof *map);
      if (!map) return CHAKRA_ENOMEM;
      map[0] = 0;
      for (uint32_t s = 1; s <= p->st.n; s++) {
        map[s] = strtab_intern(&h->strings, p->st.str[s], p->st.len[s]);
        if (map[s] == STRTAB_OOM) {
          free(map);
          return CHAKRA_ENOMEM;
        }
      }
      const ht_node *src = i ? p->nodes : h->nodes;
      const ht_side *src_side = i ? p->side : h->side;
      for (size_t j = 0; j < p->n; j++) {
        ht_node *d = &h->nodes[at + j];
        *d = src[j];
        d->name = map[d->name], d->op_schema = map[d->op_schema];
        d->cat = map[d->cat], d->pg_name = map[d->pg_name];
        if (d->side != UINT32_MAX) d->side += (uint32_t)at_side;
      }
      for (size_t j = 0; j < p->n_side; j++) {
        ht_side *d = &h->side[at_side + j];
        *d = src_side[j];
        d->node += (uint32_t)at;
        d->coll_name = map[d->coll_name];
      }
      free(map);
      at += p->n;
      at_side += p->n_side;
      if (i) bigmem_free(p->nodes);
      p->nodes = NULL;
      free(p->side), p->side = NULL;
    }
  }
  h->n = total;
  h->n_side = total_side;
  h->pools = calloc(k > 0 ? (size_t)k : 1u, sizeof *h->pools);
  if (!h->pools) return CHAKRA_ENOMEM;
  for (int i = 0; i < k; i++) {
    h->pools[i] = seg[i].p.pool;
    memset(&seg[i].p.pool, 0, sizeof seg[i].p.pool);
  }
  h->n_pools = k;
  h->segments = k;
  return 0;
}

int ht_segments_try(hostet *h, const char *path, const hostet_options *opt, int threads, int *done,
                        chakra_error *err) {
  *done = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  unsigned char magic[2] = {0, 0};
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || pread(fd, magic, 2, 0) != 2 ||
      (magic[0] == 0x1f && magic[1] == 0x8b)) {
    close(fd);
    return 0;
  }
  uint64_t size = (uint64_t)st.st_size;
  const uint64_t min_seg = 4u << 20;
  int k = threads;
  if ((uint64_t)k > size / min_seg) k = (int)(size / min_seg);
  if (k < 2) {
    close(fd);
    return 0;
  }
  uint64_t cut[64];
  int nc = 0;
  for (int i = 1; i < k; i++) {
    uint64_t b = find_boundary(fd, size * (uint64_t)i / (uint64_t)k, size);
    if (b && (!nc || b > cut[nc - 1] + 1)) cut[nc++] = b;
  }
  qsort(cut, (size_t)nc, sizeof *cut, cmp_u64);
  if (!nc) {
    close(fd);
    return 0;
  }
  k = nc + 1;
  segment *seg = calloc((size_t)k, sizeof *seg);
  volatile int abort_flag = 0;
  int rc = 0;
  if (!seg) {
    close(fd);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  for (int i = 0; i < k; i++) {
    seg[i].fd = fd;
    seg[i].start = i == 0 ? 0 : cut[i - 1] + 1;
    seg[i].end = i == k - 1 ? size : cut[i];
    seg[i].last = i == k - 1;
    if (ht_parse_init(&seg[i].p, path, opt, h, i > 0)) rc = CHAKRA_ENOMEM;
    seg[i].p.abort_flag = &abort_flag;
  }
  seg_jobs jobs = {seg, &abort_flag, 0};
  if (!rc) tasks_run((size_t)k, (unsigned)k, seg_job, &jobs, 0);
  int rc0 = jobs.rc0;
  /* A segment's result counts only if every segment before it ended on a
   * node boundary (so that it started on one). */
  int first_err = -1;
  for (int i = 1; i < k && first_err < 0; i++)
    if (seg[i].rc) first_err = i;
  int upto = first_err >= 0 ? first_err : k - 1;
  int verified = !rc && !rc0;
  for (int i = 0; i < upto && verified; i++) verified = seg[i].boundary_ok;
  if (verified && first_err < 0) verified = seg[k - 1].p.nodes_done;
  if (verified && first_err < 0) {
    /* segment 0 closes the nodes array and reads what follows it */
    static const unsigned char close_br[] = "]";
    rc0 = ht_feed(&seg[0].p, close_br, 1, seg[k - 1].p.nodes_end - 1);
    if (!rc0) {
      seg[0].last = 0;
      rc0 = feed_range(&seg[0], seg[k - 1].p.nodes_end, size);
    }
    if (!rc0) {
      seg[0].p.chunk_base = size;
      rc0 = ht_finish_doc(&seg[0].p);
    }
    if (!rc0) rc0 = ht_check_top(&seg[0].p);
    if (rc0) {
      *err = seg[0].p.err;
      rc = rc0;
    } else {
      rc = ht_segments_merge(h, seg, k);
      if (rc) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
      if (!rc && opt->mode == HT_MODE_LINK && seg[0].p.top_extra.n) {
        h->top_extra = seg[0].p.top_extra.s;
        h->top_extra_len = seg[0].p.top_extra.n;
        seg[0].p.top_extra.s = NULL;
      }
    }
    *done = 1;
  } else if (verified && first_err >= 0) {
    /* every boundary held: the first failing segment has the real error */
    *err = seg[first_err].p.err;
    rc = seg[first_err].rc;
    *done = 1;
  } else if (rc0 && seg[0].p.rc) {
    /* segment 0 reads the start of the file as a sequential parse would */
    *err = seg[0].p.err;
    rc = rc0;
    *done = 1;
  }
  /* otherwise: a boundary did not hold; the caller parses sequentially */
  for (int i = 0; i < k; i++) ht_parse_free_all(&seg[i].p);
  free(seg);
  close(fd);
  return rc;
}
