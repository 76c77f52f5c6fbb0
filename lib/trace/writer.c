/* writer.c - length-delimited .et writer; see include/chakra/trace.h. */
#include <stdlib.h>
#include <string.h>

#include "../util/outfile.h"
#include "chakra/trace.h"

struct chakra_writer {
  outfile *out;
};

size_t chakra_varint_encode(uint64_t v, uint8_t *out) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  out[n++] = (uint8_t)v;
  return n;
}

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

int chakra_writer_put(chakra_writer *w, const ProtobufCMessage *msg, chakra_error *err) {
  size_t len = protobuf_c_message_get_packed_size(msg);
  if (len > CHAKRA_DEFAULT_MAX_MESSAGE)
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: message of %zu bytes exceeds the limit",
                            outfile_path(w->out), len);
  if (len + 10 <= (1u << 19)) {
    uint8_t *p = (uint8_t *)outfile_reserve(w->out, len + 10, err);
    if (!p) return err ? err->code : CHAKRA_EIO;
    size_t k = chakra_varint_encode(len, p);
    protobuf_c_message_pack(msg, p + k);
    outfile_commit_bytes(w->out, k + len);
    return 0;
  }
  uint8_t *tmp = malloc(len);
  if (!tmp) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", outfile_path(w->out));
  protobuf_c_message_pack(msg, tmp);
  int rc = chakra_writer_put_raw(w, tmp, len, err);
  free(tmp);
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
  free(w);
  return rc;
}

void chakra_writer_discard(chakra_writer *w) {
  if (!w) return;
  outfile_discard(w->out);
  free(w);
}
