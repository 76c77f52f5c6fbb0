/* test_util_io.c - pins lib/util's byte I/O (private): instream (plain,
 * gzip, concatenated gzip members, pipes; what is refused: data after the
 * gzip stream, truncation, corruption, seeking a pipe), outfile (nothing at
 * the destination before commit, atomic replace, discard leaves nothing,
 * gzip, permissions from the umask) and jsonw (integers, string escaping
 * at every position of the vector loops, ASCII-only output, floats,
 * base64). */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "instream.h"
#include "jsonw.h"
#include "outfile.h"
#include "testutil.h"
#include "utf8.h"

/* ---- helpers ----------------------------------------------------------- */

static char *path_in_dir(const char *name) { return tu_join(tu_dir, name); }

/* One complete gzip member holding data. */
static void gzip_member(tu_buf *b, const void *data, size_t n) {
  z_stream z;
  memset(&z, 0, sizeof z);
  assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  uLong cap = deflateBound(&z, (uLong)n);
  unsigned char *out = malloc(cap);
  assert_non_null(out);
  z.next_in = (unsigned char *)data;
  z.avail_in = (uInt)n;
  z.next_out = out;
  z.avail_out = (uInt)cap;
  assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
  tu_put(b, out, cap - z.avail_out);
  deflateEnd(&z);
  free(out);
}

/* Everything the stream yields, read in chunks of `chunk` bytes; returns
 * the read status that ended it (0 = clean end) and the bytes in *got. */
static ssize_t read_all(instream *s, size_t chunk, tu_buf *got, chakra_error *err) {
  unsigned char tmp[4096];
  for (;;) {
    ssize_t k = instream_read(s, tmp, chunk, err);
    if (k <= 0) return k;
    tu_put(got, tmp, (size_t)k);
  }
}

static char *sample(size_t n) {
  char *p = malloc(n);
  assert_non_null(p);
  for (size_t i = 0; i < n; i++) p[i] = (char)('a' + (i * 7 + i / 13) % 26);
  return p;
}

static instream *open_ok(const char *path) {
  instream *s;
  chakra_error err = {0};
  if (instream_open(&s, path, &err)) fail_msg("open: %s", err.msg);
  return s;
}

/* ---- instream ------------------------------------------------------------ */

static void test_instream_plain_file_reads_back_in_any_chunk_size(void **state) {
  (void)state;
  char *p = path_in_dir("plain.bin"), *data = sample(300000);
  tu_write_bytes(p, data, 300000);
  size_t chunks[] = {1, 7, 4096};
  for (size_t c = 0; c < 3; c++) {
    instream *s = open_ok(p);
    assert_int_equal(instream_is_gzip(s), 0);
    assert_int_equal(instream_is_seekable(s), 1);
    assert_string_equal(instream_path(s), p);
    tu_buf got = {0};
    chakra_error err = {0};
    assert_int_equal(read_all(s, chunks[c], &got, &err), 0);
    assert_int_equal(got.n, 300000);
    assert_memory_equal(got.p, data, 300000);
    assert_int_equal(instream_read(s, got.p, 10, &err), 0); /* stays at the end */
    tu_buf_free(&got);
    instream_close(s);
  }
  free(data);
  free(p);
}

static void test_instream_empty_and_one_byte_files_are_plain(void **state) {
  (void)state;
  char *p = path_in_dir("tiny");
  tu_write_bytes(p, "", 0);
  instream *s = open_ok(p);
  unsigned char b[4];
  chakra_error err = {0};
  assert_int_equal(instream_read(s, b, 4, &err), 0);
  instream_close(s);
  tu_write_bytes(p, "\x1f", 1); /* half a gzip magic */
  s = open_ok(p);
  assert_int_equal(instream_is_gzip(s), 0);
  assert_int_equal(instream_read(s, b, 0, &err), 0); /* n = 0 reads nothing */
  assert_int_equal(instream_read(s, b, 4, &err), 1);
  assert_int_equal(b[0], 0x1f);
  instream_close(s);
  free(p);
}

