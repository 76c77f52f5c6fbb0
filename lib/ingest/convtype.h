/* convtype.h - what each node becomes in chakra convert pytorch (private
 * to lib/ingest): METADATA, COMP, COMM_COLL (with comm_type and the
 * process group) or COMM_SEND/RECV (with peer, tag and group), from its
 * name, its kernel and its record_param_comms arguments. */
#ifndef CHAKRA_INGEST_CONVTYPE_H
#define CHAKRA_INGEST_CONVTYPE_H

#include "convert.h"

/* Fills c->type, comm_type, peer, tag, pg and gpu. */
int conv_type_nodes(conv *c);

#endif
