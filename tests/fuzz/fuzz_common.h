/* fuzz_common.h - what the fuzz targets share (private to tests/fuzz):
 * handing the input to the library as a file, and a scratch directory for
 * outputs. Inputs live in a memfd (no disk traffic); outputs go to a
 * directory under /dev/shm (or $TMPDIR) made once and removed at exit. */
#ifndef CHAKRA_FUZZ_COMMON_H
#define CHAKRA_FUZZ_COMMON_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes data to a fresh memfd; path receives a name the library can open
 * (/proc/self/fd/N). Returns the fd (close it when done) or aborts. */
static inline int fuzz_input_file(const uint8_t *data, size_t size, char *path, size_t path_size) {
  int fd = memfd_create("chakra-fuzz-input", MFD_CLOEXEC);
  if (fd < 0) {
    perror("memfd_create");
    abort();
  }
  for (size_t off = 0; off < size;) {
    ssize_t k = write(fd, data + off, size - off);
    if (k <= 0) {
      perror("write");
      abort();
    }
    off += (size_t)k;
  }
  snprintf(path, path_size, "/proc/self/fd/%d", fd);
  return fd;
}

/* The first occurrence of the separator line sep ("\n%%NAME%%\n") in
 * data, or NULL: where an input holding two files splits. */
static inline const uint8_t *fuzz_find_sep(const uint8_t *data, size_t size, const char *sep) {
  size_t k = strlen(sep);
  for (size_t i = 0; i + k <= size; i++)
    if (data[i] == '\n' && memcmp(data + i, sep, k) == 0) return data + i;
  return NULL;
}

static char fuzz_dir_[256];

static inline void fuzz_dir_cleanup(void) {
  DIR *d = opendir(fuzz_dir_);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char p[600];
    if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
    snprintf(p, sizeof p, "%s/%s", fuzz_dir_, e->d_name);
    unlink(p);
  }
  closedir(d);
  rmdir(fuzz_dir_);
}

/* dir/name in the scratch directory; the string lives until exit (one per
 * distinct name, at most 16 names). */
static inline const char *fuzz_out(const char *name) {
  static char bufs[16][600];
  static int used;
  for (int i = 0; i < used; i++) {
    const char *slash = strrchr(bufs[i], '/');
    if (slash && strcmp(slash + 1, name) == 0) return bufs[i];
  }
  if (used == 16) abort();
  if (!fuzz_dir_[0]) {
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(fuzz_dir_, sizeof fuzz_dir_, "%s/chakra-fuzz.XXXXXX", base);
    if (!mkdtemp(fuzz_dir_)) {
      perror("mkdtemp");
      abort();
    }
    atexit(fuzz_dir_cleanup);
  }
  char *b = bufs[used++];
  snprintf(b, sizeof bufs[0], "%s/%s", fuzz_dir_, name);
  return b;
}

/* Whole file into a malloc'd buffer (NULL if absent). */
static inline uint8_t *fuzz_slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, used = 0;
  uint8_t *p = malloc(cap);
  for (size_t k; (k = fread(p + used, 1, cap - used, f)) > 0;) {
    used += k;
    if (used == cap) p = realloc(p, cap *= 2);
  }
  fclose(f);
  *n = used;
  return p;
}

static inline void fuzz_expect_same_file(const char *a, const char *b, const char *what) {
  size_t na = 0, nb = 0;
  uint8_t *x = fuzz_slurp(a, &na), *y = fuzz_slurp(b, &nb);
  if (!x || !y || na != nb || memcmp(x, y, na) != 0) {
    fprintf(stderr, "fuzz property violated: %s (%zu vs %zu bytes)\n", what, na, nb);
    abort();
  }
  free(x);
  free(y);
}

#endif
