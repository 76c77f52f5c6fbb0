/* fuzz_link.c - libFuzzer target for the Kineto trace reader and the
 * host/device linker (chakra_link), and for converting what it links.
 *
 * The input is a host ET and a Kineto trace in one file, separated by a
 * line "%%KINETO%%" (without it, the whole input is the Kineto trace and
 * the host ET is empty, which the linker must refuse cleanly). Whatever the
 * linker writes must be a host ET that the converter reads without a crash;
 * its refusal is fine, a sanitizer report is a finding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/ingest.h"
#include "fuzz_common.h"

static const char SEP[] = "\n%%KINETO%%\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *sep = fuzz_find_sep(data, size, SEP);
  size_t host_n = sep ? (size_t)(sep - data) : 0;
  const uint8_t *kin = sep ? sep + sizeof SEP - 1 : data;
  size_t kin_n = size - (size_t)(kin - data);
  char host_path[64], kin_path[64];
  int hfd = fuzz_input_file(data, host_n, host_path, sizeof host_path);
  int kfd = fuzz_input_file(kin, kin_n, kin_path, sizeof kin_path);
  const char *linked = fuzz_out("linked.json"), *out = fuzz_out("l.et");
  chakra_link_options lopt = {.rank = -1, .threads = 1, .allow_partial = 1};
  chakra_link_report lrep;
  chakra_error err;
  if (chakra_link(host_path, kin_path, linked, &lopt, &lrep, &err) == 0) {
    chakra_convert_options copt = {.threads = 1, .p2p_missing = CHAKRA_P2P_MISSING_DROP};
    chakra_convert_report crep;
    (void)chakra_convert_pytorch(linked, NULL, out, &copt, &crep, &err);
  }
  close(hfd);
  close(kfd);
  return 0;
}
