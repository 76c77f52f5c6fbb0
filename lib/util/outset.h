/* outset.h - the program's output set as the rest of libchakra sees it
 * (private; the public side is chakra/output.h).
 *
 * While a set is active (chakra_output_set_begin), every output a program
 * opens must be one it declared: outfile.c asks outset_claims() at open,
 * hands each finished output to outset_hold() at commit, and reports one
 * dropped unfinished with outset_lost(). Scratch files a library function
 * writes and reads back itself (replay's calibration microbenchmarks) are
 * opened inside outset_scratch_begin/end and committed at once. */
#ifndef CHAKRA_OUTSET_H
#define CHAKRA_OUTSET_H

#include "chakra/error.h"
#include "outfile.h"

/* 1: path is one of the active set's outputs (held until the set commits);
 * 0: no set is active, or inside a scratch scope (committed at once);
 * otherwise an error: an output the program did not declare. */
int outset_claims(const char *path, chakra_error *err);
/* Takes f (finished: written out and closed) into the active set. */
void outset_hold(outfile *f);
/* A claimed output was discarded before it was held: the set is no longer
 * whole, so its commit refuses. */
void outset_lost(const char *path);

void outset_scratch_begin(void);
void outset_scratch_end(void);

#endif
