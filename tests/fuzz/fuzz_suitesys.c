/* fuzz_suitesys.c - libFuzzer target for the suite's readers of a system
 * under test: chakra_suite_config (a system file's keys applied, a network
 * scaled to a workload's rank count) and chakra_suite_rules_closed (the
 * closed division's rules), which suite run and suite check apply to the
 * files a submitter gives.
 *
 * The input is a system JSON and a network file in one file, separated by
 * a line "%%NETWORK%%" (without it, the whole input is the system file and
 * the network is the reference one). Refusals and problems are one line;
 * what a configuration accepts, the rules read without an error. Crashes,
 * sanitizer reports and violated properties are findings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chakra/sim.h"
#include "chakra/suite.h"
#include "fuzz_common.h"

static const char SEP[] = "\n%%NETWORK%%\n";

static void one_line(const char *what, const char *s) {
  if (s && strchr(s, '\n')) {
    fprintf(stderr, "fuzz property violated: %s of more than one line: %s\n", what, s);
    abort();
  }
}

/* CHAKRA_FUZZ_VERBOSE=1 says what each input did (to check that seeds
 * reach the configurations and the rules). */
static void say(const char *what, uint32_t ranks, const char *detail) {
  if (getenv("CHAKRA_FUZZ_VERBOSE")) fprintf(stderr, "fuzz_suitesys: %s %u: %s\n", what, ranks, detail);
}

static void on_problem(void *ctx, const chakra_problem *p) {
  one_line("a rule's problem", p->what);
  ++*(uint64_t *)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *sep = fuzz_find_sep(data, size, SEP);
  size_t sys_n = sep ? (size_t)(sep - data) : size;
  char sys_path[64], net_path[64];
  int sfd = fuzz_input_file(data, sys_n, sys_path, sizeof sys_path), nfd = -1;
  if (sep) {
    const uint8_t *net = sep + sizeof SEP - 1;
    nfd = fuzz_input_file(net, size - (size_t)(net - data), net_path, sizeof net_path);
  }
  const char *network = sep ? net_path : NULL;
  /* a single NPU, the inner dimension cut, filled exactly, whole units refused, a large outer count */
  static const uint32_t ranks[] = {1, 8, 12, 64, 512};
  int configured = 0;
  chakra_error err;
  for (size_t i = 0; i < sizeof ranks / sizeof *ranks; i++) {
    chakra_sim_config *c = NULL;
    if (chakra_suite_config(&c, sys_path, network, ranks[i], &err) == 0) {
      if (!c) {
        fprintf(stderr, "fuzz property violated: a configuration accepted but not returned\n");
        abort();
      }
      configured = 1;
      chakra_sim_config_free(c);
      say("configured for ranks", ranks[i], "ok");
    } else {
      one_line("a configuration's refusal", err.msg);
      say("refused for ranks", ranks[i], err.msg);
    }
  }
  uint64_t problems = 0, seen = 0;
  if (chakra_suite_rules_closed(sys_path, network, on_problem, &seen, &problems, &err) == 0) {
    say("closed-division problems", (uint32_t)problems, "");
    if (problems != seen) {
      fprintf(stderr, "fuzz property violated: %llu problems counted, %llu reported\n", (unsigned long long)problems,
              (unsigned long long)seen);
      abort();
    }
  } else {
    one_line("the rules' refusal", err.msg);
    say("rules refused", 0, err.msg);
    if (configured) {
      fprintf(stderr, "fuzz property violated: a system and network configured, then refused by the rules: %s\n",
              err.msg);
      abort();
    }
  }
  close(sfd);
  if (nfd >= 0) close(nfd);
  return 0;
}
