/* cmp.h - the comparators of libchakra (private): ascending order of
 * plain numbers for qsort and bsearch. cmp_u32 and cmp_u64 also order
 * records by a leading uint32_t / uint64_t key (ties left to the caller:
 * qsort is not stable). */
#ifndef CHAKRA_CMP_H
#define CHAKRA_CMP_H

int cmp_u32(const void *a, const void *b);
int cmp_u64(const void *a, const void *b);
int cmp_i64(const void *a, const void *b);
/* NaNs are not ordered: callers keep them out. */
int cmp_double(const void *a, const void *b);
/* Records that start with two uint64_t, by the first, then the second. */
int cmp_u64_pair(const void *a, const void *b);

#endif
