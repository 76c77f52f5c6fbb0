/* set.h - a trace set: the ranks of one job and its communicator groups,
 * from wherever they come.
 *
 * Every command that takes a PREFIX opens a set, and every consumer of
 * several ranks (validate, stats, the simulator, sweep, replay, coll
 * expand and check, the views) reads its ranks through one. A set comes
 * from
 *  - per-rank files: PREFIX.0.et, PREFIX.1.et, ... (chakra_set_open), an
 *    explicit file list (chakra_set_open_files), or the FILE... | PREFIX
 *    arguments the commands take (chakra_set_open_args);
 *  - the shared form: PREFIX.set.json and one template per rank class
 *    (below), which chakra_set_open() reads whenever PREFIX.set.json
 *    exists, so every command takes either form of a set;
 *  - a source: callbacks the caller fills (chakra_set_from_source), for
 *    traces held in memory, produced in-process or reached another way;
 *    tests and language bindings use it.
 *
 * Rank classes. A set may store ranks that differ only in their group
 * names and peers once, as a class: one template graph plus, per rank, a
 * binding of the template's group names and peers to the rank's own.
 * Per-rank files are the case "every rank its own class, every binding
 * the identity". Consumers that care (the simulator, coll expand, stats)
 * load each class once (chakra_set_load_class) and apply the bindings
 * (chakra_set_bind_group, chakra_set_bind_peer); the others read ranks
 * (chakra_set_load_rank, chakra_set_reader), which apply them: a rank
 * read that way is its own graph, group names and peers included, and
 * so are the nodes its graph reads again. A source supplies classes
 * through the class callbacks; left NULL, every rank is its own class.
 *
 * Communicator groups come from the comm-group file given, else from a
 * shared set's manifest (its rules, or its table's file), else from
 * PREFIX.json beside the traces when it exists (chakra_set_groups_origin()
 * says which, for the commands' summaries), else from the source. They
 * are read when first asked for (chakra_set_load_groups), so a command
 * that needs none never reads them. A file naming ranks the set does not
 * have is reported as a groups file for another rank count.
 *
 * Thread safety: a set is only read after it is open, and every function
 * taking a const chakra_set may be called from several threads at once
 * (a source's callbacks are called under the set's lock). */
#ifndef CHAKRA_SET_H
#define CHAKRA_SET_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/error.h"
#include "chakra/export.h"
#include "chakra/graph.h"
#include "chakra/stream.h"
#include "chakra/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct chakra_set chakra_set;

typedef struct chakra_set_options {
  /* A PREFIX's rank count. 0: PREFIX.0.et, PREFIX.1.et, ... while they
   * exist (a later rank file after a gap is an error). Otherwise exactly
   * this many: each of PREFIX.0.et .. PREFIX.<ranks-1>.et must exist and
   * PREFIX.<ranks>.et must not (it would be ignored). */
  uint32_t ranks;
  /* Why that many, for those messages ("the network has 8 NPUs"). */
  const char *ranks_reason;
  /* With ranks: the first `ranks` ranks of a set that may have more. */
  int first_ranks;
  /* The comm-group file ({"1": [0, 1], ...}); NULL: a shared set's own
   * (its manifest's rules or groups file), else PREFIX.json beside the
   * traces when it exists and is one (an object of lists; other JSON
   * there, such as a report, is left alone), unless no_default_groups
   * (then only the file given). */
  const char *comm_groups;
  int no_default_groups;
} chakra_set_options;

/* PREFIX.set.json when it exists (the shared form: its templates must
 * exist, and PREFIX.0.et must not, since one of the two would be out of
 * date), else PREFIX.<r>.et (chakra_rank_path()). opt may be NULL. On
 * failure *out is NULL and err says which file is missing, or where the
 * gap is. */
CHAKRA_API int chakra_set_open(chakra_set **out, const char *prefix, const chakra_set_options *opt,
                               chakra_error *err);
/* The given files as ranks 0..n-1 ("-" = standard input). */
CHAKRA_API int chakra_set_open_files(chakra_set **out, const char *const *paths, uint32_t n,
                                     const chakra_set_options *opt, chakra_error *err);
