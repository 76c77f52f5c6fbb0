/* compat.c - the reference tools' commands (mlcommons/chakra's
 * chakra_jsonizer, chakra_converter, chakra_trace_link, chakra_visualizer,
 * chakra_timeline_visualizer, chakra_generator), each the chakra command that does its work under the
 * reference's flags: the chakra program run under one of their names (cmake
 * --install links them to it) parses them and runs that command.
 * docs/compat.md says where the results differ by design. */
#include "compat.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chakra/gen.h"
#include "chakra/output.h"
#include "chakra/timeline.h"
#include "cli.h"

extern char **environ;

/* Runs chakra with the n words of argv, as if typed after "chakra". */
static int run(int n, char **argv) {
  cli_set_program("chakra");
  return cli_run_command(n, argv);
}

/* The reference tool's flags parsed; CLI_PROCEED to go on. */
static int parse(const char *tool, const char *about, const cli_opt *opts, int argc, char **argv) {
  cli_set_program(tool);
  const cli_command cmd = {.name = "", .about = about, .opts = opts, .max_args = 0};
  cli_args pos;
  int st = cli_parse_to(&cmd, argc, argv, &pos, stdout, stderr);
  return st == CLI_PROCEED || st != 0 ? st : cli_stdout_end(0);
}

static int jsonizer(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  const cli_opt opts[] = {
      {.name = "input_filename", .alias = "input-filename", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,
       .dest = &in, .metavar = "ET", .help = "the trace"},
      {.name = "output_filename", .alias = "output-filename", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,
       .dest = &out, .metavar = "JSON", .help = "the JSON written, as chakra_jsonizer writes it"},
      {0}};
  int st = parse("chakra_jsonizer", "chakra jsonize --compat under the reference's flags (docs/compat.md).\n", opts,
                 argc, argv);
  if (st != CLI_PROCEED) return st;
  char *words[] = {"jsonize", "--compat", (char *)in, "-o", (char *)out, NULL};
  return run(5, words);
}

static int trace_link(int argc, char **argv) {
  const char *host = NULL, *device = NULL, *out = NULL, *rank = NULL, *level = NULL;
  const cli_opt opts[] = {
      {.name = "chakra-host-trace", .alias = "chakra_host_trace", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,
       .dest = &host, .metavar = "HOST.json", .help = "the PyTorch host (Chakra host) trace"},
      {.name = "chakra-device-trace", .alias = "chakra_device_trace", .kind = CLI_OPT_STRING,
       .flags = CLI_OPT_REQUIRED, .dest = &device, .metavar = "KINETO.json", .help = "the Kineto (device) trace"},
      {.name = "rank", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &rank, .metavar = "N",
       .help = "the traces' rank"},
      {.name = "output-file", .alias = "output_file", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &out,
       .metavar = "LINKED.json", .help = "the linked trace written"},
      {.name = "log-level", .alias = "log_level", .kind = CLI_OPT_STRING, .dest = &level, .metavar = "LEVEL",
       .help = "WARNING, ERROR or CRITICAL: quiet (-q); DEBUG, INFO: the summary line", .def = "INFO"},
      {0}};
  int st = parse("chakra_trace_link", "chakra link under the reference's flags (docs/compat.md).\n", opts, argc, argv);
  if (st != CLI_PROCEED) return st;
  int quiet = level && (strcasecmp(level, "WARNING") == 0 || strcasecmp(level, "ERROR") == 0 ||
                        strcasecmp(level, "CRITICAL") == 0);
  char *words[] = {"link", "--host", (char *)host, "--device", (char *)device, "--rank", (char *)rank,
                   "-o", (char *)out, "-q", NULL};
  return run(quiet ? 10 : 9, words);
}

