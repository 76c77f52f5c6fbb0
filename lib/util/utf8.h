/* utf8.h - UTF-8 validation shared by every text path (private).
 * The schema says strings are UTF-8 but real files break that; readers
 * replace each invalid byte with U+FFFD and count it. */
#ifndef CHAKRA_UTF8_H
#define CHAKRA_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid sequence at s (n bytes left) and its code point in
 * *cp; 0 if invalid (overlong, surrogate, beyond U+10FFFF, truncated).
 * s[0] must be >= 0x80. */
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* Number of bytes of s that are not part of a valid sequence. */
size_t utf8_count_invalid(const unsigned char *s, size_t n);

/* Copies s into out (capacity >= 3 * n + 1) replacing invalid bytes with
 * U+FFFD; returns the output length. */
size_t utf8_sanitize(const unsigned char *s, size_t n, char *out);

#endif
