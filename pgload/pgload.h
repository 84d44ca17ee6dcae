/*
 * pgload.h -- public interface of pgload, the PostgreSQL load replayer.
 *
 * pgload replays psql scripts (schema, bulk data, post-data) against a
 * PostgreSQL server and times every phase.  This header is the interface
 * the command (pgload_main.c) and the tests use:
 *
 *   - pgl_input:  a byte stream from a file or stdin ("-"), transparently
 *                 decompressing lz4 frames (detected by their magic number).
 *   - pgl_parser: splits a stream into the items psql would execute: SQL
 *                 statements, COPY ... FROM stdin data, meta-commands.
 *                 Memory stays bounded by the longest statement, never by
 *                 the size of the input or of a COPY block.
 *   - pgl_gen:    writes a deterministic synthetic workload.
 *   - pgl_run:    the `pgload run` command.
 *   - compare:    `pgload compare`, many runs on back ends x profiles.
 *
 * Conventions: functions return >= 0 on success and -errno on failure;
 * opaque objects come in create/destroy pairs whose destroy accepts NULL
 * (a stream's pair is pgl_input_open/pgl_input_close), and a constructor
 * returns 0 with the object in *out, or -errno; objects that can fail in
 * ways errno cannot describe keep a message that names the thing and the
 * reason (pgl_*_error()).  The commands return an exit status instead: 0
 * success, 1 error, 2 aborted (interrupted, or the server went away).
 */
#ifndef PGLOAD_H
#define PGLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- input streams ------------------------------------------------------ */

struct pgl_input;

/*
 * pgl_input_open() -- open PATH ("-" for stdin) for reading.  The first bytes
 * are inspected: an lz4 frame (magic 0x184D2204) is decompressed on the fly.
 * Returns 0 and sets *out, or -errno (message in *errbuf if non-NULL, which
 * must hold at least 256 bytes).
 */
int pgl_input_open(const char *path, struct pgl_input **out, char *errbuf);

/*
 * pgl_input_read() -- read up to CAP decompressed bytes into BUF.  Returns the
 * number of bytes (> 0), 0 at end of input, or -errno (-EBADMSG for a corrupt
 * or truncated lz4 frame; pgl_input_error() has the text).
 */
ssize_t pgl_input_read(struct pgl_input *in, void *buf, size_t cap);

/*
 * pgl_input_skip() -- discard the next N decompressed bytes (lseek for plain
 * regular files).  Returns 0, or -errno; -ENODATA if the input ends first.
 */
int pgl_input_skip(struct pgl_input *in, uint64_t n);

/* pgl_input_is_lz4() -- true if the input is an lz4 frame stream. */
bool pgl_input_is_lz4(const struct pgl_input *in);

/* pgl_input_is_stdin() -- true if the input is standard input. */
bool pgl_input_is_stdin(const struct pgl_input *in);

/* pgl_input_size() -- size of the underlying file in bytes, or -1. */
int64_t pgl_input_size(const struct pgl_input *in);

/* pgl_input_consumed() -- raw (compressed) bytes consumed so far. */
uint64_t pgl_input_consumed(const struct pgl_input *in);

/* pgl_input_name() -- the path given to pgl_input_open(). */
const char *pgl_input_name(const struct pgl_input *in);

/* pgl_input_error() -- text of the last error. */
const char *pgl_input_error(const struct pgl_input *in);

/* pgl_input_close() -- close and free; accepts NULL. */
void pgl_input_close(struct pgl_input *in);

/* ---- the script splitter ------------------------------------------------ */

enum pgl_item_kind {
	PGL_ITEM_SQL,	    /* a statement to send; text ends with ';' if it had one */
	PGL_ITEM_META,	    /* a meta-command the caller must carry out */
	PGL_ITEM_COPY_DATA, /* bytes of COPY data (whole or partial lines) */
	PGL_ITEM_COPY_END,  /* the end of a COPY block (\. or end of input) */
};

/* Meta-commands the parser passes to its caller (others it handles itself). */
enum pgl_meta {
	PGL_META_CONNECT,  /* \connect / \c [DBNAME [USER]]; argv[0..] */
	PGL_META_ECHO,	   /* \echo / \qecho TEXT: argv[0] is the joined text */
	PGL_META_ENCODING, /* \encoding NAME */
	PGL_META_GO,	   /* \g: send the current query buffer (already sent) */
	PGL_META_QUIT,	   /* \q: stop reading this input */
	PGL_META_SET,	   /* \set/\unset done by the parser; argv[0] = name */
	PGL_META_COPY,	   /* \copy: argv[0] is the raw argument text; with
			    * copy_in, COPY_DATA items follow */
	PGL_META_OTHER,	   /* accepted and ignored (\timing, \restrict, ...) */
};

#define PGL_META_MAXARGS 8

struct pgl_item {
	enum pgl_item_kind kind;
	const char *text;   /* SQL text (NUL-terminated) or COPY data bytes */
	size_t len;	    /* length of text in bytes */
	unsigned long line; /* 1-based input line where the item starts */
	uint64_t offset;    /* byte offset (decompressed) where the item starts */
	bool copy_in;	    /* SQL: a COPY ... FROM STDIN; COPY_DATA items follow */
	/* PGL_ITEM_META only: */
	enum pgl_meta meta;
	const char *cmd; /* the command name without the backslash */
	int argc;
	const char *argv[PGL_META_MAXARGS];
};

struct pgl_parser;

/*
 * pgl_parser_create() -- create a parser reading IN (which stays owned by the
 * caller and must outlive the parser); NAME is used in error messages.
 * Returns 0 and sets *out, or -ENOMEM.
 */
int pgl_parser_create(struct pgl_input *in, const char *name, struct pgl_parser **out);