static int converter_pytorch(const char *log, int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  int simulate = 0;
  const cli_opt opts[] = {
      {.name = "input", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &in, .metavar = "LINKED.json",
       .help = "the linked host + device trace (chakra_trace_link's output), or a host trace alone"},
      {.name = "output", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &out, .metavar = "ET",
       .help = "the trace written, byte for byte the reference converter's (chakra convert --compat)"},
      {.name = "simulate", .kind = CLI_OPT_FLAG, .dest = &simulate,
       .help = "accepted; the reference's operator replay is not run (chakra sim simulates the output)"},
      {0}};
  int st = parse("chakra_converter PyTorch", "chakra convert pytorch --compat under the reference's flags.\n", opts,
                 argc, argv);
  if (st != CLI_PROCEED) return st;
  char *words[] = {"convert", "pytorch", (char *)in, "-o", (char *)out, "--compat", "--log", (char *)log, NULL};
  st = run(log ? 8 : 6, words);
  if (simulate && st == 0)
    cli_note("--simulate: the reference's operator-by-operator replay is not run; 'chakra sim' simulates %s and "
             "'chakra timeline' draws its timing (docs/compat.md)",
             out);
  return st;
}

static int converter_text(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *npus = NULL, *passes = NULL;
  const cli_opt opts[] = {
      {.name = "input", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &in, .metavar = "IN.txt",
       .help = "the ASTRA-sim text workload"},
      {.name = "output", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &out, .metavar = "PREFIX",
       .help = "writes PREFIX.0.et .. PREFIX.<N-1>.et, as the reference does"},
      {.name = "num-npus", .alias = "num_npus", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED, .dest = &npus,
       .metavar = "N", .help = "the number of traces"},
      {.name = "num-passes", .alias = "num_passes", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,
       .dest = &passes, .metavar = "P", .help = "training iterations"},
      {0}};
  int st = parse("chakra_converter Text", "chakra convert text --compat under the reference's flags.\n", opts, argc,
                 argv);
  if (st != CLI_PROCEED) return st;
  char *words[] = {"convert", "text", (char *)in, "-o", (char *)out, "--num-npus", (char *)npus,
                   "--num-passes", (char *)passes, "--compat", NULL};
  return run(10, words);
}

/* [--log-filename F] PyTorch|Text ...: the reference's top-level option,
 * then its subcommand. */
static int converter(int argc, char **argv) {
  const char *log = NULL;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (strcmp(argv[i], "--log-filename") == 0 && i + 1 < argc) log = argv[++i];
    else if (strncmp(argv[i], "--log-filename=", 15) == 0) log = argv[i] + 15;
    else if (cli_is_help(argv[i])) break;
    else {
      cli_set_program("chakra_converter");
      cli_error("%s: unknown option before the input type; expected --log-filename FILE, then PyTorch or Text",
                argv[i]);
      return CLI_EXIT_ERROR;
    }
  }
  if (i < argc && strcmp(argv[i], "PyTorch") == 0) return converter_pytorch(log, argc - i, argv + i);
  if (i < argc && strcmp(argv[i], "Text") == 0) return converter_text(argc - i, argv + i);
  int help = i < argc && cli_is_help(argv[i]);
  fprintf(help ? stdout : stderr,
          "%susage: chakra_converter [--log-filename FILE] {PyTorch,Text} ...\n"
          "  PyTorch --input LINKED.json --output OUT.et [--simulate]   (chakra convert pytorch --compat)\n"
          "  Text --input IN.txt --output PREFIX --num-npus N --num-passes P   (chakra convert text --compat)\n"
          "--log-filename FILE: chakra convert --log FILE (one line per node); none by default.\n",
          help ? "" : "chakra_converter: expected PyTorch or Text\n");
  return help ? cli_stdout_end(0) : CLI_EXIT_ERROR;
}

static int ends_with(const char *s, const char *end) {
  size_t n = strlen(s), m = strlen(end);
  return n >= m && strcmp(s + n - m, end) == 0;
}

/* Graphviz's dot renders the DOT source at src as PDF at out (through a
 * temporary beside it, so out is whole or untouched). */
