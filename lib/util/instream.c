/* instream.c - buffered, gzip-transparent input; see instream.h. */
#include "instream.h"

#include <stdatomic.h>

#include "chakra/limits.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "chakra/stream.h"

#define IN_BUF (256 * 1024)

struct instream {
  int fd;             /* the file, when reading a descriptor (-1 otherwise) */
  FILE *file;         /* or a stream ... */
  int64_t file_start; /* ... read from this position */
  const unsigned char *mem; /* or bytes in memory ... */
  size_t mem_size, mem_pos;
  int own_fd;
  int seekable;
  int gzip;
  int eof_raw;        /* the file itself has no more bytes */
  int member_done;    /* a gzip member ended; next bytes decide what follows */
  uint64_t raw_off;   /* compressed bytes consumed from the file */
  uint64_t out_off;   /* bytes inflated so far */
  uint64_t max_ratio; /* refuse more than this many inflated bytes per compressed byte (0 = any) */
  z_stream z;
  int z_ready;
  unsigned char *in;  /* raw bytes read but not yet consumed */
  size_t in_pos, in_end;
  char *path;
};

static _Atomic uint32_t gzip_ratio_limit = CHAKRA_DEFAULT_GZIP_RATIO;

void chakra_limits_set_gzip_ratio(uint32_t max_ratio) { atomic_store(&gzip_ratio_limit, max_ratio); }
uint32_t chakra_limits_gzip_ratio(void) { return atomic_load(&gzip_ratio_limit); }

/* Small inputs may legitimately compress very well (a run of zeros); the
 * ratio is only judged once this much has been inflated. */
#define RATIO_FLOOR (1ull << 20)

static int check_ratio(instream *s, chakra_error *err) {
  if (!s->max_ratio || s->out_off <= RATIO_FLOOR || s->out_off <= s->max_ratio * (s->raw_off + 1)) return 0;
  return chakra_error_set(err, CHAKRA_EFORMAT,
                          "%s: compressed offset %llu: gzip data expands more than %llu:1 (%llu bytes became "
                          "%llu); refusing it as a decompression bomb (the limit is chakra_limits_set_gzip_ratio)",
                          s->path, (unsigned long long)s->raw_off, (unsigned long long)s->max_ratio,
                          (unsigned long long)s->raw_off, (unsigned long long)s->out_off);
}

/* One read from wherever the bytes come from: the count, 0 at the end,
 * -1 with errno set. */
static ssize_t raw_read(instream *s, void *buf, size_t n) {
  if (s->mem) {
    size_t k = s->mem_size - s->mem_pos < n ? s->mem_size - s->mem_pos : n;
    memcpy(buf, s->mem + s->mem_pos, k);
    s->mem_pos += k;
    return (ssize_t)k;
  }
  if (s->file) {
    size_t k = fread(buf, 1, n, s->file);
    if (k == 0 && ferror(s->file)) {
      errno = errno ? errno : EIO;
      return -1;
    }
    return (ssize_t)k;
  }
  return read(s->fd, buf, n);
}

/* Positions the source at offset bytes from its start. */
static int raw_seek(instream *s, uint64_t offset) {
  if (s->mem) {
    s->mem_pos = offset < s->mem_size ? (size_t)offset : s->mem_size;
    return 0;
  }
  if (s->file) return fseeko(s->file, (off_t)(s->file_start + (int64_t)offset), SEEK_SET);
  return lseek(s->fd, (off_t)offset, SEEK_SET) < 0 ? -1 : 0;
}

static int fill_raw(instream *s, chakra_error *err) {
  if (s->in_pos < s->in_end || s->eof_raw) return 0;
  for (;;) {
    errno = 0;
    ssize_t n = raw_read(s, s->in, IN_BUF);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return chakra_error_set(err, CHAKRA_EIO, "%s: read failed: %s", s->path, strerror(errno));
    s->in_pos = 0;
    s->in_end = (size_t)n;
    if (n == 0) s->eof_raw = 1;
    return 0;
  }
}