static void test_instream_missing_file_error_names_it(void **state) {
  (void)state;
  char *p = path_in_dir("absent.et");
  instream *s = (instream *)1;
  chakra_error err = {0};
  assert_int_equal(instream_open(&s, p, &err), CHAKRA_EIO);
  assert_null(s);
  assert_contains(err.msg, p);
  assert_contains(err.msg, "cannot open");
  free(p);
}

static void test_instream_gzip_and_concatenated_members_inflate_transparently(void **state) {
  (void)state;
  char *p = path_in_dir("data.gz"), *data = sample(500000);
  tu_buf gz = {0};
  gzip_member(&gz, data, 200000);
  gzip_member(&gz, data + 200000, 0); /* an empty member in between */
  gzip_member(&gz, data + 200000, 300000);
  tu_write_bytes(p, gz.p, gz.n);
  instream *s = open_ok(p);
  assert_int_equal(instream_is_gzip(s), 1);
  tu_buf got = {0};
  chakra_error err = {0};
  assert_int_equal(read_all(s, 3000, &got, &err), 0);
  assert_int_equal(got.n, 500000);
  assert_memory_equal(got.p, data, 500000);
  /* Seeking re-inflates from the start. */
  unsigned char b[10];
  assert_int_equal(instream_seek(s, 250000, &err), 0);
  assert_int_equal(instream_read(s, b, 10, &err), 10);
  assert_memory_equal(b, data + 250000, 10);
  assert_int_equal(instream_seek(s, 500001, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "seek past the end");
  instream_close(s);
  tu_buf_free(&got);
  tu_buf_free(&gz);
  free(data);
  free(p);
}

static void test_instream_plain_seek_goes_to_the_offset(void **state) {
  (void)state;
  char *p = path_in_dir("plain"), *data = sample(1000);
  tu_write_bytes(p, data, 1000);
  instream *s = open_ok(p);
  unsigned char b[8];
  chakra_error err = {0};
  assert_int_equal(instream_read(s, b, 8, &err), 8);
  assert_int_equal(instream_seek(s, 990, &err), 0);
  assert_int_equal(instream_read(s, b, 8, &err), 8);
  assert_memory_equal(b, data + 990, 8);
  assert_int_equal(instream_seek(s, 0, &err), 0);
  assert_int_equal(instream_read(s, b, 8, &err), 8);
  assert_memory_equal(b, data, 8);
  instream_close(s);
  free(data);
  free(p);
}

static void expect_gzip_error(const tu_buf *file, const char *what) {
  char *p = path_in_dir("bad.gz");
  tu_write_bytes(p, file->p, file->n);
  instream *s = open_ok(p);
  tu_buf got = {0};
  chakra_error err = {0};
  ssize_t rc = read_all(s, 4096, &got, &err);
  assert_int_equal(rc, CHAKRA_EFORMAT);
  assert_contains(err.msg, p);
  assert_contains(err.msg, what);
  tu_buf_free(&got);
  instream_close(s);
  free(p);
}

static void test_instream_refuses_trailing_data_truncation_and_corruption(void **state) {
  (void)state;
  char *data = sample(20000);
  tu_buf gz = {0};
  gzip_member(&gz, data, 20000);
  size_t n = gz.n;
  tu_buf trailing = {0};
  tu_put(&trailing, gz.p, n);
  tu_put(&trailing, "\0\0\0\0", 4); /* zero padding is not another member */
  expect_gzip_error(&trailing, "data after the end of the gzip stream");
  tu_buf cut = {0};
  tu_put(&cut, gz.p, n - 6);
  expect_gzip_error(&cut, "gzip stream truncated");
  tu_buf bad = {0};
  tu_put(&bad, gz.p, n);
  bad.p[n - 3] ^= 0xff; /* the length in the trailer */
  expect_gzip_error(&bad, "gzip data corrupt");
  tu_buf_free(&trailing);
  tu_buf_free(&cut);
  tu_buf_free(&bad);
  tu_buf_free(&gz);
  free(data);
}

typedef struct feeder {
  int fd;
  const uint8_t *p;
  size_t n;
} feeder;

static void *feed(void *arg) {
  feeder *f = arg;
  for (size_t off = 0; off < f->n;) {
    ssize_t k = write(f->fd, f->p + off, f->n - off > 1000 ? 1000 : f->n - off);
    if (k <= 0) break;
    off += (size_t)k;
  }
  close(f->fd);
  return NULL;
}

static void test_instream_reads_gzip_from_a_pipe_and_refuses_to_seek_it(void **state) {
  (void)state;
  char *data = sample(100000);
  tu_buf gz = {0};
  gzip_member(&gz, data, 60000);
  gzip_member(&gz, data + 60000, 40000);
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  feeder f = {fds[1], gz.p, gz.n};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, feed, &f), 0);
  char dev[64];
  snprintf(dev, sizeof dev, "/dev/fd/%d", fds[0]);
  instream *s = open_ok(dev);
  assert_int_equal(instream_is_gzip(s), 1);
  assert_int_equal(instream_is_seekable(s), 0);
  tu_buf got = {0};
  chakra_error err = {0};
  assert_int_equal(read_all(s, 999, &got, &err), 0);
  assert_int_equal(got.n, 100000);
  assert_memory_equal(got.p, data, 100000);
  assert_int_equal(instream_seek(s, 0, &err), CHAKRA_EINVAL);
  assert_contains(err.msg, "cannot seek in a pipe");
  instream_close(s);
  pthread_join(th, NULL);
  close(fds[0]);
  tu_buf_free(&got);
  tu_buf_free(&gz);
  free(data);
}

