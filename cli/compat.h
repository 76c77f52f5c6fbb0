/* compat.h - the reference tools' commands run by the chakra program under
 * their names (chakra_jsonizer, chakra_trace_link, chakra_converter,
 * chakra_visualizer, chakra_timeline_visualizer, chakra_generator);
 * docs/compat.md. */
#ifndef CHAKRA_CLI_COMPAT_H
#define CHAKRA_CLI_COMPAT_H

/* Runs the reference tool named tool (argv[0]'s last component) with its
 * flags; returns the exit status, or -1 when tool is not one of them. */
int compat_main(const char *tool, int argc, char **argv);

#endif