static int detect(instream *s, chakra_error *err) {
  /* Two bytes decide; a one-byte file simply is not gzip. */
  while (s->in_end - s->in_pos < 2 && !s->eof_raw) {
    if (s->in_end == IN_BUF) break;
    errno = 0;
    ssize_t n = raw_read(s, s->in + s->in_end, IN_BUF - s->in_end);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return chakra_error_set(err, CHAKRA_EIO, "%s: read failed: %s", s->path, strerror(errno));
    if (n == 0) s->eof_raw = 1;
    s->in_end += (size_t)n;
  }
  s->gzip = s->in_end - s->in_pos >= 2 && s->in[s->in_pos] == 0x1f && s->in[s->in_pos + 1] == 0x8b;
  if (!s->gzip) return 0;
  memset(&s->z, 0, sizeof s->z);
  if (inflateInit2(&s->z, 15 + 16) != Z_OK)
    return chakra_error_set(err, CHAKRA_ENOMEM, "%s: cannot start gzip decoder", s->path);
  s->z_ready = 1;
  s->max_ratio = chakra_limits_gzip_ratio();
  return 0;
}

int instream_open_input(instream **out, const chakra_input *in, chakra_error *err) {
  *out = NULL;
  const char *name = chakra_input_name(in);
  instream *s = calloc(1, sizeof *s);
  if (!s) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", name);
  s->fd = -1;
  s->path = strdup(in->path && strcmp(in->path, "-") == 0 && !in->name ? "<stdin>" : name);
  s->in = malloc(IN_BUF);
  if (!s->path || !s->in) {
    instream_close(s);
    return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", name);
  }
  if (in->data || (!in->path && !in->file)) {
    s->mem = in->data ? in->data : (const unsigned char *)"";
    s->mem_size = in->data ? in->size : 0;
    s->seekable = 1;
  } else if (in->file) {
    s->file = in->file;
    s->file_start = ftello(in->file);
    s->seekable = s->file_start >= 0;
    if (s->file_start < 0) s->file_start = 0;
  } else if (strcmp(in->path, "-") == 0) {
    s->fd = 0;
  } else {
    s->fd = open(in->path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0) {
      int e = errno;
      instream_close(s);
      return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open: %s", name, strerror(e));
    }
    s->own_fd = 1;
  }
  if (s->fd >= 0) s->seekable = lseek(s->fd, 0, SEEK_CUR) >= 0;
  int rc = detect(s, err);
  if (rc) {
    instream_close(s);
    return rc;
  }
  *out = s;
  return CHAKRA_OK;
}

int instream_open(instream **out, const char *path, chakra_error *err) {
  chakra_input in = {.path = path};
  return instream_open_input(out, &in, err);
}

static ssize_t read_plain(instream *s, unsigned char *buf, size_t n, chakra_error *err) {
  if (s->in_pos < s->in_end) {
    size_t k = s->in_end - s->in_pos;
    if (k > n) k = n;
    memcpy(buf, s->in + s->in_pos, k);
    s->in_pos += k;
    return (ssize_t)k;
  }
  if (s->eof_raw) return 0;
  for (;;) {
    errno = 0;
    ssize_t k = raw_read(s, buf, n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0)
      return chakra_error_set(err, CHAKRA_EIO, "%s: read failed: %s", s->path, strerror(errno));
    if (k == 0) s->eof_raw = 1;
    return k;
  }
}

/* After a member ends, the stream may hold another member (concatenated
 * gzip) or nothing; anything else is corrupt, not silently ignored. */
static int next_member(instream *s, chakra_error *err, int *more) {
  *more = 0;
  int rc = fill_raw(s, err);
  if (rc) return rc;
  if (s->in_pos == s->in_end) return 0;
  if (s->in[s->in_pos] != 0x1f)
    return chakra_error_set(err, CHAKRA_EFORMAT,
                            "%s: compressed offset %llu: data after the end of the gzip stream",
                            s->path, (unsigned long long)(s->raw_off));
  inflateReset(&s->z);
  s->member_done = 0;
  *more = 1;
  return 0;
}