/* ---- outfile ------------------------------------------------------------- */

static void test_outfile_nothing_at_the_destination_until_commit(void **state) {
  (void)state;
  char *p = path_in_dir("out.et");
  outfile *f;
  chakra_error err = {0};
  assert_int_equal(outfile_open(&f, p, 0, &err), 0);
  assert_string_equal(outfile_path(f), p);
  assert_int_equal(outfile_write(f, "hello ", 6, &err), 0);
  char *r = outfile_reserve(f, 5, &err);
  assert_non_null(r);
  memcpy(r, "world", 5);
  outfile_commit_bytes(f, 5);
  assert_false(tu_exists(p));
  char first[256];
  assert_int_equal(tu_dir_count(tu_dir, first), 1); /* the temporary, beside it */
  assert_true(strncmp(first, ".out.et.", 8) == 0);
  assert_int_equal(outfile_commit(f, &err), 0);
  size_t n;
  char *got = tu_read_text(p, &n);
  assert_string_equal(got, "hello world");
  assert_int_equal(tu_dir_count(tu_dir, NULL), 1);
  struct stat st;
  assert_int_equal(stat(p, &st), 0);
  mode_t mask = umask(022);
  umask(mask);
  assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
  free(got);
  free(p);
}

static void test_outfile_commit_replaces_and_discard_keeps_the_old_file(void **state) {
  (void)state;
  char *p = path_in_dir("x.json");
  tu_write_text(p, "old");
  outfile *f;
  chakra_error err = {0};
  assert_int_equal(outfile_open(&f, p, 0, &err), 0);
  assert_int_equal(outfile_write(f, "half", 4, &err), 0);
  outfile_discard(f);
  char *got = tu_read_text(p, NULL);
  assert_string_equal(got, "old");
  free(got);
  assert_int_equal(tu_dir_count(tu_dir, NULL), 1);
  assert_int_equal(outfile_open(&f, p, 0, &err), 0);
  assert_int_equal(outfile_write(f, "new", 3, &err), 0);
  assert_int_equal(outfile_commit(f, &err), 0);
  got = tu_read_text(p, NULL);
  assert_string_equal(got, "new");
  free(got);
  outfile_discard(NULL);
  free(p);
}

