/* board.h - the leaderboard page (private to lib/suite; the call is
 * chakra_suite_board_write in chakra/suite.h). */
#ifndef CHAKRA_SUITE_BOARD_H
#define CHAKRA_SUITE_BOARD_H

#include "chakra/suite.h"

/* The largest score a bar chart's axis reaches: the best score, rounded
 * up to a step of 0.5, at least 1.5 (so the baseline's 1 sits inside). */
double board_axis_max(const double *scores, size_t n);

#endif
