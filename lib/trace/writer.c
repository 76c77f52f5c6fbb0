/* writer.c - length-delimited .et writer; see include/chakra/trace.h. */
#include <stdlib.h>
#include <string.h>

#include "../util/outfile.h"
#include "chakra/trace.h"
#include "encode.h"

struct chakra_writer {
  outfile *out;
  enc_buf msg; /* the message being written, framed */
};

size_t chakra_varint_encode(uint64_t v, uint8_t *out) { return (size_t)(enc_varint(out, v) - out); }

int chakra_writer_open(chakra_writer **out, const char *path, int flags, chakra_error *err) {
  *out = NULL;
  chakra_writer *w = calloc(1, sizeof *w);
  if (!w) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
  int gzip = !(flags & CHAKRA_WRITE_PLAIN) &&
             ((flags & CHAKRA_WRITE_GZIP) || outfile_name_is_gzip(path));
  int rc = outfile_open(&w->out, path, gzip, err);
  if (rc) {
    free(w);
    return rc;
  }
  *out = w;
  return 0;
}

int chakra_writer_open_sink(chakra_writer **out, const chakra_sink *sink, int flags, chakra_error *err) {
  *out = NULL;
  if (flags & CHAKRA_WRITE_GZIP)
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: gzip output goes to files only", chakra_sink_name(sink));
  chakra_writer *w = calloc(1, sizeof *w);
  if (!w) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", chakra_sink_name(sink));
  int rc = outfile_open_sink(&w->out, sink, err);
  if (rc) {
    free(w);
    return rc;
  }
  *out = w;
  return 0;
}

/* Messages are encoded into the writer's own buffer, then written: one
 * message at a time, so a buffer grown by a huge one is given back. */
int chakra_writer_put(chakra_writer *w, const ProtobufCMessage *msg, chakra_error *err) {
  w->msg.n = 0;
  size_t len = enc_message(&w->msg, msg);
  int rc = 0;
  if (w->msg.oom) {
    w->msg.oom = 0; /* the buffer is as it was: later messages may fit */
    rc = chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", outfile_path(w->out));
  } else if (len > CHAKRA_DEFAULT_MAX_MESSAGE) {
    rc = chakra_error_set(err, CHAKRA_EINVAL, "%s: message of %zu bytes exceeds the limit", outfile_path(w->out),
                          len);
  } else {
    rc = outfile_write(w->out, w->msg.p, w->msg.n, err);
  }
  if (w->msg.cap > (1u << 20)) enc_buf_free(&w->msg);
  return rc;
}

int chakra_writer_put_raw(chakra_writer *w, const uint8_t *data, size_t len, chakra_error *err) {
  uint8_t hdr[10];
  size_t k = chakra_varint_encode(len, hdr);
  int rc = outfile_write(w->out, hdr, k, err);
  return rc ? rc : outfile_write(w->out, data, len, err);
}

int chakra_writer_close(chakra_writer *w, chakra_error *err) {
  int rc = outfile_commit(w->out, err);
  enc_buf_free(&w->msg);
  free(w);
  return rc;
}

void chakra_writer_discard(chakra_writer *w) {
  if (!w) return;
  outfile_discard(w->out);
  enc_buf_free(&w->msg);
  free(w);
}