/*
 * pgl_parser_next() -- the next item.  Returns 1 with *item filled (its
 * pointers stay valid until the next call), 0 at end of input, or -errno;
 * pgl_parser_error() then says "FILE:LINE: reason" (or "FILE: reason"):
 *   -EINVAL   a script error such as an unsupported meta-command;
 *   -EBADMSG  damaged input: a binary file or an archive rather than SQL (a
 *             pg_dump -Fc or -Ft archive, a gzip, zstd, bzip2 or xz file), a
 *             NUL byte in SQL text, the input ending inside a quoted string,
 *             dollar quote or comment, or inside COPY data before its "\."
 *             line (a truncated file);
 *   -E2BIG    a COPY data line, statement or meta-command line of
 *             PGL_MAX_LINE bytes or more (found while streaming: memory
 *             stays bounded);
 *   -EINTR    the read was interrupted (pgl_interrupt_fd());
 *   or the input's own error (-EBADMSG for a corrupt lz4 frame, -errno).
 */
int pgl_parser_next(struct pgl_parser *p, struct pgl_item *item);

/*
 * PGL_MAX_LINE -- the smallest COPY data line or statement PostgreSQL cannot
 * take: its line and message buffers stop at MaxAllocSize, 1 GB - 1 byte.
 */
#define PGL_MAX_LINE ((size_t)1 << 30)

/*
 * pgl_parser_set_max_line() -- refuse COPY data lines, statements and
 * meta-command lines of MAX bytes or more (default PGL_MAX_LINE; the tests
 * set smaller limits).
 */
void pgl_parser_set_max_line(struct pgl_parser *p, size_t max);

/*
 * pgl_parser_set_std_strings() -- tell the parser the server's
 * standard_conforming_strings (on by default): when off, backslashes escape
 * in plain '...' literals, as psql does.
 */
void pgl_parser_set_std_strings(struct pgl_parser *p, bool on);

/*
 * pgl_parser_begin_copy() -- make a fresh parser (no item read yet) start
 * inside COPY data: its input is positioned at byte OFFSET of the script,
 * which is line LINE.  Used to load one COPY block of a script on its own
 * connection.  Returns 0, or -EBUSY if items were already read.
 */
int pgl_parser_begin_copy(struct pgl_parser *p, uint64_t offset, unsigned long line);

/* pgl_parser_var() -- value of psql variable NAME, or NULL if unset. */
const char *pgl_parser_var(const struct pgl_parser *p, const char *name);

/* pgl_parser_setvar() -- set psql variable NAME (value NULL unsets). */
int pgl_parser_setvar(struct pgl_parser *p, const char *name, const char *value);

/* pgl_parser_line() -- current input line (1-based). */
unsigned long pgl_parser_line(const struct pgl_parser *p);

/* pgl_parser_offset() -- decompressed bytes consumed so far. */
uint64_t pgl_parser_offset(const struct pgl_parser *p);

/* pgl_parser_error() -- "FILE:LINE: reason" of the last error. */
const char *pgl_parser_error(const struct pgl_parser *p);

/* pgl_parser_destroy() -- free; accepts NULL. */
void pgl_parser_destroy(struct pgl_parser *p);

/*
 * pgl_copy_target() -- the table named by a COPY statement, unquoted and
 * schema-qualified as written ("public.t"), into BUF of CAP bytes.  Returns
 * the length, or -EINVAL if TEXT is not COPY of a table.
 */
int pgl_copy_target(const char *text, char *buf, size_t cap);

/* What a \copy command says. */
enum pgl_copy_kind {
	PGL_COPY_INLINE, /* from stdin / to stdout: the script's data, psql's output */
	PGL_COPY_PSTD,	 /* from pstdin / to pstdout: the process's stdin/stdout */
	PGL_COPY_FILE,	 /* a client-side file */
};

struct pgl_slash_copy {
	bool from; /* FROM (else TO) */
	enum pgl_copy_kind kind;
	char target[1024]; /* table [(columns)] or (query), as written */
	char source[1024]; /* file name (unquoted) or stdin/pstdin/... */
	char sql[2560];	   /* the COPY ... FROM STDIN / TO STDOUT to send */
};

/*
 * pgl_slash_copy_parse() -- parse the arguments of psql's \copy.  Returns 0,
 * -EINVAL if they cannot be parsed, -ENOTSUP for "program", -E2BIG if too long.
 */
int pgl_slash_copy_parse(const char *args, struct pgl_slash_copy *out);

/* ---- workload generator ------------------------------------------------- */

struct pgl_gen_opts {
	double scale;  /* 1.0 is about 100 MB of COPY data */
	uint64_t seed; /* same seed, same bytes */
	const char *outdir;
};

/*
 * pgl_gen() -- write schema.sql, data.sql and post.sql into opts->outdir
 * (created if missing).  Returns 0 or -errno (message on stderr).
 */
int pgl_gen(const struct pgl_gen_opts *opts);

/* ---- the commands -------------------------------------------------------- */

/* pgl_cmd_run() -- `pgload run ARGS`; returns the exit status (0, 1, 2). */
int pgl_cmd_run(int argc, char **argv);

/*
 * pgl_cmd_compare() -- `pgload compare ARGS`: back ends x profiles; returns
 * the exit status (0, 1, 2).
 */
int pgl_cmd_compare(int argc, char **argv);

/* pgl_cmd_gen() -- `pgload gen ARGS`; returns the exit status. */
int pgl_cmd_gen(int argc, char **argv);

/* pgl_cmd_split() -- `pgload split FILE`: print the items (for debugging). */
int pgl_cmd_split(int argc, char **argv);

#endif /* PGLOAD_H */
