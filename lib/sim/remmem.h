/* remmem.h - remote memory (private): ASTRA-sim's analytical model, a
 * transaction takes remote-mem-latency + floor(bytes / remote-mem-bw) ns;
 * per NPU independent, per node or for the whole pool one at a time, first
 * come first served. */
#ifndef CHAKRA_SIM_REMMEM_H
#define CHAKRA_SIM_REMMEM_H

#include "core.h"

/* One access of bytes from rank; done(s, obj, arg) runs when it ends. */
void remmem_access(sim *s, uint32_t rank, uint64_t bytes, sim_fn done, void *obj, uint64_t arg);
void remmem_free(sim *s);

#endif