static int render_pdf(const char *src, const char *out) {
  size_t n = strlen(out) + 32;
  char *tmp = malloc(n);
  if (!tmp) return cli_error("out of memory"), CLI_EXIT_ERROR;
  snprintf(tmp, n, "%s.chakra-pdf.%ld", out, (long)getpid());
  char *args[] = {"dot", "-Tpdf", (char *)src, "-o", tmp, NULL};
  pid_t pid;
  int status = 0, rc = posix_spawnp(&pid, "dot", NULL, NULL, args, environ);
  if (rc == 0 && waitpid(pid, &status, 0) < 0) rc = errno;
  if (rc || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    cli_error("%s: Graphviz 'dot -Tpdf' %s; the DOT source is %s", out,
              rc ? "could not be run (apt install graphviz)" : "failed", src);
    unlink(tmp);
    free(tmp);
    return CLI_EXIT_ERROR;
  }
  rc = rename(tmp, out) ? errno : 0;
  if (rc) cli_error("%s: cannot put the PDF in place: %s", out, strerror(rc)), unlink(tmp);
  free(tmp);
  return rc ? CLI_EXIT_ERROR : 0;
}

/* Refuses out when it is in: the reference tools' flags name no output to
 * the generic check, and a renamed temporary would replace the input. */
static int not_the_input(const char *out, const char *in) {
  chakra_error err = {0};
  return chakra_output_check(out, (const char *[]){in}, 1, &err) ? cli_fail(&err) : 0;
}

static int visualizer(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  const cli_opt opts[] = {
      {.name = "input_filename", .alias = "input-filename", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,
       .dest = &in, .metavar = "ET", .help = "the trace"},
      {.name = "output_filename", .alias = "output-filename", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,
       .dest = &out, .metavar = "OUT", .help = "OUT.dot, OUT.graphml or OUT.pdf (Graphviz renders the PDF)"},
      {0}};
  int st = parse("chakra_visualizer", "chakra dot of the whole trace under the reference's flags.\n", opts, argc,
                 argv);
  if (st != CLI_PROCEED) return st;
  int pdf = ends_with(out, ".pdf"), graphml = ends_with(out, ".graphml");
  if (!pdf && !graphml && !ends_with(out, ".dot")) {
    cli_error("--output_filename: %s: expected a name ending in .pdf, .dot or .graphml", out);
    return CLI_EXIT_ERROR;
  }
  if (!pdf) {
    char *words[] = {"dot", "--max-nodes", "0", (char *)in, "-o", (char *)out, "--graphml", NULL};
    return run(graphml ? 7 : 6, words);
  }
  if ((st = not_the_input(out, in)) != 0) return st;
  size_t n = strlen(out) + 48;
  char *src = malloc(n);
  if (!src) return cli_error("out of memory"), CLI_EXIT_ERROR;
  snprintf(src, n, "%s.chakra-dot.%ld.dot", out, (long)getpid()); /* the DOT source, removed once rendered */
  char *words[] = {"dot", "--max-nodes", "0", (char *)in, "-o", src, NULL};
  st = run(6, words);
  if (st == 0) {
    st = render_pdf(src, out);
    if (st == 0) unlink(src);
  }
  free(src);
  return st;
}

/* MHz as the reference takes it (a whole number), or with a unit as its
 * USER_GUIDE.md writes it ("1.5GHz", "1500MHz"); <= 0 if neither. */
static double frequency_mhz(const char *s) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || !(v > 0) || v > 1e9) return -1;
  if (!*end || strcasecmp(end, "MHz") == 0) return v;
  if (strcasecmp(end, "GHz") == 0) return v * 1000;
  if (strcasecmp(end, "kHz") == 0) return v / 1000;
  return -1;
}

