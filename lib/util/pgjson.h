/* pgjson.h - PyTorch process groups as Chakra host traces record them
 * (private): the JSON list a "## process_group:init ##" node carries,
 * [{"pg_name": "0", "ranks": [0, 1], "group_size": 2, "backend_id": ...}].
 * One parser for every reader of that list (ingestion, the simulator);
 * what to do with odd entries is the caller's choice, so each entry says
 * what it had. */
#ifndef CHAKRA_UTIL_PGJSON_H
#define CHAKRA_UTIL_PGJSON_H

#include <stddef.h>
#include <stdint.h>

typedef struct pg_entry {
  char *name;             /* pg_name (a string, or an integer written out); NULL if absent */
  int64_t *ranks;         /* the members in order (NULL when none are listed) */
  size_t n_ranks;
  int has_ranks;          /* a "ranks" list was present (it may be empty: all ranks) */
  int bad_rank;           /* a member is not a non-negative integer (ranks then NULL) */
  int64_t size, backend_id;
  int has_size, has_backend_id;
} pg_entry;

typedef struct pg_list {
  pg_entry *v;
  size_t n;
} pg_list;

enum { PG_OK = 0, PG_ENOTLIST = -1, PG_ENOMEM = -2 };

/* Parses json into out (freed with pg_list_free, also after failure).
 * PG_ENOTLIST: not a JSON list; why receives the parser's reason. */
int pg_list_parse(const char *json, pg_list *out, char *why, size_t why_size);
void pg_list_free(pg_list *l);

#endif
