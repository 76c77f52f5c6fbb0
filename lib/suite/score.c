/* score.c - the suite's scoring (docs/suite.md, "Scoring"): per workload
 * the speedup over the baseline (its time divided by the result's), per
 * class the geometric mean of the speedups of the class's workloads, and
 * overall the geometric mean of the class scores, so that every class
 * weighs the same however many workloads it has. The baseline scores 1 by
 * definition. */
#include "chakra/suite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const chakra_suite_metrics *score_find(const chakra_suite_result *r, size_t w) {
  for (size_t i = 0; i < r->n; i++)
    if (r->m[i].workload == w) return &r->m[i];
  return NULL;
}

/* The position of cls in s->classes; s->n_classes when it is not there. */
static size_t class_index(const chakra_suite_score *s, const char *cls) {
  size_t c = 0;
  while (c < s->n_classes && strcmp(s->classes[c], cls) != 0) c++;
  return c;
}

static int collect_classes(chakra_suite_score *s, chakra_error *err) {
  const chakra_suite_version *v = s->version;
  if (!(s->classes = calloc(v->n, sizeof *s->classes))) return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  for (size_t i = 0; i < v->n; i++)
    if (class_index(s, v->workloads[i].cls) == s->n_classes) s->classes[s->n_classes++] = v->workloads[i].cls;
  return CHAKRA_OK;
}

/* Result k's speedups, class scores and overall score. */
static int score_one(chakra_suite_score *s, const chakra_suite_result *results, size_t k) {
  const chakra_suite_result *base = &results[s->baseline], *r = &results[k];
  double *logsum = calloc(s->n_classes, sizeof *logsum);
  size_t *count = calloc(s->n_classes, sizeof *count);
  if (!logsum || !count) {
    free(logsum);
    free(count);
    return CHAKRA_ENOMEM;
  }
  for (size_t w = 0; w < s->n_workloads; w++) {
    const chakra_suite_metrics *b = score_find(base, w), *m = score_find(r, w);
    if (!b || !m || !b->ok || !m->ok || !m->time_ns) continue;
    double sp = (double)b->time_ns / (double)m->time_ns;
    s->speedup[k * s->n_workloads + w] = sp;
    size_t c = class_index(s, s->version->workloads[w].cls);
    logsum[c] += log(sp);
    count[c]++;
  }
  double all = 0;
  size_t classes = 0;
  for (size_t c = 0; c < s->n_classes; c++) {
    if (!count[c]) continue;
    double g = exp(logsum[c] / (double)count[c]);
    s->class_score[k * s->n_classes + c] = g;
    all += log(g);
    classes++;
  }
  s->overall[k] = classes ? exp(all / (double)classes) : 0;
  free(logsum);
  free(count);
  return CHAKRA_OK;
}

int chakra_suite_score_compute(chakra_suite_score *s, const chakra_suite_result *results, size_t n, size_t baseline,
                               chakra_error *err) {
  memset(s, 0, sizeof *s);
  if (!n || baseline >= n) return chakra_error_set(err, CHAKRA_EINVAL, "no baseline result");
  s->version = chakra_suite_version_find(results[baseline].suite_version);
  if (!s->version)
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: suite version %s is unknown", results[baseline].path,
                            results[baseline].suite_version);
  for (size_t k = 0; k < n; k++)
    if (strcmp(results[k].suite_version, s->version->name) != 0)
      return chakra_error_set(err, CHAKRA_EINVAL,
                              "%s: suite version %s, but the baseline %s is of version %s: scores compare one version",
                              results[k].path, results[k].suite_version, results[baseline].path, s->version->name);
  s->n_results = n, s->baseline = baseline, s->n_workloads = s->version->n;
  int rc = collect_classes(s, err);
  if (rc) return rc;
  s->overall = calloc(n, sizeof *s->overall);
  s->class_score = calloc(n * s->n_classes, sizeof *s->class_score);
  s->speedup = calloc(n * s->n_workloads, sizeof *s->speedup);
  if (!s->overall || !s->class_score || !s->speedup) {
    chakra_suite_score_free(s);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < n; k++)
    if (score_one(s, results, k)) {
      chakra_suite_score_free(s);
      return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
    }
  return CHAKRA_OK;
}

void chakra_suite_score_free(chakra_suite_score *s) {
  free(s->classes);
  free(s->overall);
  free(s->class_score);
  free(s->speedup);
  memset(s, 0, sizeof *s);
}
