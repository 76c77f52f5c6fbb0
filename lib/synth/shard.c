/* shard.c - STAGE's collective matcher over symbolic layouts; see shard.h. */
#include "shard.h"

enum { ST_DUP, ST_PART, ST_PSUM };
enum { CT_ALL_REDUCE = 0, CT_ALL_GATHER = 2, CT_ALL_TO_ALL = 6, CT_REDUCE_SCATTER = 7 };

static int state(const sx_expr *dims, int ndims, const sx_expr *hidden, int sym, int *dim) {
  for (int i = 0; i < ndims; i++)
    if (dims[i].syms & (1u << sym)) {
      *dim = i;
      return ST_PART;
    }
  *dim = -1;
  return hidden->syms & (1u << sym) ? ST_PSUM : ST_DUP;
}

int shard_edge(const sg_config *cfg, const sg_rowinfo *prod, const sg_rowinfo *cons, int e,
               const char *name, shard_coll out[4], int *n, chakra_error *err) {
  *n = 0;
  for (int p = 0; p < SX_NPAR; p++) {
    if (cfg->deg[p] <= 1) continue;
    int pd, cd;
    int ps = state(prod->dims, prod->ndims, &prod->hidden, SX_PAR_FIRST + p, &pd);
    int cs = state(cons->ddims[e], cons->nddims[e], &cons->dhidden[e], SX_PAR_FIRST + p, &cd);
    int type = -1;
    if (cs == ST_PSUM && ps != ST_PSUM)
      return chakra_error_set(err, CHAKRA_EINVAL, "template: %s input %d cannot become a partial sum over %s",
                              name, e + 1, sx_symbol_name(SX_PAR_FIRST + p));
    if (ps == ST_PART && cs == ST_DUP) type = CT_ALL_GATHER;
    else if (ps == ST_PART && cs == ST_PART && pd != cd) type = CT_ALL_TO_ALL;
    else if (ps == ST_PSUM && cs == ST_DUP) type = CT_ALL_REDUCE;
    else if (ps == ST_PSUM && cs == ST_PART) type = CT_REDUCE_SCATTER;
    if (type >= 0) {
      out[*n].comm_type = (uint8_t)type;
      out[*n].dim = (uint8_t)p;
      ++*n;
    }
  }
  return 0;
}
