/* sysmem.c - see sysmem.h. */
#include "sysmem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void take(uint64_t v, const char *name, uint64_t *best, const char **what) {
  if (v && v < *best) *best = v, *what = name;
}

static uint64_t rlimit_of(int resource) {
  struct rlimit r;
  if (getrlimit(resource, &r) || r.rlim_cur == RLIM_INFINITY) return 0;
  return (uint64_t)r.rlim_cur;
}

/* A byte count read from path, 0 when absent or "max". */
static uint64_t read_bytes(const char *path) {
  FILE *f = fopen(path, "r");
  char num[32] = "";
  uint64_t v = 0;
  if (f && fgets(num, sizeof num, f) && num[0] >= '0' && num[0] <= '9') v = strtoull(num, NULL, 10);
  if (f) fclose(f);
  return v;
}

/* The memory limit of our cgroup: v2 ("0::/path", memory.max) or v1
 * ("N:memory:/path", memory.limit_in_bytes), at our group's path or, in a
 * container that mounts its own group as the root, at the root. */
static uint64_t cgroup_limit(void) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  char line[512], path[700];
  uint64_t best = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    const char *v1 = strstr(line, ":memory:"), *dir, *file;
    if (strncmp(line, "0::", 3) == 0) dir = "/sys/fs/cgroup", file = "memory.max";
    else if (v1) dir = "/sys/fs/cgroup/memory", file = "memory.limit_in_bytes";
    else continue;
    const char *group = v1 ? v1 + 8 : line + 3;
    for (int root = 0; root < 2; root++) {
      snprintf(path, sizeof path, "%s%s/%s", dir, root ? "" : group, file);
      uint64_t v = read_bytes(path);
      if (v && (!best || v < best)) best = v;
    }
  }
  fclose(f);
  return best;
}

uint64_t sysmem_usable(const char **what) {
  uint64_t best = UINT64_MAX;
  const char *name = "no known limit";
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) take((uint64_t)pages * (uint64_t)page, "the machine's physical memory", &best, &name);
  take(rlimit_of(RLIMIT_AS), "the address-space limit (ulimit -v)", &best, &name);
  take(rlimit_of(RLIMIT_DATA), "the data-size limit (ulimit -d)", &best, &name);
  take(cgroup_limit(), "the cgroup's memory limit", &best, &name);
  if (what) *what = name;
  return best;
}
