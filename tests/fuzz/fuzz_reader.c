/* fuzz_reader.c - libFuzzer target for the .et reader and the graph loader.
 *
 * The input is a .et file. It is iterated with chakra_reader_open/next
 * (resolving every node's standard attributes), then loaded with
 * chakra_graph_load() in the default, tolerant (validate) and data-deps-only
 * modes, with the critical path and a node re-read through seek. Crashes and
 * sanitizer reports are findings. (fuzz_jsonize.c checks the JSON views of
 * the same kind of input.) */
#include <stdio.h>
#include <stdlib.h>

#include "chakra/attr.h"
#include "chakra/graph.h"
#include "chakra/trace.h"
#include "fuzz_common.h"

/* Formats every problem: chakra_problem_format() sees fuzzed text too. */
static void ignore_warn(void *ctx, const chakra_problem *p) {
  char line[256];
  (void)ctx;
  (void)chakra_problem_format(p, line, sizeof line);
}

static void read_all(const char *path) {
  chakra_reader *r;
  chakra_error err;
  chakra_reader_options opt = {.max_message_size = 1 << 20};
  if (chakra_reader_open(&r, path, &opt, &err)) return;
  chakra_node *n;
  while (chakra_reader_next(r, &n, &err) == 1) {
    chakra_std_attrs a;
    chakra_std_attrs_resolve(n, &a, ignore_warn, NULL);
    (void)chakra_reader_message_offset(r);
  }
  chakra_reader_close(r);
}

static void load_graph(const char *path, const chakra_graph_options *opt) {
  chakra_graph *g;
  chakra_error err;
  if (chakra_graph_load(&g, path, opt, &err)) return;
  uint32_t end;
  (void)chakra_graph_critical_path(g, &end);
  chakra_node *n; /* the last node: the furthest seek */
  if (g->n && chakra_graph_read_node(g, (uint32_t)g->n - 1, &n, &err) == 0)
    chakra_node_free(n);
  (void)chakra_graph_memory(g);
  chakra_graph_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[64];
  int fd = fuzz_input_file(data, size, path, sizeof path);
  read_all(path);
  load_graph(path, NULL);
  chakra_graph_options tolerant = {.tolerant = 1, .diag = ignore_warn};
  load_graph(path, &tolerant);
  chakra_graph_options data_only = {.ignore_ctrl_deps = 1, .drop_missing_data_deps = 1, .diag = ignore_warn};
  load_graph(path, &data_only);
  close(fd);
  return 0;
}
