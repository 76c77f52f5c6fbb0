/* test_keyhash.c - pins the keyed hash obfuscation relies on
 * (lib/analyze/keyhash.c, private): SipHash-2-4 against the reference
 * vectors of Aumasson and Bernstein (key 00..0f, messages 00, 00 01, ...),
 * and the op-class tokens chakra_obfuscate_name() makes from it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "chakra/obfuscate.h"
#include "keyhash.h"

static void test_siphash_matches_the_reference_vectors(void **state) {
  (void)state;
  /* vectors 0, 1, 7, 8 and 15 of the SipHash paper's appendix (little-endian outputs) */
  static const struct { size_t len; uint64_t h; } v[] = {
      {0, 0x726fdb47dd0e0e31ull}, {1, 0x74f839c593dc67fdull}, {7, 0xab0200f58b01d137ull},
      {8, 0x93f5f5799a932462ull}, {15, 0xa129ca6149be45e5ull}};
  uint8_t key[16], msg[16];
  for (int i = 0; i < 16; i++) key[i] = (uint8_t)i, msg[i] = (uint8_t)i;
  for (size_t i = 0; i < sizeof v / sizeof *v; i++) assert_int_equal(keyhash_sip(key, msg, v[i].len), v[i].h);
}

static void test_name_tokens_depend_on_name_key_and_type(void **state) {
  (void)state;
  chakra_obfuscate_options a = {0}, b = {0};
  chakra_obfuscate_key("one", 3, a.key);
  chakra_obfuscate_key("two", 3, b.key);
  ChakraProtoMsg__Node n = CHAKRA_PROTO_MSG__NODE__INIT;
  n.name = "aten::mm";
  n.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
  char t1[64], t2[64], t3[64], t4[64];
  chakra_obfuscate_name(&a, &n, 0, t1, sizeof t1);
  chakra_obfuscate_name(&a, &n, 0, t2, sizeof t2);
  chakra_obfuscate_name(&b, &n, 0, t3, sizeof t3);
  chakra_obfuscate_name(&a, &n, 1, t4, sizeof t4);
  assert_string_equal(t1, t2);
  assert_string_not_equal(t1, t3);
  assert_int_equal(strncmp(t1, "comp#", 5), 0);
  assert_int_equal(strlen(t1), 5 + 16);
  assert_int_equal(strncmp(t4, "comp_cpu#", 9), 0);
  assert_string_equal(t1 + 5, t4 + 9); /* the hash is of the name alone */
  n.name = "";
  chakra_obfuscate_name(&a, &n, 0, t1, sizeof t1);
  assert_string_equal(t1, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_siphash_matches_the_reference_vectors),
      cmocka_unit_test(test_name_tokens_depend_on_name_key_and_type),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
