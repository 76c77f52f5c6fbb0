/* commgroups.h - communicator groups as producers write them (private):
 * the comm-group configuration file ASTRA-sim and STAGE use,
 *   {"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]}
 * and the process-group list of a PyTorch METADATA node (et-format.md 4.1),
 *   ['[{"pg_name": "0", "ranks": [], "group_size": 2, "backend_id": ...}]']
 * The one reader of both for every consumer (simulator, validate, coll
 * expand, replay, convert), so that all of them accept and refuse the same
 * files with the same one-line messages.
 *
 * Rules: a file's keys are group names (any text; ASTRA-sim wants decimal
 * ids > 0), each mapped to a non-empty list of distinct non-negative integer
 * ranks; a name defined twice in one file is an error. METADATA groups need
 * pg_name (text or integer) and ranks; empty ranks mean every rank. "" and
 * "0" name the whole world: a METADATA group of that name is not added (and
 * is an error when it lists some ranks but not all). Across sources the
 * first definition of a name wins. */
#ifndef CHAKRA_UTIL_COMMGROUPS_H
#define CHAKRA_UTIL_COMMGROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "nameidx.h"

typedef struct cg_group {
  char *name;
  uint32_t *members;  /* in definition order (position = rank within the group) */
  uint32_t n;         /* 0 only for "every rank" when the rank count was not known */
  uint32_t line;      /* where the file defines it (1-based); 0 for METADATA */
} cg_group;

typedef struct cg_set {
  cg_group *v;
  size_t n, cap;
  nameidx idx;        /* names of v, so that cg_find is not a scan */
} cg_set;

/* Appends the groups of a comm-group configuration file. npus > 0 also
 * checks every rank is below npus (0: the caller checks later). Errors name
 * the file, line and group: "G.json: line 3: group \"2\": entry 1 is \"x\",
 * expected a rank (integer 0..7)". On failure s keeps what it held before. */
int cg_read_file(cg_set *s, const char *path, uint32_t npus, chakra_error *err);
/* The same for text already in memory (len bytes; need not end in NUL);
 * path only names it in messages. */
int cg_parse_file(cg_set *s, const char *text, size_t len, const char *path, uint32_t npus, chakra_error *err);

/* Adds the groups of one METADATA node's inputs.values: the Python repr
 * "['[...]']" or the bare JSON list. Text without "pg_name" holds no groups
 * and is ignored. where names the node in messages ("FILE: node 7"). Names
 * already in s keep their first definition. */
int cg_add_metadata(cg_set *s, const char *values, const char *where, uint32_t npus, chakra_error *err);

/* Appends a group as given (copied; no checks). Returns 0, or -1 when out
 * of memory. */
int cg_add_group(cg_set *s, const char *name, const uint32_t *members, uint32_t n);

/* Index of the first group called name, or -1 (no special meaning for
 * ""/"0"). A hash lookup: groups files of 32,768 ranks have thousands. */
long cg_find(const cg_set *s, const char *name);
/* NULL, "" and "0" mean all ranks. */
int cg_is_all(const char *name);
/* Whether rank belongs to group g (n == 0: every rank does). */
int cg_has(const cg_group *g, uint32_t rank);
void cg_set_free(cg_set *s);
/* name as one printable line for messages: line breaks, quotes and control
 * characters escaped (\n, \", \x01), cut with "..." to fit size. Returns buf. */
const char *cg_quote(const char *name, char *buf, size_t size);

/* ---- the PyTorch list itself, entry by entry (for convert, which keeps
 * backend ids and sizes): what each entry had, judged by the caller. ---- */

typedef struct cg_pg_entry {
  char *name;             /* pg_name (a string, or an integer written out); NULL if absent */
  int64_t *ranks;         /* the members in order (NULL when none are listed) */
  size_t n_ranks;
  int has_ranks;          /* a "ranks" list was present (it may be empty: all ranks) */
  int bad_rank;           /* a member is not a non-negative integer (ranks then NULL) */
  size_t bad_index;       /* which one */
  int64_t size, backend_id;
  int has_size, has_backend_id;
} cg_pg_entry;

typedef struct cg_pg_list {
  cg_pg_entry *v;
  size_t n;
} cg_pg_list;

enum { CG_PG_OK = 0, CG_PG_ENOTLIST = -1, CG_PG_ENOMEM = -2 };

/* Parses a JSON list into out (freed with cg_pg_free, also after failure).
 * CG_PG_ENOTLIST: not a JSON list; why receives the parser's reason. */
int cg_pg_parse(const char *json, cg_pg_list *out, char *why, size_t why_size);
void cg_pg_free(cg_pg_list *l);

#endif
