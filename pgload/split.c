/*
 * split.c -- `pgload split FILE...`: show how the parser splits a script.
 *
 * One line per item: kind, input line, byte offset, length, and for SQL the
 * first line of the statement.  Used to debug scripts and by the tests.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "pgload.h"

int pgl_cmd_split(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			printf("usage: pgload split FILE...  (\"-\" for stdin)\n");
			return 0;
		}
		return 1;
	}
	if (optind >= argc) {
		fprintf(stderr, "pgload split: no input file given\n");
		return 1;
	}
	for (int i = optind; i < argc; i++) {
		struct pgl_input *in;
		struct pgl_parser *p;
		struct pgl_item it;
		char err[256];
		int ret;
		uint64_t copybytes = 0;

		if (pgl_input_open(argv[i], &in, err) < 0) {
			fprintf(stderr, "pgload split: %s\n", err);
			return 1;
		}
		if (pgl_parser_create(in, argv[i], &p) < 0) {
			fprintf(stderr, "pgload split: out of memory\n");
			pgl_input_close(in);
			return 1;
		}
		while ((ret = pgl_parser_next(p, &it)) > 0) {
			switch (it.kind) {
			case PGL_ITEM_SQL:
				printf("sql %lu %zu%s: %.*s\n", it.line, it.len,
				       it.copy_in ? " copy" : "", (int)strcspn(it.text, "\n"),
				       it.text);
				break;
			case PGL_ITEM_META:
				printf("meta %lu \\%s", it.line, it.cmd);
				for (int a = 0; a < it.argc; a++)
					printf(" [%s]", it.argv[a]);
				printf("\n");
				break;
			case PGL_ITEM_COPY_DATA:
				copybytes += it.len;
				break;
			case PGL_ITEM_COPY_END:
				printf("copy-end %lu %llu bytes\n", it.line,
				       (unsigned long long)copybytes);
				copybytes = 0;
				break;
			}
		}
		if (ret < 0)
			fprintf(stderr, "pgload split: %s\n", pgl_parser_error(p));
		pgl_parser_destroy(p);
		pgl_input_close(in);
		if (ret < 0)
			return 1;
	}
	return 0;
}
