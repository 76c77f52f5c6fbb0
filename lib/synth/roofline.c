/* roofline.c - roofline durations; see roofline.h. */
#include "roofline.h"

#include <math.h>

uint64_t roofline_micros(uint64_t flops, uint64_t bytes, double peak_tflops, double mem_bw_gbs) {
  if (!flops || !bytes || peak_tflops <= 0) return 0;
  double oi = (double)flops / (double)bytes, bw = mem_bw_gbs * 1e9, peak = peak_tflops * 1e12;
  double perf = bw * oi < peak ? bw * oi : peak;
  double ns = floor((double)flops / perf * 1e9);
  uint64_t us = (uint64_t)((ns + 500) / 1000);
  return us ? us : 1;
}
