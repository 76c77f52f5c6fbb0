/* xmltext.h - the one XML text escaper (private to libchakra).
 *
 * Every string an SVG, GraphML or other XML writer places in its document
 * (labels, titles, names read from traces and reports) goes through here,
 * so that no input can become markup and every document is well-formed
 * XML 1.0 whatever bytes the string holds. */
#ifndef CHAKRA_XMLTEXT_H
#define CHAKRA_XMLTEXT_H

#include "jsonw.h"

/* Writes s (NUL-terminated, supposedly UTF-8) as XML character data or an
 * attribute value: & < > " ' as entities; tab, newline and return as
 * character references (an attribute keeps them); the other characters
 * XML 1.0 forbids (C0 controls, U+FFFE, U+FFFF) and every byte that is not
 * part of valid UTF-8 as U+FFFD. */
void xmltext_put(jsonw *w, const char *s);

#endif