/* Command-line arguments FILE.et... | PREFIX: each argument that names a
 * file (or is "-") is one rank, any other is a prefix whose ranks follow
 * in order. A single PREFIX argument is chakra_set_open(), and so is a
 * single PREFIX.set.json; a shared set among other arguments is refused. */
CHAKRA_API int chakra_set_open_args(chakra_set **out, const char *const *args, uint32_t n,
                                    const chakra_set_options *opt, chakra_error *err);

/* A set from callbacks. Only ranks and input are required. The buffers
 * and FILE*s input() hands out must stay valid until close (graphs
 * re-read them). */
typedef struct chakra_set_source {
  uint32_t ranks;
  /* The bytes of class cls's trace (every rank its own class: rank cls). */
  int (*input)(void *ctx, uint32_t cls, chakra_input *out, chakra_error *err);
  /* What messages call class cls (default: the input's name); the
   * string must live until close. */
  const char *(*name)(void *ctx, uint32_t cls);
  /* The set's communicator groups, given with chakra_set_add_group(). */
  int (*groups)(void *ctx, chakra_set *s, chakra_error *err);
  /* Rank classes: class_of NULL means every rank its own class (and the
   * rest is ignored). classes: their count; class_rep: the rank whose
   * names and peers the template carries; bind_group: the rank's group
   * for a group name of the template; bind_peer: the rank's peer for one
   * of the template's. */
  uint32_t classes;
  uint32_t (*class_of)(void *ctx, uint32_t rank);
  uint32_t (*class_rep)(void *ctx, uint32_t cls);
  const char *(*bind_group)(void *ctx, uint32_t rank, const char *template_pg);
  int32_t (*bind_peer)(void *ctx, uint32_t rank, int32_t template_peer);
  /* Called once by chakra_set_close() (also after a failed open). */
  void (*close)(void *ctx);
} chakra_set_source;

/* src is copied; ctx is handed to every callback. opt->comm_groups, when
 * given, is read instead of the source's groups. */
CHAKRA_API int chakra_set_from_source(chakra_set **out, const chakra_set_source *src, void *ctx,
                                      const chakra_set_options *opt, chakra_error *err);

/* Frees s (calls the source's close). NULL is allowed. */
CHAKRA_API void chakra_set_close(chakra_set *s);

CHAKRA_API uint32_t chakra_set_ranks(const chakra_set *s);
/* PREFIX when the set is one prefix's rank files, else NULL. */
CHAKRA_API const char *chakra_set_prefix(const chakra_set *s);
/* What messages call rank's trace: its file, or the source's name. */
CHAKRA_API const char *chakra_set_rank_name(const chakra_set *s, uint32_t rank);
/* Rank's file when the set is made of files, else NULL. */
CHAKRA_API const char *chakra_set_rank_path(const chakra_set *s, uint32_t rank);

/* ---- classes (every rank its own class, unless a source says otherwise) */
CHAKRA_API uint32_t chakra_set_classes(const chakra_set *s);
CHAKRA_API uint32_t chakra_set_class_of(const chakra_set *s, uint32_t rank);
CHAKRA_API uint32_t chakra_set_class_rep(const chakra_set *s, uint32_t cls);
/* The group name rank uses where its class template says template_pg
 * (NULL and "" stay as they are: every rank). */
CHAKRA_API const char *chakra_set_bind_group(const chakra_set *s, uint32_t rank, const char *template_pg);
/* The peer rank talks to where its class template says template_peer. */
CHAKRA_API int32_t chakra_set_bind_peer(const chakra_set *s, uint32_t rank, int32_t template_peer);

/* ---- reading ---- */
/* Where class cls's bytes are (a path, FILE* or buffer; the set's). */
CHAKRA_API int chakra_set_input(const chakra_set *s, uint32_t cls, chakra_input *in, chakra_error *err);
/* Loads class cls's template graph; the caller frees it. */
CHAKRA_API int chakra_set_load_class(const chakra_set *s, uint32_t cls, const chakra_graph_options *opt,
                                     chakra_graph **out, chakra_error *err);
