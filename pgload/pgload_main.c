/*
 * pgload_main.c -- the pgload command: dispatch to a subcommand.
 *
 * Exit status: 0 success, 1 error, 2 aborted run (interrupted, or the server
 * went away); subcommands return it.
 */
#include <stdio.h>
#include <string.h>

#include "pgload.h"
#include "pgload_i.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: pgload COMMAND [OPTIONS]\n"
		   "\n"
		   "commands:\n"
		   "  run     replay schema/data/post-data scripts and time each phase\n"
		   "  compare load a workload on back ends x pgiofs profiles; tables, charts\n"
		   "  gen     write a deterministic synthetic workload\n"
		   "  split   print how a script is split into statements (debugging)\n"
		   "\n"
		   "`pgload COMMAND --help` describes the options of a command;\n"
		   "`pgload --version` prints the version.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "run") == 0)
		return pgl_cmd_run(argc - 1, argv + 1);
	if (strcmp(cmd, "compare") == 0)
		return pgl_cmd_compare(argc - 1, argv + 1);
	if (strcmp(cmd, "gen") == 0)
		return pgl_cmd_gen(argc - 1, argv + 1);
	if (strcmp(cmd, "split") == 0)
		return pgl_cmd_split(argc - 1, argv + 1);
	if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
		pgl_print_version();
		return 0;
	}
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "pgload: unknown command \"%s\"\n", cmd);
	usage(stderr);
	return 1;
}
