/* hostet.c - PyTorch host ET reader; see hostet.h.
 *
 * The reading is done by a streaming parser (htparse.h: state and
 * driving; htevents.c: yajl's callbacks; htcapture.c: kept values;
 * htnode.c: node records), once over the file or, for a large plain file,
 * on several threads from verified node boundaries (htsegment.c). Here:
 * the versions read and the reader's entry points. */
#include "hostet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/bigmem.h"
#include "../util/instream.h"
#include "../util/tasks.h"
#include "chakra/ingest.h"
#include "htparse.h"
#include "htsegment.h"

const char *const chakra_hostet_versions[] = {"1.0.1",
                                              "1.0.2-chakra.0.0.4",
                                              "1.0.3-chakra.0.0.4",
                                              "1.1.0-chakra.0.0.4",
                                              "1.1.1-chakra.0.0.4",
                                              "1.1.1-chakra.1.0.0",
                                              NULL};

const char *const ht_attr_names[HT_NATTR] = {"rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid"};

int hostet_read(hostet **out, const char *path, const hostet_options *opt, chakra_error *err) {
  chakra_input in = {.path = path};
  return hostet_read_input(out, &in, opt, err);
}

int ht_progress_add(ht_progress *g, size_t n) {
  pthread_mutex_lock(&g->mu);
  g->done += n;
  int stop = 0;
  if (g->done >= g->next) {
    stop = g->fn(g->ctx, "bytes", g->done, g->total);
    g->next = g->done + (4u << 20);
  }
  pthread_mutex_unlock(&g->mu);
  return stop;
}

static int read_input(hostet **out, const chakra_input *input, const hostet_options *opt, chakra_error *err);

int hostet_read_input(hostet **out, const chakra_input *input, const hostet_options *opt, chakra_error *err) {
  if (!opt->progress) return read_input(out, input, opt, err);
  ht_progress g = {.fn = opt->progress, .ctx = opt->progress_ctx, .total = instream_plain_size(input)};
  pthread_mutex_init(&g.mu, NULL);
  hostet_options o = *opt;
  o.prog = &g;
  int rc = read_input(out, input, &o, err);
  pthread_mutex_destroy(&g.mu);
  return rc;
}

static int read_input(hostet **out, const chakra_input *input, const hostet_options *opt, chakra_error *err) {
  *out = NULL;
  const char *path = chakra_input_name(input);
  hostet *h = calloc(1, sizeof *h);
  if (!h || !(h->path = strdup(path))) {
    free(h);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  int threads = opt->threads > 0 ? opt->threads : (int)tasks_cpus();
  if (threads > 64) threads = 64;
  int rc = 0, done = 0;
  if (threads > 1 && input->path && strcmp(input->path, "-") != 0)
    rc = ht_segments_try(h, input->path, opt, threads, &done, err);
  if (!done) {
    hparse p;
    if (ht_parse_init(&p, path, opt, h, 0)) {
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    } else {
      rc = ht_parse_sequential(&p, input);
      if (rc) {
        *err = p.err;
      } else {
        segment s;
        memset(&s, 0, sizeof s);
        s.p = p;
        ht_parse_free_scratch(&s.p);
        rc = ht_segments_merge(h, &s, 1);
        if (rc) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
        if (opt->mode == HT_MODE_LINK && s.p.top_extra.n) {
          h->top_extra = s.p.top_extra.s;
          h->top_extra_len = s.p.top_extra.n;
          s.p.top_extra.s = NULL;
        }
        p = s.p;
      }
      ht_parse_free_all(&p);
    }
  }
  if (rc) {
    hostet_free(h);
    return rc;
  }
  if (h->newer_schema && opt->diag) {
    char msg[300];
    snprintf(msg, sizeof msg, "schema '%s' is newer than this version of chakra knows (1.1); converted as 1.1",
             h->schema);
    chakra_problem p = chakra_problem_make(CHAKRA_SEV_WARNING, msg);
    p.file = path;
    p.field = "schema";
    opt->diag(opt->diag_ctx, &p);
  }
  *out = h;
  return 0;
}

void hostet_free(hostet *h) {
  if (!h) return;
  free(h->path);
  free(h->schema);
  free(h->time);
  bigmem_free(h->nodes);
  free(h->side);
  strtab_free(&h->strings);
  for (int i = 0; i < h->n_pools; i++) bpool_free(&h->pools[i]);
  free(h->pools);
  free(h->top_extra);
  free(h);
}

size_t hostet_memory(const hostet *h) {
  size_t m = h->n * sizeof *h->nodes + h->n_side * sizeof *h->side + strtab_memory(&h->strings);
  for (int i = 0; i < h->n_pools; i++) m += h->pools[i].bytes;
  return m;
}

void hostet_where(const hostet *h, size_t i, char *out, size_t n) {
  snprintf(out, n, "node %llu (byte %llu)", (unsigned long long)h->nodes[i].id,
           (unsigned long long)h->nodes[i].offset);
}
