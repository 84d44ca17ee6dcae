/*
 * parser_i.h -- the state of the script splitter, shared by its files:
 * parser.c (statements: the lexer, and pgl_parser_next()), parser_buf.c
 * (the read buffer, the statement being collected, errors, variables),
 * parser_meta.c (meta-commands) and parser_copy.c (COPY data).  The public
 * interface, and what must stay true, is in pgload.h and parser.c.
 */
#ifndef PGLOAD_PARSER_I_H
#define PGLOAD_PARSER_I_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "pgload.h"

#define BUFCAP	  (1024 * 1024) /* read buffer; COPY spans are at most this */
#define LOOKAHEAD 256		/* bytes kept available for tags and markers */
#define MAXTAG	  128		/* longest dollar-quote tag we recognise */
#define WORDMAX	  16		/* keywords we look at are shorter */

enum lexstate { S_NORMAL, S_SQUOTE, S_ESTRING, S_DQUOTE, S_DOLLAR, S_COMMENT, S_LINECOMMENT };

struct var {
	struct var *next;
	char *name, *value;
};

struct pgl_parser {
	struct pgl_input *in;
	char *name;
	char *err;

	/* read buffer: buf[pos..end) unread; buf[0] is at stream offset base */
	char *buf;
	size_t cap, pos, end;
	uint64_t base;
	bool eof;
	unsigned long line;

	/* statement being collected */
	char *stmt;
	size_t slen, scap;
	unsigned long sline;
	uint64_t soff;

	/* lexer state, reset at each statement */
	enum lexstate st;
	int cdepth; /* comment nesting */
	int pdepth; /* parentheses */
	int bdepth; /* BEGIN ... END in a function body */
	char tag[MAXTAG + 2];
	size_t taglen;
	char idents[4]; /* psql's CREATE [OR REPLACE] FUNCTION detector */
	unsigned nidents;
	char word[WORDMAX];
	size_t wlen;
	bool inword, wnum, wlong;
	unsigned nwords;
	bool is_copy, copy_in, prev_from;
	unsigned long qline; /* where the open quote or comment began */

	/* limits and checks */
	size_t max_line;	  /* PGL_MAX_LINE unless set */
	uint64_t copylen;	  /* bytes of the current COPY line handed out */
	unsigned long copy_line0; /* first line of the current COPY data */
	bool sniffed;		  /* the first bytes were checked */

	/* modes */
	bool copy_mode, copy_bol, quit;
	bool std_strings;
	bool restricted;
	char restrict_key[128];

	/* meta-command storage */
	char *meta;
	size_t metacap;

	struct var *vars;
};

/* ---- the read buffer, the statement, errors (parser_buf.c) -------------- */

/* pgl_ps_seterr() -- record "FILE:LINE: message"; returns RET. */
int pgl_ps_seterr(struct pgl_parser *p, unsigned long line, int ret, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* pgl_ps_seterr_file() -- record "FILE: message" (about the whole input); returns RET. */
int pgl_ps_seterr_file(struct pgl_parser *p, int ret, const char *msg);

/* pgl_ps_limit_text() -- the line limit as people say it ("1 GB"), into BUF. */
const char *pgl_ps_limit_text(const struct pgl_parser *p, char *buf, size_t cap);

/*
 * pgl_ps_fill() -- make more input available: drop consumed bytes, grow the
 * buffer if it is full (only happens for a meta-command line longer than
 * BUFCAP), read.  Returns bytes added (0 at EOF) or -errno.
 */
ssize_t pgl_ps_fill(struct pgl_parser *p);

/* pgl_ps_ensure() -- have at least N unread bytes, or all that is left. */
int pgl_ps_ensure(struct pgl_parser *p, size_t n);

/* pgl_ps_at() -- the byte K positions ahead (after ensure()), or -1 past the end. */
static inline int pgl_ps_at(const struct pgl_parser *p, size_t k)
{
	return p->pos + k < p->end ? (unsigned char)p->buf[p->pos + k] : -1;
}

/*
 * pgl_ps_grow() -- make room for N more bytes of statement, up to the line
 * limit (-E2BIG, said).  The slow path of pgl_ps_sappend().
 */
int pgl_ps_grow(struct pgl_parser *p, size_t n);

/*
 * pgl_ps_sappend() -- append N bytes of S to the statement (-E2BIG at the
 * limit).  Inline with pgl_ps_take(): the lexer calls them for every token.
 */
static inline int pgl_ps_sappend(struct pgl_parser *p, const char *s, size_t n)
{
	int ret;
	if (p->slen + n + 1 > p->scap || p->slen + n >= p->max_line)
		if ((ret = pgl_ps_grow(p, n)) < 0)
			return ret;
	if (p->slen == 0) {
		p->sline = p->line;
		p->soff = p->base + p->pos;
	}
	memcpy(p->stmt + p->slen, s, n);
	p->slen += n;
	p->stmt[p->slen] = '\0';
	return 0;
}

/* pgl_ps_take() -- append the next N input bytes to the statement and consume them. */
static inline int pgl_ps_take(struct pgl_parser *p, size_t n)
{
	int ret = pgl_ps_sappend(p, p->buf + p->pos, n);
	for (size_t i = 0; i < n; i++)
		if (p->buf[p->pos + i] == '\n')
			p->line++;
	p->pos += n;
	return ret;
}

/* ---- meta-commands (parser_meta.c) ---------------------------------------- */

/*
 * pgl_ps_meta() -- at a backslash in normal state.  Handles \set, \unset,
 * \restrict, \unrestrict itself; fills *it for the caller and returns 1,
 * or returns 0 if nothing is to be reported, or -errno.
 */
int pgl_ps_meta(struct pgl_parser *p, struct pgl_item *it);

/* ---- COPY data (parser_copy.c) -------------------------------------------- */

/* pgl_ps_next_copy() -- the next span of COPY data, or the end of the block. */
int pgl_ps_next_copy(struct pgl_parser *p, struct pgl_item *it);

#endif /* PGLOAD_PARSER_I_H */