/* Loads the graph rank runs: its own file, or its class template with
 * its bindings applied (group names, comm_src and comm_dst are the
 * rank's; chakra_graph_read_node() returns the rank's nodes too). The
 * graph is named "TEMPLATE (rank R)" then. The caller frees it; a graph
 * of a shared set's rank may outlive the set, one of a source's classed
 * rank reads through the set and must not. */
CHAKRA_API int chakra_set_load_rank(const chakra_set *s, uint32_t rank, const chakra_graph_options *opt,
                                    chakra_graph **out, chakra_error *err);
/* Rank as a stream of nodes, bindings applied (raw messages too: they are
 * byte for byte the rank's own file's). */
CHAKRA_API int chakra_set_reader(const chakra_set *s, uint32_t rank, const chakra_reader_options *opt,
                                 chakra_reader **out, chakra_error *err);

/* ---- communicator groups ---- */
typedef enum chakra_groups_origin {
  CHAKRA_GROUPS_NONE,    /* no groups file and none from the source */
  CHAKRA_GROUPS_GIVEN,   /* the file in chakra_set_options.comm_groups */
  CHAKRA_GROUPS_BESIDE,  /* PREFIX.json, found beside the traces */
  CHAKRA_GROUPS_SOURCE,  /* the source's groups callback */
  CHAKRA_GROUPS_MANIFEST /* a shared set's manifest: its grid's rule (no file), or its table's groups file */
} chakra_groups_origin;

/* Reads the groups once (later calls return at once): errors name the
 * file, line and group; a member outside 0..ranks-1 is reported as a
 * groups file for another rank count. */
CHAKRA_API int chakra_set_load_groups(const chakra_set *s, chakra_error *err);
/* Where the groups come from, and the file (NULL when not a file). Known
 * once the set is open. */
CHAKRA_API chakra_groups_origin chakra_set_groups_origin(const chakra_set *s);
CHAKRA_API const char *chakra_set_groups_path(const chakra_set *s);
/* After chakra_set_load_groups(): the groups in definition order. */
CHAKRA_API size_t chakra_set_group_count(const chakra_set *s);
CHAKRA_API const char *chakra_set_group_name(const chakra_set *s, size_t i);
CHAKRA_API const uint32_t *chakra_set_group_members(const chakra_set *s, size_t i, uint32_t *n);
/* Index of the group called name, or -1. */
CHAKRA_API long chakra_set_group_find(const chakra_set *s, const char *name);
/* For a source's groups callback: one group (a name defined twice, or a
 * member outside the set, is an error). */
CHAKRA_API int chakra_set_add_group(chakra_set *s, const char *name, const uint32_t *ranks, uint32_t n,
                                    chakra_error *err);

/* ---- the shared form on disk (docs/format.md, "Shared trace sets") ----
 *
 * A set stored as rank classes: PREFIX.set.json, the manifest, and
 * PREFIX.class<k>.et, one template per class (an ordinary ET, written for
 * the class's representative rank: its group names and peers are that
 * rank's). The manifest says, for every rank, its class and how the
 * template's group names (pg_name) and peers (comm_src, comm_dst) become
 * the rank's own:
 *  - grid: ranks are the points of a grid of named axes (rank = mixed
 *    radix, first axis fastest); a class is a point on the class axes; a
 *    rank's binding translates its class representative's coordinates on
 *    the other axes to its own (modulo each axis's size), and group names
 *    are numbers given by rules (one group per combination of the other
 *    axes, numbered from `first` as STAGE numbers them). Nothing is stored
 *    per rank: a million ranks cost what eight do.
 *  - table: per rank its class and its value for each role of the class
 *    (the template's distinct group names, then peers, in order of first
 *    appearance); the groups are a comm-group file beside the manifest.
 * chakra_set_open() reads either form from PREFIX (PREFIX.set.json when it
 * exists); a manifest is read, checked and written here, so that writers
 * of the shared form (synth --shared, share, coll expand) make the same
 * files.
 *
 * Template names in a manifest are relative to the manifest's folder. A
 * manifest is immutable once read or built, except through the building
 * calls, and may be read from several threads at once. */
#define CHAKRA_SET_MANIFEST_VERSION 1

typedef struct chakra_manifest chakra_manifest;

