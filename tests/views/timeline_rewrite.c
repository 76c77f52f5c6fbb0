/* timeline_rewrite.c - re-emits a Chrome trace-event file (as chakra sim
 * --timeline writes it) through the chakra_timeline writer, to show that
 * the simulator can switch to that writer without changing a byte.
 *
 * usage: timeline_rewrite IN.json OUT.json */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "chakra/timeline.h"

/* "12.345" (microseconds with three decimals) -> 12345 ns */
static uint64_t ns_of(const yajl_val v) {
  const char *s = YAJL_GET_NUMBER(v);
  uint64_t whole = strtoull(s, NULL, 10), frac = 0;
  const char *dot = strchr(s, '.');
  for (int i = 0; i < 3; i++) frac = frac * 10 + (dot && dot[1 + i] ? (uint64_t)(dot[1 + i] - '0') : 0);
  return whole * 1000 + frac;
}

static yajl_val get(yajl_val obj, const char *k) {
  const char *path[] = {k, NULL};
  return yajl_tree_get(obj, path, yajl_t_any);
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 2;
  static char text[1 << 24];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  char errbuf[256];
  yajl_val doc = yajl_tree_parse(text, errbuf, sizeof errbuf);
  if (!doc) return fprintf(stderr, "%s\n", errbuf), 2;
  yajl_val ev = get(doc, "traceEvents");
  chakra_timeline *t;
  chakra_error err = {0};
  if (!ev || chakra_timeline_open(&t, argv[2], &err)) return 2;
  for (size_t i = 0; i < YAJL_GET_ARRAY(ev)->len; i++) {
    yajl_val e = YAJL_GET_ARRAY(ev)->values[i];
    const char *ph = YAJL_GET_STRING(get(e, "ph")), *name = YAJL_GET_STRING(get(e, "name"));
    uint32_t pid = (uint32_t)YAJL_GET_INTEGER(get(e, "pid"));
    yajl_val args = get(e, "args");
    if (strcmp(ph, "M") == 0 && strcmp(name, "process_name") == 0) {
      chakra_timeline_process(t, pid, YAJL_GET_STRING(get(args, "name")));
    } else if (strcmp(ph, "M") == 0) {
      chakra_timeline_track(t, pid, (uint32_t)YAJL_GET_INTEGER(get(e, "tid")), YAJL_GET_STRING(get(args, "name")));
    } else {
      chakra_timeline_slice(t, pid, (uint32_t)YAJL_GET_INTEGER(get(e, "tid")), name, strlen(name),
                            YAJL_GET_STRING(get(e, "cat")), ns_of(get(e, "ts")), ns_of(get(e, "dur")),
                            (uint64_t)YAJL_GET_INTEGER(get(args, "node_id")));
    }
  }
  yajl_tree_free(doc);
  if (chakra_timeline_close(t, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
  return 0;
}
