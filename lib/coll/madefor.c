/* madefor.c - an algorithm's made-for collective and size; see madefor.h. */
#include "madefor.h"

#include <stdio.h>
#include <string.h>

#include "chakra/attr.h"
#include "chakra/coll.h"

void coll_madefor_read(const chakra_metadata *m, coll_madefor *out) {
  out->coll = -1;
  out->size = 0;
  for (size_t i = 0; m && i < m->n_attr; i++) {
    const chakra_attr *a = m->attr[i];
    int64_t v;
    int inexact;
    if (strcmp(a->name, "size") == 0 && chakra_attr_as_int(a, &v, &inexact) == 0 && v > 0) out->size = (uint64_t)v;
    if (strcmp(a->name, "collective") == 0 && a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL)
      out->coll = chakra_coll_type_parse(a->string_val);
  }
}

void coll_madefor_factor(const coll_madefor *f, uint64_t size, int as_is, uint64_t *num, uint64_t *den) {
  int scale = !as_is && f->size && size != f->size;
  *num = scale ? size : 1;
  *den = scale ? f->size : 1;
}

int coll_madefor_note(const coll_madefor *f, int coll, uint64_t size, uint64_t other, int as_is, char *buf,
                      size_t n) {
  int another = f->coll >= 0 && f->coll != coll;
  int resized = f->size ? f->size != size : other && other != size;
  if (!another && !resized) return 0;
  char made[160];
  if (f->size) snprintf(made, sizeof made, "%llu bytes", (unsigned long long)f->size);
  else if (resized) /* two sizes: at least one is not the one it was made for */
    snprintf(made, sizeof made, "a size it does not record (no \"size\" metadata), and it also runs %llu bytes",
             (unsigned long long)other);
  else snprintf(made, sizeof made, "a size it does not record");
  const char *what = f->coll >= 0 ? chakra_coll_type_name((chakra_coll_type)f->coll) : "a collective it does not name";
  int len = snprintf(buf, n, "made for %s of %s: %s", what, made, another ? "another collective; " : "");
  if (len < 0 || (size_t)len >= n) return 1;
  if (!resized || !f->size)
    snprintf(buf + len, n - (size_t)len, "it runs as made");
  else if (as_is)
    snprintf(buf + len, n - (size_t)len, "it runs as made, at %llu bytes (--custom-collective-scaling=as-is)",
             (unsigned long long)f->size);
  else
    snprintf(buf + len, n - (size_t)len, "it runs scaled by %llu/%llu (--custom-collective-scaling=scale)",
             (unsigned long long)size, (unsigned long long)f->size);
  return 1;
}
