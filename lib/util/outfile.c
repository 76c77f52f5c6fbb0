/* outfile.c - temporary file + rename; see outfile.h. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define OUT_BUF (1u << 20)

struct outfile {
  int fd;
  int is_stdout;
  gzFile gz;
  char *path;
  char *tmp;
  char *buf;
  size_t used;
  int failed;
};

int outfile_name_is_gzip(const char *path) {
  size_t n = strlen(path);
  return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

static int open_temp(outfile *f, chakra_error *err) {
  const char *slash = strrchr(f->path, '/');
  size_t dirlen = slash ? (size_t)(slash - f->path) + 1 : 0;
  const char *base = slash ? slash + 1 : f->path;
  size_t n = dirlen + strlen(base) + 16;
  f->tmp = malloc(n);
  if (!f->tmp) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", f->path);
  snprintf(f->tmp, n, "%.*s.%s.XXXXXX", (int)dirlen, f->path, base);
  /* Like mkstemp, but created 0666 so that the umask applies as to any file
   * the user creates. (Reading the umask with umask() would change it for
   * a moment in every thread of the process.) */
  static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static _Atomic uint64_t counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t r = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40) ^
               (counter++ * 0x9e3779b97f4a7c15ull);
  char *x = f->tmp + strlen(f->tmp) - 6;
  int e = EEXIST;
  for (int attempt = 0; attempt < 1000 && e == EEXIST; attempt++) {
    for (int i = 0; i < 6; i++) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      x[i] = chars[(r >> 33) % 62];
    }
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    e = f->fd < 0 ? errno : 0;
  }
  if (f->fd < 0) {
    free(f->tmp);
    f->tmp = NULL;
    return chakra_error_set(err, CHAKRA_EIO, "%s: cannot create output: %s", f->path, strerror(e));
  }
  return 0;
}

int outfile_open(outfile **out, const char *path, int gzip, chakra_error *err) {
  *out = NULL;
  outfile *f = calloc(1, sizeof *f);
  if (!f) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
  f->fd = -1;
  f->path = strdup(path);
  f->buf = malloc(OUT_BUF);
  if (!f->path || !f->buf) {
    outfile_discard(f);
    return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
  }
  int rc = 0;
  if (strcmp(path, "-") == 0) {
    f->is_stdout = 1;
    f->fd = 1;
  } else {
    rc = open_temp(f, err);
  }
  if (!rc && gzip) {
    int fd2 = dup(f->fd);
    f->gz = fd2 >= 0 ? gzdopen(fd2, "wb6") : NULL;
    if (!f->gz) {
      if (fd2 >= 0) close(fd2);
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "%s: cannot start gzip encoder", path);
    }
  }
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  *out = f;
  return 0;
}

static int write_all(outfile *f, const char *p, size_t n, chakra_error *err) {
  if (f->gz) {
    while (n > 0) {
      unsigned k = n > (1u << 30) ? (1u << 30) : (unsigned)n;
      if (gzwrite(f->gz, p, k) != (int)k) {
        f->failed = 1;
        return chakra_error_set(err, CHAKRA_EIO, "%s: write failed (gzip)", f->path);
      }
      p += k;
      n -= k;
    }
    return 0;
  }
  while (n > 0) {
    ssize_t k = write(f->fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      f->failed = 1;
      return chakra_error_set(err, CHAKRA_EIO, "%s: write failed: %s", f->path, strerror(errno));
    }
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

static int flush_buf(outfile *f, chakra_error *err) {
  int rc = write_all(f, f->buf, f->used, err);
  f->used = 0;
  return rc;
}

int outfile_write(outfile *f, const void *data, size_t len, chakra_error *err) {
  if (f->failed) return chakra_error_set(err, CHAKRA_EIO, "%s: earlier write failed", f->path);
  if (len > OUT_BUF / 2) { /* large blocks (a jsonw buffer) go out without a copy */
    int rc = f->used ? flush_buf(f, err) : 0;
    return rc ? rc : write_all(f, data, len, err);
  }
  if (f->used + len > OUT_BUF) {
    int rc = flush_buf(f, err);
    if (rc) return rc;
  }
  memcpy(f->buf + f->used, data, len);
  f->used += len;
  return 0;
}

char *outfile_reserve(outfile *f, size_t n, chakra_error *err) {
  if (n > OUT_BUF) {
    chakra_error_set(err, CHAKRA_EINVAL, "%s: reservation too large", f->path);
    return NULL;
  }
  if (f->used + n > OUT_BUF && flush_buf(f, err)) return NULL;
  return f->buf + f->used;
}

void outfile_commit_bytes(outfile *f, size_t used) { f->used += used; }

int outfile_commit(outfile *f, chakra_error *err) {
  int rc = f->failed ? chakra_error_set(err, CHAKRA_EIO, "%s: earlier write failed", f->path)
                     : flush_buf(f, err);
  if (f->gz) {
    if (gzclose(f->gz) != Z_OK && !rc)
      rc = chakra_error_set(err, CHAKRA_EIO, "%s: write failed (gzip)", f->path);
    f->gz = NULL;
  }
  if (!f->is_stdout) {
    if (close(f->fd) != 0 && !rc)
      rc = chakra_error_set(err, CHAKRA_EIO, "%s: write failed: %s", f->path, strerror(errno));
    f->fd = -1;
    if (!rc && rename(f->tmp, f->path) != 0)
      rc = chakra_error_set(err, CHAKRA_EIO, "%s: cannot rename into place: %s", f->path,
                            strerror(errno));
    if (!rc) {
      free(f->tmp);
      f->tmp = NULL;
    }
  }
  outfile_discard(f);
  return rc;
}

void outfile_discard(outfile *f) {
  if (!f) return;
  if (f->gz) gzclose(f->gz);
  if (!f->is_stdout && f->fd >= 0) close(f->fd);
  if (f->tmp) {
    unlink(f->tmp);
    free(f->tmp);
  }
  free(f->buf);
  free(f->path);
  free(f);
}

const char *outfile_path(const outfile *f) { return f->path; }
