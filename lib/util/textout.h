/* textout.h - text documents written whole or not at all (private to
 * libchakra).
 *
 * The view and report writers (DOT, GraphML, SVG, diff reports, timelines,
 * run reports, CSV tables) produce
 * text through jsonw's buffer (fast integers and JSON strings) into an
 * outfile (temporary file renamed into place). This holds the pair, and
 * printf into the buffer; XML text goes through util/xmltext. */
#ifndef CHAKRA_TEXTOUT_H
#define CHAKRA_TEXTOUT_H

#include "jsonw.h"
#include "outfile.h"
#include "chakra/error.h"
#include "chakra/stream.h"

typedef struct textout {
  outfile *f;
  jsonw w;
} textout;

/* Opens path ("-" = standard output; ".gz" compresses). */
int textout_open(textout *t, const char *path, chakra_error *err);
/* Or to a FILE* or a callback (chakra/stream.h). */
int textout_open_sink(textout *t, const chakra_sink *sink, chakra_error *err);
/* With rc 0, flushes and puts the file in place; otherwise (or when that
 * fails) removes it. Returns the final status; err holds its message. */
int textout_close(textout *t, int rc, chakra_error *err);

/* printf into the buffer, whatever the length of the text (never cut: a
 * cut piece would leave a document malformed). */
void textout_printf(jsonw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
