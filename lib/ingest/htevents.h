/* htevents.h - the host-ET parser's yajl callbacks (private to the host-ET
 * reader): each event is taken according to the frame and what the
 * parser wants next, checked, and handed to the node being assembled or
 * to a capture. */
#ifndef CHAKRA_INGEST_HTEVENTS_H
#define CHAKRA_INGEST_HTEVENTS_H

#include "htparse.h"

extern const yajl_callbacks ht_callbacks;

#endif
