/* export.h - which declarations libchakra exports.
 *
 * The library is built with hidden visibility: only declarations marked
 * CHAKRA_API are in the dynamic symbol table of libchakra.so, and each of
 * them starts with chakra_ (the protobuf-c code generated from
 * proto/et_def.proto, chakra_proto_msg__*, is exported whole because the
 * public headers use its descriptors). Everything else is private to the
 * library, even when it is not static in C. */
#ifndef CHAKRA_EXPORT_H
#define CHAKRA_EXPORT_H

#if defined(_WIN32) || defined(__CYGWIN__)
#if defined(CHAKRA_BUILDING)
#define CHAKRA_API __declspec(dllexport)
#else
#define CHAKRA_API
#endif
#elif defined(__GNUC__)
#define CHAKRA_API __attribute__((visibility("default")))
#else
#define CHAKRA_API
#endif

#endif