static int timeline_visualizer(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *freq = NULL, *log = NULL;
  uint32_t npus = 0;
  const cli_opt opts[] = {
      {.name = "input_filename", .alias = "input-filename", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,
       .dest = &in, .metavar = "LOG.csv", .help = "the simulator's issue/callback log"},
      {.name = "output_filename", .alias = "output-filename", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,
       .dest = &out, .metavar = "OUT.json", .help = "the trace-event JSON written (chrome://tracing, Perfetto)"},
      {.name = "num_npus", .alias = "num-npus", .kind = CLI_OPT_COUNT, .flags = CLI_OPT_REQUIRED,
       .dest = CLI_INT(&npus), .min = 1, .max = 1000000, .help = "the NPUs of the log"},
      {.name = "npu_frequency", .alias = "npu-frequency", .kind = CLI_OPT_STRING, .flags = CLI_OPT_REQUIRED,
       .dest = &freq, .metavar = "MHZ", .help = "MHz (1500), or with a unit (1.5GHz, 1500MHz)"},
      {.name = "log_filename", .alias = "log-filename", .kind = CLI_OPT_STRING, .dest = &log, .metavar = "FILE",
       .help = "accepted; no log is written (problems go to stderr)"},
      {0}};
  int st = parse("chakra_timeline_visualizer",
                 "A simulator's issue/callback log as the reference's trace-event JSON (docs/compat.md).\n", opts,
                 argc, argv);
  if (st != CLI_PROCEED) return st;
  chakra_issue_log_options o = {.npus = npus, .npu_mhz = frequency_mhz(freq)};
  if (!(o.npu_mhz > 0)) {
    cli_error("--npu_frequency: expected MHz (1500) or a frequency with its unit (1.5GHz), got '%s'", freq);
    return CLI_EXIT_ERROR;
  }
  if ((st = not_the_input(out, in)) != 0) return st;
  chakra_error err = {0};
  return chakra_timeline_from_issue_log(in, out, &o, &err) ? cli_fail(&err) : 0;
}

static int generator(int argc, char **argv) {
  uint32_t npus = 64;
  uint64_t runtime = 5, tensor = 1024, comm = 65536;
  const cli_opt opts[] = {
      {.name = "num_npus", .alias = "num-npus", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&npus), .min = 1,
       .max = 1000000, .help = "ranks of each workload", .def = "64"},
      {.name = "default_runtime", .alias = "default-runtime", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&runtime),
       .metavar = "US", .help = "compute nodes' duration_micros", .def = "5"},
      {.name = "default_tensor_size", .alias = "default-tensor-size", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&tensor),
       .metavar = "BYTES", .help = "memory and send/receive nodes' tensor_size", .def = "1024"},
      {.name = "default_comm_size", .alias = "default-comm-size", .kind = CLI_OPT_COUNT, .dest = CLI_INT(&comm),
       .metavar = "BYTES", .help = "collectives' comm_size", .def = "65536"},
      {0}};
  int st = parse("chakra_generator",
                 "The reference generator's fourteen test workloads in the current folder, NAME.<r>.et for each "
                 "rank r (one_comp_node, ALL_REDUCE, ...), byte for byte.\n",
                 opts, argc, argv);
  if (st != CLI_PROCEED) return st;
  chakra_error err = {0};
  const chakra_gen_reference_options o = {.npus = npus, .runtime = runtime, .tensor_size = tensor, .comm_size = comm};
  if (chakra_gen_reference(".", &o, &err)) return cli_fail(&err);
  return 0;
}

int compat_main(const char *tool, int argc, char **argv) {
  static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
  } tools[] = {{"chakra_jsonizer", jsonizer},     {"chakra_trace_link", trace_link},
               {"chakra_converter", converter},   {"chakra_visualizer", visualizer},
               {"chakra_generator", generator},   {"chakra_timeline_visualizer", timeline_visualizer}};
  for (size_t i = 0; i < sizeof tools / sizeof *tools; i++)
    if (strcmp(tool, tools[i].name) == 0) return tools[i].run(argc, argv);
  return -1;
}
