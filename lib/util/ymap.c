/* ymap.c - see ymap.h. */
#include "ymap.h"
#include "vec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>


void ymap_free(ymap *m) {
  for (int i = 0; i < m->n; i++) {
    for (int k = 0; k < m->e[i].n; k++) free(m->e[i].vals[k]);
    free(m->e[i].vals);
    free(m->e[i].key);
  }
  free(m->e);
}

static int ypush(char ***v, int *n, const char *s) {
  char **q = VEC_APPEND(*v, *n);
  return q && (*q = strdup(s)) ? 0 : -1;
}

/* Reads the simple YAML shape every simulator config uses. */
int ymap_read(const char *path, ymap *m, chakra_error *err) {
  memset(m, 0, sizeof *m);
  FILE *f = fopen(path, "rb");
  if (!f) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    return chakra_error_set(err, CHAKRA_EIO, "%s: is a directory", path);
  }
  yaml_parser_t p;
  yaml_parser_initialize(&p);
  yaml_parser_set_input_file(&p, f);
  int depth = 0, rc = 0, done = 0;
  yentry *cur = NULL;
  while (!done && !rc) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&p, &ev)) {
      rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: line %lu: invalid YAML: %s", path,
                            (unsigned long)p.problem_mark.line + 1, p.problem ? p.problem : "?");
      break;
    }
    unsigned long line = ev.start_mark.line + 1;
    switch (ev.type) {
      case YAML_STREAM_END_EVENT: done = 1; break;
      case YAML_MAPPING_START_EVENT:
        if (depth++ != 0) rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: line %lu: nested mappings are not allowed here", path, line);
        break;
      case YAML_MAPPING_END_EVENT: depth--; break;
      case YAML_SEQUENCE_START_EVENT:
        if (!cur || cur->is_list || cur->n) rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: line %lu: unexpected list", path, line);
        else cur->is_list = 1;
        break;
      case YAML_SEQUENCE_END_EVENT: cur = NULL; break;
      case YAML_SCALAR_EVENT: {
        const char *s = (const char *)ev.data.scalar.value;
        if (depth != 1) {
          rc = chakra_error_set(err, CHAKRA_EFORMAT, "%s: line %lu: expected a mapping at the top", path, line);
        } else if (!cur) {
          if (!(cur = VEC_APPEND(m->e, m->n))) { rc = CHAKRA_ENOMEM; break; }
          memset(cur, 0, sizeof *cur);
          cur->key = strdup(s);
          cur->line = line;
        } else {
          if (ypush(&cur->vals, &cur->n, s)) rc = CHAKRA_ENOMEM;
          if (!cur->is_list) cur = NULL;
        }
        break;
      }
      default: break;
    }
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&p);
  fclose(f);
  if (rc == CHAKRA_ENOMEM) chakra_error_set(err, rc, "%s: out of memory", path);
  if (rc) ymap_free(m);
  return rc;
}