static ssize_t read_gzip(instream *s, unsigned char *buf, size_t n, chakra_error *err) {
  s->z.next_out = buf;
  s->z.avail_out = (uInt)(n > (1u << 30) ? (1u << 30) : n);
  uInt want = s->z.avail_out;
  while (s->z.avail_out == want) {
    if (s->member_done) {
      int more, rc = next_member(s, err, &more);
      if (rc) return rc;
      if (!more) break;
    }
    int rc = fill_raw(s, err);
    if (rc) return rc;
    if (s->in_pos == s->in_end)
      return chakra_error_set(err, CHAKRA_EFORMAT, "%s: compressed offset %llu: gzip stream truncated",
                              s->path, (unsigned long long)s->raw_off);
    s->z.next_in = s->in + s->in_pos;
    s->z.avail_in = (uInt)(s->in_end - s->in_pos);
    uInt room = s->z.avail_out;
    int zr = inflate(&s->z, Z_NO_FLUSH);
    size_t used = (s->in_end - s->in_pos) - s->z.avail_in;
    s->in_pos += used;
    s->raw_off += used;
    s->out_off += room - s->z.avail_out;
    if ((rc = check_ratio(s, err)) != 0) return rc;
    if (zr == Z_STREAM_END) {
      s->member_done = 1;
    } else if (zr != Z_OK && zr != Z_BUF_ERROR) {
      return chakra_error_set(err, CHAKRA_EFORMAT, "%s: compressed offset %llu: gzip data corrupt (%s)",
                              s->path, (unsigned long long)s->raw_off,
                              s->z.msg ? s->z.msg : "inflate failed");
    }
  }
  return (ssize_t)(want - s->z.avail_out);
}

ssize_t instream_read(instream *s, void *buf, size_t n, chakra_error *err) {
  if (n == 0) return 0;
  return s->gzip ? read_gzip(s, buf, n, err) : read_plain(s, buf, n, err);
}

int instream_seek(instream *s, uint64_t offset, chakra_error *err) {
  if (!s->seekable)
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: cannot seek in a pipe", s->path);
  if (!s->gzip) {
    if (raw_seek(s, offset))
      return chakra_error_set(err, CHAKRA_EIO, "%s: seek failed: %s", s->path, strerror(errno));
    s->in_pos = s->in_end = 0;
    s->eof_raw = 0;
    return 0;
  }
  if (raw_seek(s, 0))
    return chakra_error_set(err, CHAKRA_EIO, "%s: seek failed: %s", s->path, strerror(errno));
  s->in_pos = s->in_end = 0;
  s->eof_raw = 0;
  s->raw_off = 0;
  s->out_off = 0;
  s->member_done = 0;
  inflateReset(&s->z);
  unsigned char skip[16384];
  while (offset > 0) {
    ssize_t k = read_gzip(s, skip, offset < sizeof skip ? (size_t)offset : sizeof skip, err);
    if (k < 0) return (int)k;
    if (k == 0) return chakra_error_set(err, CHAKRA_EINVAL, "%s: seek past the end", s->path);
    offset -= (uint64_t)k;
  }
  return 0;
}

int instream_is_gzip(const instream *s) { return s->gzip; }
int instream_is_seekable(const instream *s) { return s->seekable; }
const char *instream_path(const instream *s) { return s->path; }

void instream_close(instream *s) {
  if (!s) return;
  if (s->z_ready) inflateEnd(&s->z);
  if (s->own_fd) close(s->fd);
  free(s->in);
  free(s->path);
  free(s);
}

const char *chakra_input_name(const chakra_input *in) {
  if (in->name) return in->name;
  if (in->data || (!in->path && !in->file)) return "<memory>";
  if (in->file) return "<stream>";
  return in->path;
}

uint64_t instream_plain_size(const chakra_input *in) {
  struct stat st;
  unsigned char magic[2] = {0, 0};
  if (!in->path || strcmp(in->path, "-") == 0 || stat(in->path, &st) || !S_ISREG(st.st_mode)) return 0;
  FILE *f = fopen(in->path, "rb");
  size_t got = f ? fread(magic, 1, 2, f) : 0;
  if (f) fclose(f);
  return got == 2 && magic[0] == 0x1f && magic[1] == 0x8b ? 0 : (uint64_t)st.st_size;
}
