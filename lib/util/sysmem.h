/* sysmem.h - how much memory this process may use (private to libchakra).
 *
 * Commands whose cost grows much faster than their input (coll synth: the
 * messages of an all-gather grow with the square of the NPUs) estimate what
 * they need before starting and refuse what cannot fit, rather than run
 * for minutes and die out of memory. This is the "fit" they compare with. */
#ifndef CHAKRA_SYSMEM_H
#define CHAKRA_SYSMEM_H

#include <stdint.h>

/* The smallest of: the machine's physical memory, this process's address
 * space and data limits (RLIMIT_AS, RLIMIT_DATA) and its cgroup's
 * memory.max (cgroup v2), in bytes; *what names the one that binds
 * ("physical memory", "RLIMIT_AS", ...). UINT64_MAX when none is known. */
uint64_t sysmem_usable(const char **what);

#endif