typedef enum chakra_manifest_layout {
  CHAKRA_MANIFEST_GRID = 1, /* bindings by rule */
  CHAKRA_MANIFEST_TABLE = 2 /* bindings by table */
} chakra_manifest_layout;

/* "PREFIX.set.json" and "PREFIX.class<k>.et" in new memory (free() them),
 * NULL when out of memory. */
CHAKRA_API char *chakra_manifest_path_dup(const char *prefix);
CHAKRA_API char *chakra_class_path_dup(const char *prefix, uint32_t cls);

/* Reads and checks a manifest. Every problem is one line naming the file,
 * the line and the member ("g.set.json: line 7: layout.axes[1].size:
 * expected a whole number from 1"); an unknown "chakra_trace_set" version
 * is CHAKRA_EFORMAT naming the versions this library reads. */
CHAKRA_API int chakra_manifest_read(chakra_manifest **out, const char *path, chakra_error *err);
/* The same from len bytes of text; name names it in messages. */
CHAKRA_API int chakra_manifest_parse(chakra_manifest **out, const char *text, size_t len, const char *name,
                                     chakra_error *err);
/* NULL is allowed. */
CHAKRA_API void chakra_manifest_free(chakra_manifest *m);
/* The manifest a set was opened from (owned by the set), or NULL for
 * per-rank files and sources. */
CHAKRA_API const chakra_manifest *chakra_set_manifest(const chakra_set *s);

/* What a manifest says. cls < classes, rank < ranks. */
CHAKRA_API chakra_manifest_layout chakra_manifest_kind(const chakra_manifest *m);
CHAKRA_API uint32_t chakra_manifest_ranks(const chakra_manifest *m);
CHAKRA_API uint32_t chakra_manifest_classes(const chakra_manifest *m);
/* The template's name as the manifest writes it (relative to its folder). */
CHAKRA_API const char *chakra_manifest_template(const chakra_manifest *m, uint32_t cls);
CHAKRA_API uint32_t chakra_manifest_rep(const chakra_manifest *m, uint32_t cls);
CHAKRA_API uint32_t chakra_manifest_class_of(const chakra_manifest *m, uint32_t rank);
/* The group name rank uses where its class template says template_pg, and
 * the peer for template_peer. A name or peer the binding does not cover
 * (no grid group, no role of the class) is the template's. The string
 * lives as long as m. */
CHAKRA_API const char *chakra_manifest_bind_group(const chakra_manifest *m, uint32_t rank, const char *template_pg);
CHAKRA_API int32_t chakra_manifest_bind_peer(const chakra_manifest *m, uint32_t rank, int32_t template_peer);
/* The comm-group file (table layout) as written, or NULL. */
CHAKRA_API const char *chakra_manifest_groups_file(const chakra_manifest *m);

/* Grid layout: the axes (first fastest), which of them are class axes,
 * and the group rules (each: the axes a group spans, the other axes from
 * slowest to fastest, which number the groups, and the first number). */
CHAKRA_API uint32_t chakra_manifest_axes(const chakra_manifest *m);
CHAKRA_API const char *chakra_manifest_axis_name(const chakra_manifest *m, uint32_t axis);
CHAKRA_API uint32_t chakra_manifest_axis_size(const chakra_manifest *m, uint32_t axis);
CHAKRA_API int chakra_manifest_axis_is_class(const chakra_manifest *m, uint32_t axis);
CHAKRA_API size_t chakra_manifest_group_rules(const chakra_manifest *m);
/* Rule i's axes and order as axis indexes (*n receives the count) and its
 * first group number. */
CHAKRA_API const uint32_t *chakra_manifest_rule_axes(const chakra_manifest *m, size_t i, uint32_t *n);
CHAKRA_API const uint32_t *chakra_manifest_rule_order(const chakra_manifest *m, size_t i, uint32_t *n);
CHAKRA_API uint64_t chakra_manifest_rule_first(const chakra_manifest *m, size_t i);

/* Table layout: the roles of class cls (the template's distinct group
 * names and peers, in order of first appearance) and rank's value for
 * each. */
