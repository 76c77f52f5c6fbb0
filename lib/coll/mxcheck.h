/* mxcheck.h - an MSCCL-IR program checked before anything is written
 * (private to lib/coll): msccl_validate() (msccl.h) and what --compat can
 * reproduce. */
#ifndef CHAKRA_COLL_MXCHECK_H
#define CHAKRA_COLL_MXCHECK_H

#include "msccl.h"

/* --compat reproduces a converter that cannot express fused steps, nor a
 * step after a dropped copy: those are refused. */
int mx_compat_supported(mx *x);

#endif