static void test_outfile_large_and_small_writes_keep_their_order(void **state) {
  (void)state;
  char *p = path_in_dir("big"), *data = sample(3u << 20);
  outfile *f;
  chakra_error err = {0};
  assert_int_equal(outfile_open(&f, p, 0, &err), 0);
  size_t off = 0, sizes[] = {10, 700000, 3, 1u << 20, 5, 600000, 1};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    assert_int_equal(outfile_write(f, data + off, sizes[i], &err), 0);
    off += sizes[i];
  }
  assert_null(outfile_reserve(f, (1u << 20) + 1, &err));
  assert_contains(err.msg, "reservation too large");
  assert_int_equal(outfile_commit(f, &err), 0);
  size_t n;
  uint8_t *got = tu_read_file(p, &n);
  assert_int_equal(n, off);
  assert_memory_equal(got, data, off);
  free(got);
  free(data);
  free(p);
}

static void test_outfile_gzip_reads_back_through_instream(void **state) {
  (void)state;
  char *p = path_in_dir("t.et.gz"), *data = sample(200000);
  assert_int_equal(outfile_name_is_gzip(p), 1);
  assert_int_equal(outfile_name_is_gzip(".gz"), 0);
  assert_int_equal(outfile_name_is_gzip("a.et"), 0);
  assert_int_equal(outfile_name_is_gzip("a.gz.et"), 0);
  outfile *f;
  chakra_error err = {0};
  assert_int_equal(outfile_open(&f, p, 1, &err), 0);
  assert_int_equal(outfile_write(f, data, 200000, &err), 0);
  assert_int_equal(outfile_commit(f, &err), 0);
  size_t n;
  uint8_t *raw = tu_read_file(p, &n);
  assert_true(n < 200000 && raw[0] == 0x1f && raw[1] == 0x8b);
  free(raw);
  instream *s = open_ok(p);
  tu_buf got = {0};
  assert_int_equal(read_all(s, 4096, &got, &err), 0);
  assert_int_equal(got.n, 200000);
  assert_memory_equal(got.p, data, 200000);
  instream_close(s);
  tu_buf_free(&got);
  free(data);
  free(p);
}

static void test_outfile_in_a_missing_directory_fails_naming_the_path(void **state) {
  (void)state;
  char *p = path_in_dir("no/such/dir/out.et");
  outfile *f = (outfile *)1;
  chakra_error err = {0};
  assert_int_equal(outfile_open(&f, p, 0, &err), CHAKRA_EIO);
  assert_null(f);
  assert_contains(err.msg, p);
  assert_contains(err.msg, "cannot create output");
  assert_int_equal(tu_dir_count(tu_dir, NULL), 0);
  free(p);
}

/* ---- jsonw ----------------------------------------------------------------- */

typedef struct jout {
  char *path;
  outfile *f;
  jsonw w;
} jout;

static void jopen(jout *j, int ascii) {
  chakra_error err = {0};
  j->path = path_in_dir("j.json");
  assert_int_equal(outfile_open(&j->f, j->path, 0, &err), 0);
  assert_int_equal(jsonw_init(&j->w, j->f), 0);
  j->w.ascii_only = ascii;
}

/* Flushes, commits and returns the text (malloc'd). */
static char *jclose(jout *j) {
  chakra_error err = {0};
  assert_int_equal(jsonw_flush(&j->w), 0);
  jsonw_free(&j->w);
  assert_int_equal(outfile_commit(j->f, &err), 0);
  char *t = tu_read_text(j->path, NULL);
  free(j->path);
  return t;
}

