/* version.c - the library's version at run time; see chakra/version.h. */
#include "chakra/version.h"

const char *chakra_version(void) { return CHAKRA_VERSION_STRING; }
