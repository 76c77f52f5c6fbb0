/* ingest_bench.c - runs a command several times in its own process and
 * prints its wall time, CPU time (user + system) and peak RSS, each run
 * and the medians, with per-node figures when the node count is given.
 *
 *   ingest_bench [-r RUNS] [-n NODES] [-l LABEL] [--ref CPU_S RSS_MIB] -- COMMAND [ARGS...]
 *
 * --ref gives the reference converter's CPU seconds and peak RSS for the
 * same input (spec pytorch-ingest.md 4.5); the ratios are printed.
 *
 * Peak RSS is the child's ru_maxrss (wait4), so each run is measured
 * alone, as /usr/bin/time -v reports it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
  int runs = 5;
  double nodes = 0;
  const char *label = "";
  double ref_cpu = 0, ref_rss = 0;
  int i = 1;
  for (; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) {
      i++;
      break;
    }
    if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) nodes = atof(argv[++i]);
    else if (strcmp(argv[i], "-l") == 0 && i + 1 < argc) label = argv[++i];
    else if (strcmp(argv[i], "--ref") == 0 && i + 2 < argc) ref_cpu = atof(argv[++i]), ref_rss = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: ingest_bench [-r RUNS] [-n NODES] [-l LABEL] [--ref CPU_S RSS_MIB] -- COMMAND [ARGS...]\n");
      return 2;
    }
  }
  if (i >= argc || runs < 1 || runs > 100) {
    fprintf(stderr, "usage: ingest_bench [-r RUNS] [-n NODES] [-l LABEL] [--ref CPU_S RSS_MIB] -- COMMAND [ARGS...]\n");
    return 2;
  }
  double *wall = calloc((size_t)runs, sizeof *wall), *cpu = calloc((size_t)runs, sizeof *cpu),
         *rss = calloc((size_t)runs, sizeof *rss);
  for (int r = 0; r < runs; r++) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
      perror("ingest_bench: fork");
      return 1;
    }
    if (pid == 0) {
      execvp(argv[i], argv + i);
      fprintf(stderr, "ingest_bench: cannot run %s: %s\n", argv[i], strerror(errno));
      _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
      perror("ingest_bench: wait4");
      return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "ingest_bench: %s failed (status %d)\n", argv[i], status);
      return 1;
    }
    wall[r] = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    cpu[r] = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
             (double)ru.ru_stime.tv_usec * 1e-6;
    rss[r] = (double)ru.ru_maxrss * 1024.0;
    fprintf(stderr, "  %s run %d: wall %.3f s, cpu %.3f s, peak RSS %.1f MiB\n", label, r + 1, wall[r], cpu[r],
            rss[r] / 1048576.0);
  }
  double w = median(wall, runs), c = median(cpu, runs), m = median(rss, runs);
  printf("%-14s wall %7.3f s  cpu %7.3f s  peak RSS %8.1f MiB", label, w, c, m / 1048576.0);
  if (nodes > 0)
    printf("  | %6.2f us/node (wall) %6.2f us/node (cpu) %6.0f B/node", w / nodes * 1e6, c / nodes * 1e6, m / nodes);
  if (ref_cpu > 0 && ref_rss > 0)
    printf("  | reference %.2f s %.0f MiB: x%.0f (wall) x%.0f (cpu) faster, x%.1f less memory", ref_cpu, ref_rss,
           ref_cpu / w, ref_cpu / c, ref_rss * 1048576.0 / m);
  printf("\n");
  free(wall), free(cpu), free(rss);
  return 0;
}
