/* test_sha256.c - util/sha256 against FIPS 180-4's examples (the one-block
 * "abc", the two-block 448-bit message, a million "a"), the empty message,
 * and the same digest whatever the pieces the data is fed in (the block
 * path, the buffered path and the padding's boundary at 55/56/64 bytes). */
#include <string.h>

#include "sha256.h"
#include "testutil.h"

static void digest(const void *data, size_t len, char hex[65]) {
  sha256 s;
  sha256_init(&s);
  sha256_update(&s, data, len);
  sha256_hex(&s, hex);
}

static void test_sha256_fips_vectors(void **state) {
  (void)state;
  char hex[65];
  digest("abc", 3, hex);
  assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  digest(two, strlen(two), hex);
  assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  digest("", 0, hex);
  assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  static char million[1000000];
  memset(million, 'a', sizeof million);
  digest(million, sizeof million, hex);
  assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Fed one byte at a time, or in pieces of 7, 64 and 1000 bytes, the digest
 * of lengths around the padding's boundaries is the one-call digest. */
static void test_sha256_pieces_do_not_matter(void **state) {
  (void)state;
  unsigned char buf[300];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 31 + 7);
  static const size_t lens[] = {0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 300};
  static const size_t steps[] = {1, 7, 64, 1000};
  for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
    char whole[65];
    digest(buf, lens[l], whole);
    for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
      sha256 s;
      sha256_init(&s);
      for (size_t at = 0; at < lens[l]; at += steps[k])
        sha256_update(&s, buf + at, lens[l] - at < steps[k] ? lens[l] - at : steps[k]);
      char hex[65];
      sha256_hex(&s, hex);
      assert_string_equal(hex, whole);
    }
  }
  /* 56 bytes of "a": the length no longer fits the first block */
  char hex[65];
  digest("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 56, hex);
  assert_string_equal(hex, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sha256_fips_vectors),
      cmocka_unit_test(test_sha256_pieces_do_not_matter),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
