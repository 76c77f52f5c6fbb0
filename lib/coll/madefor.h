/* madefor.h - what a set of algorithm ETs was made for, and what to do and
 * say when a collective of another size or type runs it (private; chakra
 * sim's custom collectives and coll expand share it).
 *
 * coll gen, coll synth and coll from-msccl record the collective and the
 * size the files were made for in their GlobalMetadata ("collective", e.g.
 * "allreduce" or the XML's coll; "size", bytes, in the simulator's
 * comm_size convention). The reference converter's files (from-msccl
 * --compat, ASTRA-sim's shipped example) record the collective only. With
 * --custom-collective-scaling=scale a collective of another size runs the
 * algorithm with every message (and, in the simulator, compute time)
 * multiplied by its size / the made-for size, rounded down; as-is runs it
 * as made, as ASTRA-sim does. Either way the difference is reported. Files
 * without a size run as made in both modes. */
#ifndef CHAKRA_COLL_MADEFOR_H
#define CHAKRA_COLL_MADEFOR_H

#include <stddef.h>
#include <stdint.h>

#include "chakra/trace.h"

typedef struct coll_madefor {
  int coll;       /* chakra_coll_type, or -1 when not recorded or not one of the four */
  uint64_t size;  /* bytes, or 0 when not recorded */
} coll_madefor;

/* Reads "collective" and "size" from m (may be NULL). */
void coll_madefor_read(const chakra_metadata *m, coll_madefor *out);

/* The factor num / den that a collective of `size` bytes scales the
 * algorithm by: size / made-for size under scale when that size is
 * recorded, else 1 / 1. */
void coll_madefor_factor(const coll_madefor *f, uint64_t size, int as_is, uint64_t *num, uint64_t *den);

/* When a collective of type coll (chakra_coll_type) and `size` bytes
 * differs from what the algorithm was made for, writes the end of the
 * one-line warning ("made for allgather of 1048576 bytes: another
 * collective; it runs scaled by ...") to buf and returns 1; else returns 0.
 * Without a recorded size, a size can only be told apart from `other`,
 * another size the same algorithm runs (0: none yet): two sizes cannot
 * both be the one it was made for. */
int coll_madefor_note(const coll_madefor *f, int coll, uint64_t size, uint64_t other, int as_is, char *buf,
                      size_t n);

#endif
