/* test_opts.c - pins the CLI's option parser (cli/opts.c): both spellings
 * of every option, short options, "--", positional arguments in order,
 * one-line errors with exit status 2 for unknown options, missing and bad
 * values (counts take digits only; sizes take binary suffixes), choices,
 * repeatable options, required options, and help generated from the table. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "opts.h"

/* The destinations of the test command's options. */
typedef struct dests {
  int verbose, mode, color;
  const char *out, *name;
  uint64_t count, size;
  uint32_t threads;
  uint8_t small;
  int sint;
  int64_t rank;
  double scale;
  cli_list tags;
} dests;

static const cli_choice colors[] = {{"red", 1}, {"green", 2}, {"blue", 3}, {NULL, 0}};

/* A parse of a command with one option of every kind; output captured. */
typedef struct run {
  dests d;
  cli_args pos;
  int status;
  char *out, *err;
  size_t out_len, err_len;
  char *argv[32];
} run;

static void fill_opts(dests *d, cli_opt *opts) {
  const cli_opt table[] = {
      {.name = "verbose", .short_name = 'v', .kind = CLI_OPT_FLAG, .dest = &d->verbose, .help = "say more"},
      {.name = "fast", .kind = CLI_OPT_FLAG, .dest = &d->mode, .value = 7, .help = "mode 7"},
      {.name = "output", .short_name = 'o', .kind = CLI_OPT_STRING, .dest = &d->out, .metavar = "FILE",
       .help = "where to write", .def = "standard output"},
      {.name = "name", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &d->name, .metavar = "NAME",
       .help = "a name"},
      {.name = "count", .alias = "num|n_count", .short_name = 'n', .kind = CLI_OPT_COUNT, .dest = CLI_INT(&d->count), .help = "a count"},
      {.name = "threads", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&d->threads), .min = 1, .max = 64,
       .help = "threads", .def = "CPUs"},
      {.name = "small", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&d->small), .help = "fits a byte"},
      {.name = "sint", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&d->sint), .help = "fits an int"},
      {.name = "rank", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&d->rank), .help = "fits an int64"},
      {.name = "size", .kind = CLI_OPT_SIZE, .dest = CLI_INT(&d->size), .help = "bytes"},
      {.name = "scale", .kind = CLI_OPT_DOUBLE, .flags = CLI_OPT_POSITIVE, .dest = &d->scale, .help = "a factor"},
      {.name = "color", .kind = CLI_OPT_CHOICE, .dest = &d->color, .choices = colors, .help = "a color",
       .def = "red"},
      {.name = "tag", .short_name = 't', .kind = CLI_OPT_LIST, .dest = &d->tags, .metavar = "TAG", .help = "a tag"},
      {0}};
  memcpy(opts, table, sizeof table);
}

#define NOPTS 14

/* Runs "t ARGS..." (NULL-terminated) through cli_parse_to. */
static void parse(run *r, const cli_command *proto, ...) {
  cli_opt opts[NOPTS];
  memset(r, 0, sizeof *r);
  r->d.rank = -1;
  fill_opts(&r->d, opts);
  cli_command cmd = *proto;
  cmd.opts = opts;
  int argc = 0;
  r->argv[argc++] = "t";
  va_list ap;
  va_start(ap, proto);
  for (char *a; (a = va_arg(ap, char *));) r->argv[argc++] = a;
  va_end(ap);
  FILE *out = open_memstream(&r->out, &r->out_len), *err = open_memstream(&r->err, &r->err_len);
  assert_non_null(out);
  assert_non_null(err);
  r->status = cli_parse_to(&cmd, argc, r->argv, &r->pos, out, err);
  fclose(out);
  fclose(err);
}

static void done(run *r) {
  cli_list_free(&r->d.tags);
  free(r->out);
  free(r->err);
}

static const cli_command any_args = {.name = "t", .args = "FILE...", .min_args = 0, .max_args = -1};

/* Parses one option (and --name x) and expects a one-line error naming
 * the option and containing `want`. */
static void expect_error(const char *opt, const char *val, const char *want) {
  run r;
  parse(&r, &any_args, "--name", "x", opt, val, NULL);
  assert_int_equal(r.status, 2);
  if (!strstr(r.err, want) || !strstr(r.err, "chakra t: ") || strchr(r.err, '\n') != r.err + r.err_len - 1)
    fail_msg("%s %s: got '%s', wanted '%s'", opt, val ? val : "", r.err, want);
  assert_int_equal(r.out_len, 0);
  done(&r);
}