static void test_jsonw_integers_at_every_digit_count(void **state) {
  (void)state;
  jout j;
  jopen(&j, 0);
  char want[16384] = "";
  size_t k = 0;
  uint64_t v = 1;
  for (int d = 0; d < 20; d++, v *= 10) {
    uint64_t cases[] = {v - 1, v, v + 1};
    for (int c = 0; c < 3; c++) {
      jsonw_u64(&j.w, cases[c]);
      jsonw_char(&j.w, ' ');
      k += (size_t)snprintf(want + k, sizeof want - k, "%llu ", (unsigned long long)cases[c]);
    }
  }
  jsonw_u64(&j.w, UINT64_MAX);
  jsonw_char(&j.w, ' ');
  jsonw_i64(&j.w, INT64_MIN);
  jsonw_char(&j.w, ' ');
  jsonw_i64(&j.w, -1);
  jsonw_char(&j.w, ' ');
  jsonw_i64(&j.w, 0);
  jsonw_char(&j.w, ' ');
  jsonw_u64_quoted(&j.w, 12345678901ull);
  jsonw_i64_quoted(&j.w, -42);
  jsonw_i64_quoted(&j.w, 7);
  snprintf(want + k, sizeof want - k, "18446744073709551615 -9223372036854775808 -1 0 \"12345678901\"\"-42\"\"7\"");
  char *got = jclose(&j);
  assert_string_equal(got, want);
  free(got);
}

/* The escaping every path must agree with: JSON's short escapes, \u00XX
 * for other control bytes, U+FFFD for invalid UTF-8; ASCII-only mode
 * escapes DEL and every code point >= 0x80 (surrogate pairs above U+FFFF). */
static size_t ref_escape(const unsigned char *s, size_t n, int ascii, char *out, uint64_t *bad) {
  size_t o = 0;
  out[o++] = '"';
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    const char *e = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                  : c == '\t' ? "\\t" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
    if (e) {
      o += (size_t)sprintf(out + o, "%s", e), i++;
    } else if (c < 0x20 || (ascii && c == 0x7f)) {
      o += (size_t)sprintf(out + o, "\\u%04x", c), i++;
    } else if (c < 0x80) {
      out[o++] = (char)c, i++;
    } else {
      uint32_t cp = 0xfffd;
      size_t len = utf8_decode(s + i, n - i, &cp);
      if (!len) ++*bad;
      if (!ascii) {
        if (len) memcpy(out + o, s + i, len), o += len;
        else memcpy(out + o, "\xef\xbf\xbd", 3), o += 3;
      } else if (cp >= 0x10000) {
        o += (size_t)sprintf(out + o, "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10),
                             0xdc00 + ((cp - 0x10000) & 0x3ff));
      } else {
        o += (size_t)sprintf(out + o, "\\u%04x", cp);
      }
      i += len ? len : 1;
    }
  }
  out[o++] = '"';
  out[o] = 0;
  return o;
}

/* One special byte (or sequence) at every position 0..40 of an ASCII run,
 * so the 16-byte, 8-byte and byte loops each meet it at every offset. */
static void test_jsonw_string_escapes_at_every_position_of_the_vector_loops(void **state) {
  (void)state;
  static const char *specials[] = {"\"", "\\", "\n", "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xf0\x9f\x98\x80",
                                   "\xff", "\xe2\x82", "\xed\xa0\x80"};
  for (int ascii = 0; ascii < 2; ascii++) {
    jout j;
    jopen(&j, ascii);
    size_t cap = 1 << 20, k = 0;
    char *want = malloc(cap);
    assert_non_null(want);
    uint64_t bad = 0;
    for (size_t s = 0; s < sizeof specials / sizeof *specials; s++)
      for (size_t pos = 0; pos <= 40; pos++) {
        unsigned char in[64];
        size_t sl = strlen(specials[s]), n = 0;
        for (; n < pos; n++) in[n] = (unsigned char)('A' + n % 26);
        memcpy(in + n, specials[s], sl);
        n += sl;
        for (size_t t = 0; t < 5; t++) in[n++] = 'z';
        jsonw_string(&j.w, (const char *)in, n);
        k += ref_escape(in, n, ascii, want + k, &bad);
      }
    jsonw_string(&j.w, "", 0);
    k += ref_escape((const unsigned char *)"", 0, ascii, want + k, &bad);
    uint64_t got_bad = j.w.bad_utf8;
    char *got = jclose(&j);
    assert_string_equal(got, want);
    assert_int_equal(got_bad, bad);
    assert_int_equal(bad, (1 + 2 + 3) * 41); /* \xff, \xe2\x82 and \xed\xa0\x80: each byte one U+FFFD */
    free(got);
    free(want);
  }
}