CHAKRA_API uint32_t chakra_manifest_group_roles(const chakra_manifest *m, uint32_t cls);
CHAKRA_API uint32_t chakra_manifest_peer_roles(const chakra_manifest *m, uint32_t cls);
CHAKRA_API const char *chakra_manifest_rank_group(const chakra_manifest *m, uint32_t rank, uint32_t role);
CHAKRA_API int32_t chakra_manifest_rank_peer(const chakra_manifest *m, uint32_t rank, uint32_t role);

/* Building one (writers of the shared form): a new manifest of `ranks`
 * ranks, then for a grid its axes (in order, first fastest), group rules
 * and classes (in class order: the class axes' coordinates as a mixed
 * radix, first class axis fastest); for a table its classes with their
 * roles, every rank's values and the groups file. Strings are copied.
 * Each call checks what it can at once (CHAKRA_EINVAL, one line);
 * chakra_manifest_check() checks the whole, as reading does. */
CHAKRA_API int chakra_manifest_new(chakra_manifest **out, chakra_manifest_layout kind, uint32_t ranks,
                                   chakra_error *err);
CHAKRA_API int chakra_manifest_copy(chakra_manifest **out, const chakra_manifest *m, chakra_error *err);
CHAKRA_API int chakra_manifest_add_axis(chakra_manifest *m, const char *name, uint32_t size, int class_axis,
                                        chakra_error *err);
CHAKRA_API int chakra_manifest_add_group_rule(chakra_manifest *m, const char *const *axes, uint32_t n_axes,
                                              const char *const *order, uint32_t n_order, uint64_t first,
                                              chakra_error *err);
/* Appends class (index: the classes before it). */
CHAKRA_API int chakra_manifest_add_class(chakra_manifest *m, const char *template_name, uint32_t rep,
                                         chakra_error *err);
CHAKRA_API int chakra_manifest_set_template(chakra_manifest *m, uint32_t cls, const char *template_name,
                                            chakra_error *err);
/* Table: class cls's roles; then each rank's class and values (n_groups
 * and n_peers of that class's roles). */
CHAKRA_API int chakra_manifest_set_roles(chakra_manifest *m, uint32_t cls, const char *const *groups,
                                         uint32_t n_groups, const int32_t *peers, uint32_t n_peers,
                                         chakra_error *err);
CHAKRA_API int chakra_manifest_set_rank(chakra_manifest *m, uint32_t rank, uint32_t cls, const char *const *groups,
                                        const int32_t *peers, chakra_error *err);
CHAKRA_API int chakra_manifest_set_groups_file(chakra_manifest *m, const char *path, chakra_error *err);
CHAKRA_API int chakra_manifest_check(const chakra_manifest *m, chakra_error *err);
/* Checks m and writes it to path (an output: temporary, then renamed,
 * under the program's output set; chakra/output.h) or to a sink. */
CHAKRA_API int chakra_manifest_write(const chakra_manifest *m, const char *path, chakra_error *err);
CHAKRA_API int chakra_manifest_write_to(const chakra_manifest *m, const chakra_sink *out, chakra_error *err);

/* ---- converting between the forms ----
 *
 * chakra_set_unshare: writes every rank of s as OUT.<r>.et with its
 * bindings applied (byte for byte what a per-rank writer writes for the
 * same graphs) and, when s has groups, OUT.json (the comm-group file), all
 * or none, on threads threads (0: one per CPU, at most 8).
 *
 * chakra_set_share: finds the classes of s (ranks whose graphs are equal
 * once their group names and peers are replaced by their roles), writes
 * OUT.class<k>.et, OUT.set.json (table layout) and, when s has groups,
 * OUT.json; each rank's binding is proven by re-encoding its template
 * under it and comparing every byte with the rank's own trace (a rank
 * that differs becomes a class of its own). *classes receives the count
 * (may be NULL). */
CHAKRA_API int chakra_set_unshare(const chakra_set *s, const char *out_prefix, unsigned threads, chakra_error *err);
CHAKRA_API int chakra_set_share(const chakra_set *s, const char *out_prefix, unsigned threads, uint32_t *classes,
                                chakra_error *err);

#ifdef __cplusplus
}
#endif
#endif