static void test_opts_long_options_take_equals_or_the_next_argument(void **state) {
  (void)state;
  run r;
  parse(&r, &any_args, "--name=a", "--output", "o.et", "--count=12", "--threads", "4", "--scale=2.5", "--color",
        "green", NULL);
  assert_int_equal(r.status, CLI_PROCEED);
  assert_string_equal(r.d.name, "a");
  assert_string_equal(r.d.out, "o.et");
  assert_int_equal(r.d.count, 12);
  assert_int_equal(r.d.threads, 4);
  assert_true(r.d.scale == 2.5);
  assert_int_equal(r.d.color, 2);
  assert_int_equal(r.pos.n, 0);
  done(&r);
}

static void test_opts_aliases_are_other_long_names_of_the_same_option(void **state) {
  (void)state;
  run r;
  parse(&r, &any_args, "--name", "a", "--num=3", NULL);
  assert_int_equal(r.status, CLI_PROCEED);
  assert_int_equal(r.d.count, 3);
  done(&r);
  parse(&r, &any_args, "--name", "a", "--n_count", "9", NULL);
  assert_int_equal(r.status, CLI_PROCEED);
  assert_int_equal(r.d.count, 9);
  done(&r);
  expect_error("--n_count", "x", "--n_count: expected a whole number");
  /* a prefix or a piece of the list is no alias */
  expect_error("--nu", "1", "--nu: unknown option");
  expect_error("--num|n_count", "1", "unknown option");
  parse(&r, &any_args, "--help", NULL);
  assert_non_null(strstr(r.out, "also --num, --n_count"));
  done(&r);
}

static void test_opts_short_options_take_the_next_argument_or_an_attached_value(void **state) {
  (void)state;
  run r;
  parse(&r, &any_args, "--name", "a", "-o", "x.et", "-n7", "-v", NULL);
  assert_int_equal(r.status, CLI_PROCEED);
  assert_string_equal(r.d.out, "x.et");
  assert_int_equal(r.d.count, 7);
  assert_int_equal(r.d.verbose, 1);
  done(&r);
}

static void test_opts_a_value_may_start_with_a_dash(void **state) {
  (void)state;
  run r;
  parse(&r, &any_args, "--name", "-", "-o", "-", NULL);
  assert_int_equal(r.status, CLI_PROCEED);
  assert_string_equal(r.d.name, "-");
  assert_string_equal(r.d.out, "-");
  done(&r);
}

static void test_opts_positionals_keep_their_order_and_double_dash_ends_options(void **state) {
  (void)state;
  run r;
  parse(&r, &any_args, "a", "--name", "n", "-", "b", "--", "-v", "--count=3", NULL);
  assert_int_equal(r.status, CLI_PROCEED);
  assert_int_equal(r.pos.n, 5);
  const char *want[] = {"a", "-", "b", "-v", "--count=3"};
  for (int i = 0; i < 5; i++) assert_string_equal(r.pos.v[i], want[i]);
  assert_int_equal(r.d.verbose, 0);
  assert_int_equal(r.d.count, 0);
  done(&r);
}

static void test_opts_flags_store_their_value_and_the_last_value_wins(void **state) {
  (void)state;
  run r;
  parse(&r, &any_args, "--name", "a", "--fast", "--count", "1", "--count=2", "--name=b", NULL);
  assert_int_equal(r.status, CLI_PROCEED);
  assert_int_equal(r.d.mode, 7);
  assert_int_equal(r.d.count, 2);
  assert_string_equal(r.d.name, "b");
  done(&r);
}

static void test_opts_unknown_options_are_one_line_naming_them(void **state) {
  (void)state;
  expect_error("--bogus", NULL, "--bogus: unknown option; 'chakra t --help' lists them");
  expect_error("--bogus=1", NULL, "--bogus: unknown option");
  expect_error("-x", NULL, "-x: unknown option");
  expect_error("-vq", NULL, "-vq: unknown option"); /* flags do not bundle */
  expect_error("--verb", NULL, "--verb: unknown option"); /* no abbreviations */
}

static void test_opts_missing_values_and_values_given_to_flags_are_errors(void **state) {
  (void)state;
  expect_error("--count", NULL, "--count: expected a value (N) after it");
  expect_error("-o", NULL, "-o: expected a value (FILE) after it");
  expect_error("--verbose=1", NULL, "--verbose: takes no value (got '1')");
}

