/* roofline.h - compute durations from the roofline chakra sim uses, for
 * the generators that write duration_micros (synth, gen dlrm; private to
 * libchakra). */
#ifndef CHAKRA_SYNTH_ROOFLINE_H
#define CHAKRA_SYNTH_ROOFLINE_H

#include <stdint.h>

/* Microseconds for flops over bytes moved: flops / min(bandwidth x
 * flops/bytes, peak), TFLOP/s and GB/s with GB = 10^9, rounded to the
 * nearest microsecond and at least 1; 0 without work, bytes or a peak. */
uint64_t roofline_micros(uint64_t flops, uint64_t bytes, double peak_tflops, double mem_bw_gbs);

#endif