/* Strings above a quarter of the buffer take the slow path; same text. */
static void test_jsonw_long_strings_escape_like_short_ones(void **state) {
  (void)state;
  size_t n = JSONW_BUF / 2 + 12345;
  unsigned char *in = malloc(n);
  assert_non_null(in);
  for (size_t i = 0; i < n; i++) in[i] = (unsigned char)('a' + i % 26);
  for (size_t i = 100; i + 4 < n; i += 997) memcpy(in + i, i % 2 ? "\"\xc3\xa9\n" : "\xff\\\x02x", 4);
  for (int ascii = 0; ascii < 2; ascii++) {
    jout j;
    jopen(&j, ascii);
    jsonw_string(&j.w, (const char *)in, n);
    char *want = malloc(6 * n + 3);
    assert_non_null(want);
    uint64_t bad = 0;
    ref_escape(in, n, ascii, want, &bad);
    uint64_t got_bad = j.w.bad_utf8;
    char *got = jclose(&j);
    assert_string_equal(got, want);
    assert_int_equal(got_bad, bad);
    free(got);
    free(want);
  }
  free(in);
}

/* jsonw_escape, the escaper for text outside a jsonw (sweep's values, the
 * ingest tools' buffers): the same text as jsonw_string, and never a byte
 * written past JSONW_ESCAPED_MAX(n), however much the input grows when
 * escaped (control bytes, invalid UTF-8, astral code points to ASCII). */
static void test_jsonw_escape_into_memory_stays_in_bounds(void **state) {
  (void)state;
  static const char *fill[] = {"\x01", "\xff", "\xf0\x9f\x98\x80", "\"", "a", "\xc3\xa9\\"};
  for (int ascii = 0; ascii < 2; ascii++)
    for (size_t f = 0; f < sizeof fill / sizeof *fill; f++)
      for (size_t n = 0; n <= 70; n++) {
        unsigned char in[80];
        size_t fl = strlen(fill[f]);
        for (size_t i = 0; i < n; i++) in[i] = (unsigned char)fill[f][i % fl];
        size_t max = JSONW_ESCAPED_MAX(n);
        char *out = malloc(max + 32), want[600];
        assert_non_null(out);
        memset(out, 0xAA, max + 32);
        uint64_t bad = 0, want_bad = 0;
        size_t len = jsonw_escape(out, (const char *)in, n, ascii, &bad);
        size_t wl = ref_escape(in, n, ascii, want, &want_bad);
        assert_int_equal(len, wl);
        assert_memory_equal(out, want, wl);
        assert_int_equal(bad, want_bad);
        for (size_t i = max; i < max + 32; i++) assert_int_equal((unsigned char)out[i], 0xAA);
        free(out);
      }
}