static void test_opts_counts_reject_suffixes_signs_blanks_and_garbage(void **state) {
  (void)state;
  const char *bad[] = {"1K", "12abc", "-3", "+3", "", " 5", "5 ", "0x10", "1.5", "1e3", "K"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char want[64];
    snprintf(want, sizeof want, "--count: expected a whole number, got '%s'", bad[i]);
    expect_error("--count", bad[i], want);
  }
}

static void test_opts_counts_reject_values_beyond_the_range_or_the_destination(void **state) {
  (void)state;
  expect_error("--count", "18446744073709551616", "--count: '18446744073709551616' is out of range: expected 0 to "
                                                  "18446744073709551615");
  expect_error("--threads", "0", "--threads: '0' is out of range: expected 1 to 64");
  expect_error("--threads", "65", "--threads: '65' is out of range: expected 1 to 64");
  expect_error("--small", "256", "--small: '256' is out of range: expected 0 to 255");
  expect_error("--sint", "2147483648", "expected 0 to 2147483647");
  expect_error("--rank", "9223372036854775808", "expected 0 to 9223372036854775807");
}

static void test_opts_counts_store_every_width_up_to_its_maximum(void **state) {
  (void)state;
  run r;
  parse(&r, &any_args, "--name=a", "--count=18446744073709551615", "--small=255", "--sint=2147483647",
        "--rank=9223372036854775807", "--threads=64", NULL);
  assert_int_equal(r.status, CLI_PROCEED);
  assert_true(r.d.count == UINT64_MAX);
  assert_int_equal(r.d.small, 255);
  assert_int_equal(r.d.sint, INT_MAX);
  assert_true(r.d.rank == INT64_MAX);
  assert_int_equal(r.d.threads, 64);
  done(&r);
}

static void test_opts_sizes_take_binary_suffixes(void **state) {
  (void)state;
  struct {
    const char *in;
    uint64_t want;
  } ok[] = {{"0", 0},           {"1048576", 1048576}, {"1K", 1024},         {"1k", 1024},
            {"1M", 1048576},    {"1MiB", 1048576},    {"1MB", 1048576},     {"3G", 3ull << 30},
            {"2T", 2ull << 40}, {"17B", 17},          {"16777215T", 16777215ull << 40}};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    run r;
    parse(&r, &any_args, "--name=a", "--size", ok[i].in, NULL);
    assert_int_equal(r.status, CLI_PROCEED);
    if (r.d.size != ok[i].want) fail_msg("--size %s: %llu", ok[i].in, (unsigned long long)r.d.size);
    done(&r);
  }
  const char *bad[] = {"1iB", "1X", "M", "", "-1", "1Mi", "1MBB", "1 M"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) expect_error("--size", bad[i], "--size: expected a byte count");
  expect_error("--size", "16777216T", "--size: '16777216T' is out of range");
}

