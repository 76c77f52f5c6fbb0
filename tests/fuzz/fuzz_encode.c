/* fuzz_encode.c - libFuzzer target for the node encoder (lib/trace/encode.h).
 *
 * The input is taken as one Node, as one GlobalMetadata, and as a .et file
 * (length-prefixed messages, each tried as both). Whatever protobuf-c
 * decodes is encoded again by enc_message(); the bytes must be exactly
 * protobuf_c_message_pack's, unknown fields and all, or the target aborts.
 * Seeds: the reader's corpus (.et files). */
#include <stdio.h>
#include <stdlib.h>

#include "encode.h"

static enc_buf out;

static void check(const ProtobufCMessage *m) {
  size_t len = protobuf_c_message_get_packed_size(m);
  uint8_t *want = malloc(len ? len : 1);
  if (!want) abort();
  protobuf_c_message_pack(m, want);
  out.n = 0;
  size_t got = enc_message(&out, m);
  if (out.oom) abort();
  size_t pre = out.n - got;
  if (got != len || memcmp(out.p + pre, want, len) != 0) {
    fprintf(stderr, "fuzz_encode: %s of %zu bytes encoded as %zu bytes, not as protobuf-c packs it\n",
            m->descriptor->short_name, len, got);
    abort();
  }
  free(want);
}

/* Decodes data as a Node and as a GlobalMetadata, checking each success. */
static void both(const uint8_t *data, size_t size) {
  ChakraProtoMsg__Node *n = chakra_proto_msg__node__unpack(NULL, size, data);
  if (n) check(&n->base), chakra_proto_msg__node__free_unpacked(n, NULL);
  ChakraProtoMsg__GlobalMetadata *g = chakra_proto_msg__global_metadata__unpack(NULL, size, data);
  if (g) check(&g->base), chakra_proto_msg__global_metadata__free_unpacked(g, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  both(data, size);
  for (size_t off = 0; off < size;) {
    uint64_t len = 0;
    int shift = 0;
    while (off < size && shift < 64) {
      uint8_t c = data[off++];
      len |= (uint64_t)(c & 0x7f) << shift;
      shift += 7;
      if (c < 0x80) break;
    }
    if (len > size - off) break;
    both(data + off, (size_t)len);
    off += (size_t)len;
  }
  return 0;
}