static void test_jsonw_floats_and_python_repr(void **state) {
  (void)state;
  jout j;
  jopen(&j, 0);
  jsonw_double(&j.w, 0.1), jsonw_char(&j.w, ' ');
  jsonw_double(&j.w, 1e300), jsonw_char(&j.w, ' ');
  jsonw_double(&j.w, -2.5), jsonw_char(&j.w, ' ');
  jsonw_float(&j.w, 0.1f), jsonw_char(&j.w, ' ');
  jsonw_double(&j.w, NAN), jsonw_char(&j.w, ' ');
  jsonw_double(&j.w, -INFINITY), jsonw_char(&j.w, ' ');
  jsonw_float(&j.w, INFINITY), jsonw_char(&j.w, ' ');
  jsonw_double_py(&j.w, 0.1f, 1), jsonw_char(&j.w, ' '); /* the float32 0.1 prints as 0.1 */
  jsonw_double_py(&j.w, 3.0, 0);
  char *got = jclose(&j);
  assert_string_equal(got, "0.1 1e+300 -2.5 0.1 \"NaN\" \"-Infinity\" \"Infinity\" 0.1 3.0");
  free(got);
  static const struct {
    double v;
    const char *py;
  } cases[] = {{3.0, "3.0"}, {0.0, "0.0"}, {-0.0, "-0.0"}, {1.5, "1.5"}, {100.0, "100.0"},
               {0.0001, "0.0001"}, {0.00001, "1e-05"}, {1e16, "1e+16"}, {9999999999999998.0, "9999999999999998.0"},
               {123456789012345680.0, "1.2345678901234568e+17"}, {0.1, "0.1"}, {1.0 / 3, "0.3333333333333333"},
               {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"}, {-12.25, "-12.25"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char out[40];
    size_t n = jsonw_format_pyfloat(out, cases[i].v);
    assert_string_equal(out, cases[i].py);
    assert_int_equal(n, strlen(cases[i].py));
  }
}

static void test_jsonw_base64_pads_like_rfc4648(void **state) {
  (void)state;
  jout j;
  jopen(&j, 0);
  const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  for (int i = 0; i < 7; i++) jsonw_base64(&j.w, (const uint8_t *)in[i], strlen(in[i]));
  jsonw_base64(&j.w, (const uint8_t *)"\xff\xfe\x00", 3);
  char *got = jclose(&j);
  assert_string_equal(got, "\"\"\"Zg==\"\"Zm8=\"\"Zm9v\"\"Zm9vYg==\"\"Zm9vYmE=\"\"Zm9vYmFy\"\"//4A\"");
  free(got);
}

/* More than one buffer of output arrives whole and in order. */
static void test_jsonw_output_larger_than_the_buffer(void **state) {
  (void)state;
  jout j;
  jopen(&j, 0);
  size_t count = JSONW_BUF / 4;
  for (size_t i = 0; i < count; i++) {
    jsonw_u64(&j.w, i);
    jsonw_char(&j.w, ',');
  }
  char *got = jclose(&j);
  char *p = got;
  for (size_t i = 0; i < count; i++) {
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (v != i || *end != ',') fail_msg("number %zu reads %llu", i, v);
    p = end + 1;
  }
  assert_int_equal(*p, 0);
  free(got);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tu_dir_setup, tu_dir_teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_instream_plain_file_reads_back_in_any_chunk_size),
      T(test_instream_empty_and_one_byte_files_are_plain),
      T(test_instream_missing_file_error_names_it),
      T(test_instream_gzip_and_concatenated_members_inflate_transparently),
      T(test_instream_plain_seek_goes_to_the_offset),
      T(test_instream_refuses_trailing_data_truncation_and_corruption),
      T(test_instream_reads_gzip_from_a_pipe_and_refuses_to_seek_it),
      T(test_outfile_nothing_at_the_destination_until_commit),
      T(test_outfile_commit_replaces_and_discard_keeps_the_old_file),
      T(test_outfile_large_and_small_writes_keep_their_order),
      T(test_outfile_gzip_reads_back_through_instream),
      T(test_outfile_in_a_missing_directory_fails_naming_the_path),
      T(test_jsonw_integers_at_every_digit_count),
      T(test_jsonw_string_escapes_at_every_position_of_the_vector_loops),
      T(test_jsonw_long_strings_escape_like_short_ones),
      T(test_jsonw_escape_into_memory_stays_in_bounds),
      T(test_jsonw_floats_and_python_repr),
      T(test_jsonw_base64_pads_like_rfc4648),
      T(test_jsonw_output_larger_than_the_buffer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