static void test_opts_doubles_are_finite_and_positive_when_asked(void **state) {
  (void)state;
  const char *bad[] = {"-1", "0", "nan", "inf", "1e999", "", "1x", " 1"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    expect_error("--scale", bad[i], "--scale: expected a positive number");
}

static void test_opts_choices_are_case_insensitive_and_errors_list_them(void **state) {
  (void)state;
  run r;
  parse(&r, &any_args, "--name=a", "--color=BLUE", NULL);
  assert_int_equal(r.status, CLI_PROCEED);
  assert_int_equal(r.d.color, 3);
  done(&r);
  expect_error("--color", "purple", "--color: expected red, green or blue, got 'purple'");
}

static void test_opts_repeatable_options_collect_every_value_in_order(void **state) {
  (void)state;
  run r;
  parse(&r, &any_args, "--name=a", "-t", "x", "--tag=y", "--tag", "z", "-tw", NULL);
  assert_int_equal(r.status, CLI_PROCEED);
  assert_int_equal(r.d.tags.n, 4);
  const char *want[] = {"x", "y", "z", "w"};
  for (int i = 0; i < 4; i++) assert_string_equal(r.d.tags.items[i], want[i]);
  done(&r);
}

static void test_opts_required_options_and_argument_counts_are_checked(void **state) {
  (void)state;
  run r;
  parse(&r, &any_args, NULL);
  assert_int_equal(r.status, 2);
  assert_string_equal(r.err, "chakra t: --name: required, but not given (expected --name NAME)\n");
  done(&r);
  static const cli_command one = {.name = "t", .args = "IN", .min_args = 1, .max_args = 1};
  parse(&r, &one, "--name=a", NULL);
  assert_int_equal(r.status, 2);
  assert_string_equal(r.err, "chakra t: missing arguments: expected IN\n");
  done(&r);
  parse(&r, &one, "--name=a", "a", "b", NULL);
  assert_int_equal(r.status, 2);
  assert_string_equal(r.err, "chakra t: 'b': unexpected argument (expected IN)\n");
  done(&r);
}

static void test_opts_help_is_generated_from_the_table(void **state) {
  (void)state;
  static const cli_command cmd = {.name = "t", .args = "FILE...", .max_args = -1, .about = "About t.\n",
                                  .footer = "Footer.\n"};
  const char *forms[] = {"--help", "-h"};
  for (int f = 0; f < 2; f++) {
    run r;
    parse(&r, &cmd, "--count=bad", forms[f], NULL);
    /* the bad count comes first and is reported */
    assert_int_equal(r.status, 2);
    done(&r);
    parse(&r, &cmd, forms[f], "--count=garbage", NULL);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.err_len, 0);
    assert_true(strncmp(r.out, "usage: chakra t ", 16) == 0);
    const char *want[] = {"--verbose", "-v, --verbose", "--fast", "-o, --output FILE", "(default: standard output)",
                          "--name NAME", "(required)", "-n, --count N", "--threads N", "(default: CPUs)",
                          "--small N", "--size BYTES", "--scale X", "--color red|green|blue", "-t, --tag TAG",
                          "repeatable", "-h, --help", "About t.", "Footer.", "[-o FILE]",
                          "[-n N]", "[-v]", "[-t TAG]...", "FILE...\n"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
      if (!strstr(r.out, want[i])) fail_msg("help lacks '%s':\n%s", want[i], r.out);
    for (const char *line = r.out; *line;) {
      size_t len = strcspn(line, "\n");
      if (len > 79) fail_msg("help line longer than 79 columns: %.*s", (int)len, line);
      line += len + (line[len] != 0);
    }
    done(&r);
  }
}

static void test_opts_equals_style_usage_shows_the_astra_sim_spelling(void **state) {
  (void)state;
  static const cli_command cmd = {.name = "t", .max_args = 0, .show_equals = 1};
  run r;
  parse(&r, &cmd, "--help", NULL);
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "--name=NAME"));
  assert_non_null(strstr(r.out, "[--output=FILE]"));
  done(&r);
}

static void test_opts_number_parsers_alone(void **state) {
  (void)state;
  uint64_t v;
  assert_int_equal(cli_parse_count("42", &v), 0);
  assert_int_equal(v, 42);
  assert_int_equal(cli_parse_count("42K", &v), -1);
  assert_int_equal(cli_parse_count("99999999999999999999", &v), -2);
  assert_int_equal(cli_parse_bytes("4KiB", &v), 0);
  assert_int_equal(v, 4096);
  assert_int_equal(cli_parse_bytes("99999999999999999999", &v), -2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_opts_long_options_take_equals_or_the_next_argument),
      cmocka_unit_test(test_opts_aliases_are_other_long_names_of_the_same_option),
      cmocka_unit_test(test_opts_short_options_take_the_next_argument_or_an_attached_value),
      cmocka_unit_test(test_opts_a_value_may_start_with_a_dash),
      cmocka_unit_test(test_opts_positionals_keep_their_order_and_double_dash_ends_options),
      cmocka_unit_test(test_opts_flags_store_their_value_and_the_last_value_wins),
      cmocka_unit_test(test_opts_unknown_options_are_one_line_naming_them),
      cmocka_unit_test(test_opts_missing_values_and_values_given_to_flags_are_errors),
      cmocka_unit_test(test_opts_counts_reject_suffixes_signs_blanks_and_garbage),
      cmocka_unit_test(test_opts_counts_reject_values_beyond_the_range_or_the_destination),
      cmocka_unit_test(test_opts_counts_store_every_width_up_to_its_maximum),
      cmocka_unit_test(test_opts_sizes_take_binary_suffixes),
      cmocka_unit_test(test_opts_doubles_are_finite_and_positive_when_asked),
      cmocka_unit_test(test_opts_choices_are_case_insensitive_and_errors_list_them),
      cmocka_unit_test(test_opts_repeatable_options_collect_every_value_in_order),
      cmocka_unit_test(test_opts_required_options_and_argument_counts_are_checked),
      cmocka_unit_test(test_opts_help_is_generated_from_the_table),
      cmocka_unit_test(test_opts_equals_style_usage_shows_the_astra_sim_spelling),
      cmocka_unit_test(test_opts_number_parsers_alone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
