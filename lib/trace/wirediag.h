/* wirediag.h - explains why protobuf-c refused a message (private).
 *
 * protobuf-c's unpack returns NULL without a reason. Users need to know what
 * is wrong and where, so after a failure this walks the message's wire
 * structure against the schema's descriptors and reports the first defect
 * with its offset inside the message. It never decodes values for use. */
#ifndef CHAKRA_WIREDIAG_H
#define CHAKRA_WIREDIAG_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

/* Writes a one-phrase reason into out; *at receives the offset of the defect
 * relative to the start of data. */
void wirediag_explain(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                      size_t len, char *out, size_t out_size, size_t *at);

#endif
