/*
 * parser.c -- split a psql script into statements, COPY data and
 * meta-commands, the way psql's lexer (psqlscan.l) does.
 *
 * What must stay true:
 *  - A ';' ends a statement only outside quotes ('...', E'...', "...",
 *    $tag$...$tag$), comments (-- and nested slash-star), parentheses and the
 *    BEGIN ... END of a CREATE FUNCTION/PROCEDURE body (psql's heuristic).
 *  - A backslash outside quotes and comments starts a meta-command that runs
 *    to the end of the line.
 *  - After a statement recognised as COPY ... FROM STDIN, the following lines
 *    are COPY data up to a line that is exactly "\."; the data is handed out
 *    as spans of the read buffer, never collected, so memory is bounded by
 *    BUFCAP plus the longest statement.  The input ending before the "\."
 *    is an error (a truncated dump must not load as if it were whole).
 *  - A COPY line, statement or meta-command line of max_line bytes
 *    (PGL_MAX_LINE: PostgreSQL could not take it) is an error found while
 *    streaming: a COPY line is counted, never held; a statement stops
 *    growing at the limit.
 *  - Damaged input is refused with its reason: an archive or a compressed
 *    file instead of SQL (by its first bytes), a NUL byte in SQL text, the
 *    input ending inside a quote or comment.
 *  - Leading whitespace and -- comments of a statement are dropped (psql
 *    drops them too); the rest is sent byte for byte, including the ';'.
 *  - Text left at end of input without a ';' is still a statement, as psql
 *    sends it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgload.h"
#include "pgload_i.h"

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

/* seterr() -- record "FILE:LINE: message". */
static int seterr(struct pgl_parser *p, unsigned long line, int ret, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int seterr(struct pgl_parser *p, unsigned long line, int ret, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	free(p->err);
	if (asprintf(&p->err, "%s:%lu: %s", p->name, line, msg) < 0)
		p->err = NULL;
	return ret;
}

/* seterr_file() -- record "FILE: message" (no line: about the whole input). */
static int seterr_file(struct pgl_parser *p, int ret, const char *msg)
{
	free(p->err);
	if (asprintf(&p->err, "%s: %s", p->name, msg) < 0)
		p->err = NULL;
	return ret;
}

int pgl_parser_create(struct pgl_input *in, const char *name, struct pgl_parser **out)
{
	struct pgl_parser *p = calloc(1, sizeof(*p));
	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->in = in;
	p->cap = BUFCAP;
	p->buf = malloc(p->cap + 1);
	p->name = strdup(name);
	p->scap = 4096;
	p->stmt = malloc(p->scap);
	p->line = 1;
	p->std_strings = true;
	p->max_line = PGL_MAX_LINE;
	if (!p->buf || !p->name || !p->stmt) {
		pgl_parser_destroy(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

void pgl_parser_destroy(struct pgl_parser *p)
{
	if (!p)
		return;
	while (p->vars) {
		struct var *v = p->vars;
		p->vars = v->next;
		free(v->name);
		free(v->value);
		free(v);
	}
	free(p->buf);
	free(p->stmt);
	free(p->meta);
	free(p->name);
	free(p->err);
	free(p);
}

void pgl_parser_set_std_strings(struct pgl_parser *p, bool on)
{
	p->std_strings = on;
}

void pgl_parser_set_max_line(struct pgl_parser *p, size_t max)
{
	p->max_line = max > 1 ? max : 1;
}

/* limit_text() -- the limit as people say it ("1 GB"), into BUF. */
static const char *limit_text(const struct pgl_parser *p, char *buf, size_t cap)
{
	if (p->max_line % ((size_t)1 << 30) == 0)
		snprintf(buf, cap, "%zu GB", p->max_line >> 30);
	else
		snprintf(buf, cap, "%zu bytes", p->max_line);
	return buf;
}

unsigned long pgl_parser_line(const struct pgl_parser *p)
{
	return p->line;
}

uint64_t pgl_parser_offset(const struct pgl_parser *p)
{
	return p->base + p->pos;
}

const char *pgl_parser_error(const struct pgl_parser *p)
{
	return p->err ? p->err : "no error";
}

const char *pgl_parser_var(const struct pgl_parser *p, const char *name)
{
	for (struct var *v = p->vars; v; v = v->next)
		if (strcmp(v->name, name) == 0)
			return v->value;
	return NULL;
}

int pgl_parser_setvar(struct pgl_parser *p, const char *name, const char *value)
{
	struct var **vp;
	for (vp = &p->vars; *vp; vp = &(*vp)->next)
		if (strcmp((*vp)->name, name) == 0)
			break;
	if (!value) {
		if (*vp) {
			struct var *v = *vp;
			*vp = v->next;
			free(v->name);
			free(v->value);
			free(v);
		}
		return 0;
	}
	char *nv = strdup(value);
	if (!nv)
		return -ENOMEM;
	if (*vp) {
		free((*vp)->value);
		(*vp)->value = nv;
		return 0;
	}
	struct var *v = calloc(1, sizeof(*v));
	if (!v || !(v->name = strdup(name))) {
		free(v);
		free(nv);
		return -ENOMEM;
	}
	v->value = nv;
	*vp = v;
	return 0;
}

/* ---- buffer handling ---------------------------------------------------- */

/*
 * fill() -- make more input available: drop consumed bytes, grow the buffer
 * if it is full (only happens for a meta-command line longer than BUFCAP),
 * read.  Returns bytes added (0 at EOF) or -errno.
 */
static ssize_t fill(struct pgl_parser *p)
{
	if (p->eof)
		return 0;
	if (p->pos > 0) {
		memmove(p->buf, p->buf + p->pos, p->end - p->pos);
		p->end -= p->pos;
		p->base += p->pos;
		p->pos = 0;
	}
	if (p->end == p->cap) {
		char *nb = realloc(p->buf, p->cap * 2 + 1);
		if (!nb)
			return -ENOMEM;
		p->buf = nb;
		p->cap *= 2;
	}
	ssize_t n = pgl_input_read(p->in, p->buf + p->end, p->cap - p->end);
	if (n < 0)
		return seterr(p, p->line, (int)n, "%s", pgl_input_error(p->in));
	if (n == 0)
		p->eof = true;
	p->end += (size_t)n;
	p->buf[p->end] = '\0';
	return n;
}

/* ensure() -- have at least N unread bytes, or all that is left. */
static int ensure(struct pgl_parser *p, size_t n)
{
	while (p->end - p->pos < n && !p->eof) {
		ssize_t r = fill(p);
		if (r < 0)
			return (int)r;
	}
	return 0;
}

/* at() -- the byte K positions ahead (after ensure()), or -1 past the end. */
static inline int at(const struct pgl_parser *p, size_t k)
{
	return p->pos + k < p->end ? (unsigned char)p->buf[p->pos + k] : -1;
}

static int sappend(struct pgl_parser *p, const char *s, size_t n)
{
	if (p->slen + n >= p->max_line) {
		char lim[32];
		return seterr(p, p->slen ? p->sline : p->line, -E2BIG,
			      "statement longer than %s (PostgreSQL's limit)",
			      limit_text(p, lim, sizeof(lim)));
	}
	if (p->slen + n + 1 > p->scap) {
		size_t nc = p->scap;
		while (p->slen + n + 1 > nc)
			nc *= 2;
		if (nc > p->max_line)
			nc = p->max_line; /* no 2 GB buffer for a statement just under 1 GB */
		char *ns = realloc(p->stmt, nc);
		if (!ns)
			return -ENOMEM;
		p->stmt = ns;
		p->scap = nc;
	}
	if (p->slen == 0) {
		p->sline = p->line;
		p->soff = p->base + p->pos;
	}
	memcpy(p->stmt + p->slen, s, n);
	p->slen += n;
	p->stmt[p->slen] = '\0';
	return 0;
}

/* take() -- append the next N input bytes to the statement and consume them. */
static int take(struct pgl_parser *p, size_t n)
{
	int ret = sappend(p, p->buf + p->pos, n);
	for (size_t i = 0; i < n; i++)
		if (p->buf[p->pos + i] == '\n')
			p->line++;
	p->pos += n;
	return ret;
}

static void reset_lexer(struct pgl_parser *p)
{
	p->st = S_NORMAL;
	p->cdepth = p->pdepth = p->bdepth = 0;
	p->nidents = 0;
	memset(p->idents, 0, sizeof(p->idents));
	p->inword = false;
	p->wlen = 0;
	p->nwords = 0;
	p->is_copy = p->copy_in = p->prev_from = false;
}

/* ---- words: psql's BEGIN ATOMIC heuristic and COPY detection ------------ */

static bool wordis(const struct pgl_parser *p, const char *kw)
{
	return !p->wlong && strlen(kw) == p->wlen && memcmp(p->word, kw, p->wlen) == 0;
}

/* end_word() -- a bare word just ended: update the keyword trackers. */
static void end_word(struct pgl_parser *p)
{
	p->inword = false;
	if (p->wnum)
		return;
	/* psql: remember CREATE, OR, REPLACE, FUNCTION, PROCEDURE by initial */
	if (p->nidents < sizeof(p->idents) &&
	    (wordis(p, "create") || wordis(p, "function") || wordis(p, "procedure") ||
	     wordis(p, "or") || wordis(p, "replace")))
		p->idents[p->nidents] = p->word[0];
	p->nidents++;
	const char *id = p->idents;
	if (id[0] == 'c' &&
	    (id[1] == 'f' || id[1] == 'p' ||
	     (id[1] == 'o' && id[2] == 'r' && (id[3] == 'f' || id[3] == 'p'))) &&
	    p->pdepth == 0) {
		if (wordis(p, "begin"))
			p->bdepth++;
		else if (wordis(p, "case")) {
			if (p->bdepth >= 1)
				p->bdepth++;
		} else if (wordis(p, "end")) {
			if (p->bdepth > 0)
				p->bdepth--;
		}
	}
	if (p->nwords == 0 && wordis(p, "copy"))
		p->is_copy = true;
	if (p->is_copy && p->pdepth == 0 && p->prev_from && wordis(p, "stdin"))
		p->copy_in = true;
	p->prev_from = p->pdepth == 0 && wordis(p, "from");
	p->nwords++;
}

static void add_word_char(struct pgl_parser *p, int c)
{
	if (!p->inword) {
		p->inword = true;
		p->wlen = 0;
		p->wlong = false;
		p->wnum = isdigit(c);
	}
	if (p->wlen < WORDMAX)
		p->word[p->wlen++] = (char)tolower(c);
	else
		p->wlong = true;
}

/* ---- variables ---------------------------------------------------------- */

/*
 * interpolate() -- at ':' in normal state: psql substitutes :name, :'name'
 * (as a literal) and :"name" (as an identifier) when the variable is set.
 * Returns 1 if something was consumed, 0 if not a variable reference.
 */
static int interpolate(struct pgl_parser *p)
{
	int q = at(p, 1), ret;
	size_t start = (q == '\'' || q == '"') ? 2 : 1, n = 0;
	while (p->pos + start + n < p->end &&
	       (pgl_sql_ident_cont((unsigned char)p->buf[p->pos + start + n]) &&
		p->buf[p->pos + start + n] != '$'))
		n++;
	if (n == 0 || n > 200)
		return 0;
	if (start == 2 && at(p, start + n) != q)
		return 0;
	char name[201];
	memcpy(name, p->buf + p->pos + start, n);
	name[n] = '\0';
	const char *v = pgl_parser_var(p, name);
	if (!v)
		return 0;
	if (start == 1) {
		ret = sappend(p, v, strlen(v));
	} else {
		/* quote the value: double the quote character (and backslashes
		 * in literals, using E'' when there are any, like PQescapeLiteral) */
		bool bs = q == '\'' && strchr(v, '\\');
		ret = bs ? sappend(p, " E'", 3) : sappend(p, q == '\'' ? "'" : "\"", 1);
		for (const char *s = v; *s && ret == 0; s++) {
			if (*s == q || (bs && *s == '\\'))
				ret = sappend(p, s, 1);
			if (ret == 0)
				ret = sappend(p, s, 1);
		}
		if (ret == 0)
			ret = sappend(p, q == '\'' ? "'" : "\"", 1);
	}
	p->pos += start + n + (start == 2);
	return ret < 0 ? ret : 1;
}

/* ---- meta-commands ------------------------------------------------------ */

static const char *const ignored_meta[] = {"timing", "pset", "t", "a", "x", NULL};

/*
 * split_args() -- split a meta-command's argument text in place, psql style:
 * whitespace separates, '...' is a literal (with '' and \ escapes), "..." keeps
 * its content verbatim.
 */
static int split_args(char *s, const char **argv, int max)
{
	int argc = 0;
	while (*s) {
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		if (argc == max)
			return -E2BIG;
		char *o = s;
		argv[argc++] = o;
		while (*s && !isspace((unsigned char)*s)) {
			if (*s == '\'' || *s == '"') {
				char q = *s++;
				while (*s) {
					if (*s == q && s[1] == q) {
						*o++ = q;
						s += 2;
					} else if (*s == q) {
						s++;
						break;
					} else if (q == '\'' && *s == '\\' && s[1]) {
						s++;
						switch (*s) {
						case 'n':
							*o++ = '\n';
							break;
						case 't':
							*o++ = '\t';
							break;
						default:
							*o++ = *s;
							break;
						}
						s++;
					} else {
						*o++ = *s++;
					}
				}
			} else {
				*o++ = *s++;
			}
		}
		bool end = *s == '\0';
		*o = '\0';
		if (!end)
			s++;
	}
	return argc;
}

/*
 * pgl_slash_copy_parse() -- see pgload.h.  A small tokenizer: quotes and
 * parentheses are skipped whole, so a (query) or a quoted name may contain
 * FROM or TO.
 */
int pgl_slash_copy_parse(const char *args, struct pgl_slash_copy *out)
{
	const char *s = args, *split = NULL;
	int depth = 0;
	memset(out, 0, sizeof(*out));
	while (*s) {
		if (*s == '\'' || *s == '"') {
			char q = *s++;
			while (*s && !(*s == q && s[1] != q))
				s += (*s == q) ? 2 : 1;
			if (*s)
				s++;
			continue;
		}
		if (*s == '(') {
			depth++;
			s++;
			continue;
		}
		if (*s == ')') {
			depth--;
			s++;
			continue;
		}
		if (depth == 0 && (s == args || isspace((unsigned char)s[-1]) || s[-1] == ')')) {
			size_t n = 0;
			while (isalpha((unsigned char)s[n]))
				n++;
			if (((n == 4 && strncasecmp(s, "from", 4) == 0) ||
			     (n == 2 && strncasecmp(s, "to", 2) == 0)) &&
			    (isspace((unsigned char)s[n]) || s[n] == '\'')) {
				split = s;
				out->from = n == 4;
				s += n;
				break;
			}
			if (n) {
				s += n;
				continue;
			}
		}
		s++;
	}
	if (!split)
		return -EINVAL;
	size_t tl = (size_t)(split - args);
	while (tl > 0 && isspace((unsigned char)args[tl - 1]))
		tl--;
	if (tl == 0 || tl >= sizeof(out->target))
		return -EINVAL;
	memcpy(out->target, args, tl);
	out->target[tl] = '\0';
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '\'') {
		size_t o = 0;
		for (s++; *s; s++) {
			if (*s == '\'' && s[1] == '\'')
				s++;
			else if (*s == '\'')
				break;
			if (o + 1 < sizeof(out->source))
				out->source[o++] = *s;
		}
		if (*s != '\'')
			return -EINVAL;
		s++;
		out->source[o] = '\0';
		out->kind = PGL_COPY_FILE;
	} else {
		size_t n = 0;
		while (s[n] && !isspace((unsigned char)s[n]))
			n++;
		if (n == 0 || n >= sizeof(out->source))
			return -EINVAL;
		memcpy(out->source, s, n);
		out->source[n] = '\0';
		s += n;
		if (!strcasecmp(out->source, "stdin") || !strcasecmp(out->source, "stdout"))
			out->kind = PGL_COPY_INLINE;
		else if (!strcasecmp(out->source, "pstdin") || !strcasecmp(out->source, "pstdout"))
			out->kind = PGL_COPY_PSTD;
		else if (!strcasecmp(out->source, "program"))
			return -ENOTSUP;
		else
			out->kind = PGL_COPY_FILE;
	}
	while (isspace((unsigned char)*s))
		s++;
	int n = snprintf(out->sql, sizeof(out->sql), "COPY %s %s%s%s", out->target,
			 out->from ? "FROM STDIN" : "TO STDOUT", *s ? " " : "", s);
	return n < (int)sizeof(out->sql) ? 0 : -E2BIG;
}

/*
 * slash_copy() -- \copy: hand the arguments out raw; "from stdin" data
 * follows in the script, from the next line up to \.
 */
static int slash_copy(struct pgl_parser *p, struct pgl_item *it, char *rest)
{
	struct pgl_slash_copy sc;
	while (isspace((unsigned char)*rest))
		rest++;
	int ret = pgl_slash_copy_parse(rest, &sc);
	if (ret == -ENOTSUP)
		return seterr(p, it->line, ret, "\\copy ... program is not supported");
	if (ret < 0)
		return seterr(p, it->line, ret, "cannot parse \\copy arguments \"%s\"", rest);
	it->cmd = "copy";
	it->argv[0] = rest;
	it->argc = 1;
	it->meta = PGL_META_COPY;
	if (sc.from && sc.kind == PGL_COPY_INLINE) {
		/* the data starts on the next line */
		it->copy_in = true;
		if (p->pos < p->end && p->buf[p->pos] == '\n') {
			p->pos++;
			p->line++;
		}
		p->copy_mode = true;
		p->copy_bol = true;
		p->copy_line0 = p->line;
	}
	return 1;
}

/*
 * meta() -- at a backslash in normal state.  Handles \set, \unset, \restrict,
 * \unrestrict itself; fills *it for the caller and returns 1, or returns 0
 * if nothing is to be reported, or -errno.
 */
static int meta(struct pgl_parser *p, struct pgl_item *it)
{
	unsigned long line = p->line;
	uint64_t off = p->base + p->pos;
	int ret;
	char *nl;

	/* the whole line must be in the buffer */
	for (;;) {
		nl = memchr(p->buf + p->pos, '\n', p->end - p->pos);
		if (nl || p->eof || p->end - p->pos >= p->max_line)
			break;
		if ((ret = (int)fill(p)) < 0)
			return ret;
	}
	size_t len = nl ? (size_t)(nl - (p->buf + p->pos)) : p->end - p->pos;
	if (len >= p->max_line) {
		char lim[32];
		return seterr(p, line, -E2BIG,
			      "meta-command line longer than %s (PostgreSQL's limit)",
			      limit_text(p, lim, sizeof(lim)));
	}
	if (memchr(p->buf + p->pos, '\0', len))
		return seterr(p, line, -EBADMSG,
			      "a NUL byte in a meta-command line (a binary or damaged file?)");
	if (len + 1 > p->metacap) {
		free(p->meta);
		p->metacap = len + 1 > 256 ? len + 1 : 256;
		if (!(p->meta = malloc(p->metacap)))
			return -ENOMEM;
	}
	memcpy(p->meta, p->buf + p->pos + 1, len - 1);
	p->meta[len - 1] = '\0';
	if (len > 1 && p->meta[len - 2] == '\r')
		p->meta[len - 2] = '\0';
	p->pos += len; /* the newline stays: it ends the line as usual */

	/* command name: up to whitespace or the next backslash */
	char *cmd = p->meta, *args = cmd;
	if (*args == ';') {
		args++;
	} else {
		while (*args && !isspace((unsigned char)*args) && *args != '\\')
			args++;
	}
	char *rest = args;
	char *stop = strstr(rest, "\\\\"); /* "\\" separates commands */
	if (stop && stop != rest) {
		*stop = '\0';
		if (stop[2] && strspn(stop + 2, " \t") != strlen(stop + 2))
			return seterr(p, line, -EINVAL,
				      "several meta-commands on one line are not supported");
	}
	char name[32];
	size_t nlen = (size_t)(args - cmd);
	if (nlen == 0 || nlen >= sizeof(name))
		return seterr(p, line, -EINVAL, "invalid meta-command \"\\%.*s\"",
			      (int)(nlen ? nlen : 1), cmd);
	memcpy(name, cmd, nlen);
	name[nlen] = '\0';

	memset(it, 0, sizeof(*it));
	it->kind = PGL_ITEM_META;
	it->line = line;
	it->offset = off;
	it->cmd = cmd;
	if (p->restricted && strcmp(name, "unrestrict") != 0)
		return seterr(p, line, -EPERM,
			      "\\%s is not allowed in restricted mode (only \\unrestrict is)",
			      name);
	if (strcmp(name, "copy") == 0)
		return slash_copy(p, it, rest);
	int argc = split_args(rest, it->argv, PGL_META_MAXARGS);
	if (argc < 0)
		return seterr(p, line, -EINVAL, "too many arguments to \\%s", name);
	it->argc = argc;
	cmd[nlen] = '\0';

	if (strcmp(name, "restrict") == 0) {
		if (argc != 1 || strlen(it->argv[0]) >= sizeof(p->restrict_key))
			return seterr(p, line, -EINVAL, "\\restrict needs one key argument");
		snprintf(p->restrict_key, sizeof(p->restrict_key), "%s", it->argv[0]);
		p->restricted = true;
		it->meta = PGL_META_OTHER;
		return 1;
	}
	if (strcmp(name, "unrestrict") == 0) {
		if (argc != 1)
			return seterr(p, line, -EINVAL, "\\unrestrict needs one key argument");
		if (!p->restricted)
			return seterr(p, line, -EINVAL, "\\unrestrict: not in restricted mode");
		if (strcmp(it->argv[0], p->restrict_key) != 0)
			return seterr(p, line, -EPERM, "\\unrestrict: wrong key");
		p->restricted = false;
		it->meta = PGL_META_OTHER;
		return 1;
	}
	if (strcmp(name, "set") == 0) {
		if (argc == 0)
			return 0;
		/* the value is the concatenation of the remaining arguments */
		size_t vl = 0;
		for (int i = 1; i < argc; i++)
			vl += strlen(it->argv[i]);
		char *val = malloc(vl + 1), *o = val;
		if (!val)
			return -ENOMEM;
		for (int i = 1; i < argc; i++)
			o = stpcpy(o, it->argv[i]);
		*o = '\0';
		ret = pgl_parser_setvar(p, it->argv[0], val);
		free(val);
		if (ret < 0)
			return ret;
		it->meta = PGL_META_SET;
		return 1;
	}
	if (strcmp(name, "unset") == 0) {
		if (argc != 1)
			return seterr(p, line, -EINVAL, "\\unset needs one variable name");
		pgl_parser_setvar(p, it->argv[0], NULL);
		it->meta = PGL_META_SET;
		return 1;
	}
	if (strcmp(name, "connect") == 0 || strcmp(name, "c") == 0) {
		/* drop options such as -reuse-previous=on */
		int o = 0;
		for (int i = 0; i < argc; i++)
			if (it->argv[i][0] != '-' || it->argv[i][1] == '\0')
				it->argv[o++] = it->argv[i];
		it->argc = o;
		it->meta = PGL_META_CONNECT;
		return 1;
	}
	if (strcmp(name, "echo") == 0 || strcmp(name, "qecho") == 0) {
		/* rejoin in place: arguments are consecutive in p->meta */
		char *o = p->meta;
		for (int i = 0; i < argc; i++) {
			size_t l = strlen(it->argv[i]);
			memmove(o, it->argv[i], l);
			o += l;
			if (i + 1 < argc)
				*o++ = ' ';
		}
		*o = '\0';
		it->cmd = name[0] == 'e' ? "echo" : "qecho";
		it->argv[0] = p->meta;
		it->argc = 1;
		it->meta = PGL_META_ECHO;
		return 1;
	}
	if (strcmp(name, "encoding") == 0) {
		if (argc != 1)
			return seterr(p, line, -EINVAL, "\\encoding needs one encoding name");
		it->meta = PGL_META_ENCODING;
		return 1;
	}
	if (strcmp(name, "q") == 0 || strcmp(name, "quit") == 0) {
		p->quit = true;
		it->meta = PGL_META_QUIT;
		return 1;
	}
	if (strcmp(name, ";") == 0) {
		ret = sappend(p, ";", 1);
		return ret < 0 ? ret : 0;
	}
	for (int i = 0; ignored_meta[i]; i++) {
		if (strcmp(name, ignored_meta[i]) == 0) {
			it->meta = PGL_META_OTHER;
			return 1;
		}
	}
	return seterr(p, line, -EINVAL, "unsupported meta-command \"\\%s\"", name);
}

/* ---- statements --------------------------------------------------------- */

/*
 * copy_rest_of_line() -- COPY data starts on the line after the statement:
 * consume the rest of the statement's line, which may hold only whitespace
 * (psql would run anything else after the data; we refuse it).
 */
static int copy_rest_of_line(struct pgl_parser *p)
{
	char *nl;
	int ret;
	for (;;) {
		nl = memchr(p->buf + p->pos, '\n', p->end - p->pos);
		if (nl || p->eof)
			break;
		if (p->end - p->pos > 4096)
			return seterr(p, p->line, -EINVAL,
				      "text after COPY ... FROM stdin on the same line");
		if ((ret = (int)fill(p)) < 0)
			return ret;
	}
	size_t n = nl ? (size_t)(nl - (p->buf + p->pos)) : p->end - p->pos;
	for (size_t i = 0; i < n; i++) {
		const char *c = p->buf + p->pos + i;
		if (c[0] == '-' && i + 1 < n && c[1] == '-')
			break;
		if (!isspace((unsigned char)c[0]))
			return seterr(
			    p, p->line, -EINVAL,
			    "text after COPY ... FROM stdin on the same line is not supported");
	}
	p->pos += n;
	if (nl) {
		p->pos++;
		p->line++;
	}
	return 0;
}

/* emit() -- hand out the collected statement. */
static int emit(struct pgl_parser *p, struct pgl_item *it)
{
	int ret;
	const char *nul = memchr(p->stmt, '\0', p->slen);
	if (nul) {
		unsigned long line = p->sline;
		for (const char *c = p->stmt; c < nul; c++)
			line += *c == '\n';
		return seterr(p, line, -EBADMSG,
			      "a NUL byte in SQL text (a binary or damaged file?)");
	}
	if (p->copy_in && (ret = copy_rest_of_line(p)) < 0)
		return ret;
	memset(it, 0, sizeof(*it));
	it->kind = PGL_ITEM_SQL;
	it->text = p->stmt;
	it->len = p->slen;
	it->line = p->sline;
	it->offset = p->soff;
	it->copy_in = p->copy_in;
	if (p->copy_in) {
		p->copy_mode = true;
		p->copy_bol = true;
		p->copy_line0 = p->line;
	}
	p->slen = 0;
	reset_lexer(p);
	return 1;
}

/* only_comments() -- true if the statement buffer holds nothing to send. */
static bool only_comments(const char *s)
{
	return *pgl_sql_skip(s) == '\0';
}

/* dollar_tag() -- length of a $tag$ opener at pos (0 if none). */
static size_t dollar_tag(const struct pgl_parser *p)
{
	size_t k = 1;
	int c = at(p, 1);
	if (c == '$')
		return 2;
	if (c < 0 || !pgl_sql_ident_start(c))
		return 0;
	while (k <= MAXTAG) {
		c = at(p, k);
		if (c == '$')
			return k + 1;
		if (c < 0 || !(pgl_sql_ident_start(c) || isdigit(c)))
			return 0;
		k++;
	}
	return 0;
}

/* span() -- length of the run at pos free of the bytes in STOP (up to '\0'). */
static inline size_t span(const struct pgl_parser *p, const bool *stop)
{
	const unsigned char *s = (const unsigned char *)p->buf + p->pos;
	const unsigned char *e = (const unsigned char *)p->buf + p->end;
	const unsigned char *q = s;
	while (q < e && !stop[*q])
		q++;
	return (size_t)(q - s);
}

static bool stop_sq[256], stop_sq_bs[256], stop_dq[256], stop_dollar[256], stop_comment[256],
    stop_eol[256];

__attribute__((constructor)) static void init_tables(void)
{
	stop_sq['\''] = stop_sq['\n'] = true;
	stop_sq_bs['\''] = stop_sq_bs['\n'] = stop_sq_bs['\\'] = true;
	stop_dq['"'] = stop_dq['\n'] = true;
	stop_dollar['$'] = stop_dollar['\n'] = true;
	stop_comment['*'] = stop_comment['/'] = stop_comment['\n'] = true;
	stop_eol['\n'] = true;
}

/* eof_in_quote() -- the input ended inside a quote or comment. */
static int eof_in_quote(struct pgl_parser *p)
{
	const char *what = "a quoted string ('...')";
	switch (p->st) {
	case S_ESTRING:
		what = "an escape string (E'...')";
		break;
	case S_DQUOTE:
		what = "a quoted identifier (\"...\")";
		break;
	case S_DOLLAR:
		return seterr(p, p->qline, -EBADMSG,
			      "the input ends inside the dollar-quoted string (%.*s) that begins "
			      "here (a truncated file?)",
			      (int)p->taglen, p->tag);
	case S_COMMENT:
		what = "a comment (/* ... */)";
		break;
	default:
		break;
	}
	return seterr(p, p->qline, -EBADMSG,
		      "the input ends inside %s that begins here (a truncated file?)", what);
}

/*
 * sniff() -- refuse what is not a SQL script, by its first bytes: pg_dump's
 * custom and tar archives (pgload would send them to the server as SQL,
 * which answers with a syntax error at "PGDMP") and compressed files.
 */
static int sniff(struct pgl_parser *p)
{
	static const struct {
		size_t off, len;
		const char *magic, *what;
	} kinds[] = {
	    {0, 5, "PGDMP",
	     "looks like a pg_dump custom-format archive (-Fc), not SQL; convert it with "
	     "`pg_restore -f FILE.sql %s`"},
	    {257, 5, "ustar",
	     "looks like a tar archive (pg_dump -Ft?), not SQL; convert it with "
	     "`pg_restore -f FILE.sql %s`"},
	    {0, 2, "\x1f\x8b",
	     "is gzip-compressed; pgload reads plain and lz4 input: "
	     "`gzip -dc %s | pgload run --data -`"},
	    {0, 4, "\x28\xb5\x2f\xfd",
	     "is zstd-compressed; pgload reads plain and lz4 input: "
	     "`zstd -dc %s | pgload run --data -`"},
	    {4, 6, "1AY&SY",
	     "is bzip2-compressed; pgload reads plain and lz4 input: "
	     "`bzip2 -dc %s | pgload run --data -`"},
	    {0, 6, "\xfd\x37zXZ",
	     "is xz-compressed; pgload reads plain and lz4 input: "
	     "`xz -dc %s | pgload run --data -`"},
	};
	int ret = ensure(p, 512);
	if (ret < 0)
		return ret;
	const char *b = p->buf + p->pos;
	size_t avail = p->end - p->pos;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (avail < kinds[i].off + kinds[i].len ||
		    memcmp(b + kinds[i].off, kinds[i].magic, kinds[i].len) != 0)
			continue;
		if (kinds[i].off == 4 && memcmp(b, "BZh", 3) != 0)
			continue; /* bzip2: "BZh", a level, then the block magic */
		if (kinds[i].off == 257 && !memchr(b, '\0', 257))
			continue; /* a tar header pads its name field with NULs */
		char msg[400];
		snprintf(msg, sizeof(msg), kinds[i].what, p->name);
		return seterr_file(p, -EBADMSG, msg);
	}
	return 0;
}

/* next_sql() -- lex until a statement or meta-command is complete. */
static int next_sql(struct pgl_parser *p, struct pgl_item *it)
{
	int ret;
	if (!p->sniffed) {
		p->sniffed = true;
		if (p->base == 0 && p->pos == 0 && (ret = sniff(p)) < 0)
			return ret;
	}
	for (;;) {
		if (p->end - p->pos < LOOKAHEAD && !p->eof && (ret = ensure(p, LOOKAHEAD)) < 0)
			return ret;
		if (p->pos == p->end) {
			/* end of input: send what is left, as psql does */
			if (p->slen > 0 && p->st != S_NORMAL && p->st != S_LINECOMMENT)
				return eof_in_quote(p);
			if (p->slen > 0 && !only_comments(p->stmt))
				return emit(p, it);
			p->slen = 0;
			return 0;
		}
		int c = (unsigned char)p->buf[p->pos];
		size_t n;
		switch (p->st) {
		case S_SQUOTE:
		case S_ESTRING: {
			bool bs = p->st == S_ESTRING || !p->std_strings;
			n = span(p, bs ? stop_sq_bs : stop_sq);
			if (n > 0) {
				if ((ret = take(p, n)) < 0)
					return ret;
				continue;
			}
			if (c == '\\') {
				if ((ret = take(p, at(p, 1) >= 0 ? 2 : 1)) < 0)
					return ret;
			} else if (c == '\'') {
				if (at(p, 1) == '\'') {
					ret = take(p, 2);
				} else {
					ret = take(p, 1);
					p->st = S_NORMAL;
				}
				if (ret < 0)
					return ret;
			} else if ((ret = take(p, 1)) < 0) {
				return ret;
			}
			continue;
		}
		case S_DQUOTE:
			n = span(p, stop_dq);
			if (n == 0) {
				n = 1;
				if (c == '"') {
					if (at(p, 1) == '"')
						n = 2;
					else
						p->st = S_NORMAL;
				}
			}
			if ((ret = take(p, n)) < 0)
				return ret;
			continue;
		case S_DOLLAR:
			n = span(p, stop_dollar);
			if (n == 0) {
				n = 1;
				if (c == '$' && p->end - p->pos >= p->taglen &&
				    memcmp(p->buf + p->pos, p->tag, p->taglen) == 0) {
					n = p->taglen;
					p->st = S_NORMAL;
				}
			}
			if ((ret = take(p, n)) < 0)
				return ret;
			continue;
		case S_COMMENT:
			n = span(p, stop_comment);
			if (n == 0) {
				n = 1;
				if (c == '/' && at(p, 1) == '*') {
					n = 2;
					p->cdepth++;
				} else if (c == '*' && at(p, 1) == '/') {
					n = 2;
					if (--p->cdepth == 0)
						p->st = S_NORMAL;
				}
			}
			if ((ret = take(p, n)) < 0)
				return ret;
			continue;
		case S_LINECOMMENT:
			/* dropped before a statement, kept inside one (as psql does) */
			if (c == '\n') {
				p->st = S_NORMAL;
				break;
			}
			n = span(p, stop_eol);
			if (p->slen == 0)
				p->pos += n;
			else if ((ret = take(p, n)) < 0)
				return ret;
			continue;
		case S_NORMAL:
			break;
		}

		/* normal state */
		if (p->inword && pgl_sql_ident_cont(c)) {
			add_word_char(p, c);
			if ((ret = take(p, 1)) < 0)
				return ret;
			continue;
		}
		if (p->inword)
			end_word(p);
		if (isspace(c)) {
			if (p->slen == 0) {
				if (c == '\n')
					p->line++;
				p->pos++;
				continue;
			}
			if ((ret = take(p, 1)) < 0)
				return ret;
			continue;
		}
		if (c == '-' && at(p, 1) == '-') {
			p->st = S_LINECOMMENT;
			continue;
		}
		if (c == '/' && at(p, 1) == '*') {
			p->st = S_COMMENT;
			p->qline = p->line;
			p->cdepth = 1;
			if ((ret = take(p, 2)) < 0)
				return ret;
			continue;
		}
		if (c == '\'') {
			p->st = S_SQUOTE;
			p->qline = p->line;
			if ((ret = take(p, 1)) < 0)
				return ret;
			continue;
		}
		if ((c == 'e' || c == 'E') && at(p, 1) == '\'') {
			p->st = S_ESTRING;
			p->qline = p->line;
			if ((ret = take(p, 2)) < 0)
				return ret;
			continue;
		}
		if (c == '"') {
			p->st = S_DQUOTE;
			p->qline = p->line;
			if ((ret = take(p, 1)) < 0)
				return ret;
			continue;
		}
		if (c == '$') {
			n = dollar_tag(p);
			if (n > 0) {
				memcpy(p->tag, p->buf + p->pos, n);
				p->taglen = n;
				p->st = S_DOLLAR;
				p->qline = p->line;
			} else {
				n = 1;
			}
			if ((ret = take(p, n)) < 0)
				return ret;
			continue;
		}
		if (c == ':') {
			if (at(p, 1) == ':') {
				if ((ret = take(p, 2)) < 0)
					return ret;
				continue;
			}
			if (p->vars && (ret = interpolate(p)) != 0) {
				if (ret < 0)
					return ret;
				continue;
			}
			if ((ret = take(p, 1)) < 0)
				return ret;
			continue;
		}
		if (c == '\\') {
			ret = meta(p, it);
			if (ret != 0 || p->quit)
				return ret;
			continue;
		}
		if (c == '(')
			p->pdepth++;
		else if (c == ')' && p->pdepth > 0)
			p->pdepth--;
		if (pgl_sql_ident_start(c) || isdigit(c)) {
			add_word_char(p, c);
			if ((ret = take(p, 1)) < 0)
				return ret;
			continue;
		}
		if ((ret = take(p, 1)) < 0)
			return ret;
		if (c == ';' && p->pdepth == 0 && p->bdepth == 0)
			return emit(p, it);
	}
}

/* ---- COPY data ---------------------------------------------------------- */

/* copy_eof() -- the input ended inside COPY data, before its "\." line. */
static int copy_eof(struct pgl_parser *p)
{
	/* the last line of the input (the line count is past a final newline) */
	unsigned long last = p->copy_bol && p->line > p->copy_line0 ? p->line - 1 : p->line;
	return seterr(p, last, -EBADMSG,
		      "the input ends inside COPY data (which begins on line %lu) without "
		      "its \\. line (a truncated file?)",
		      p->copy_line0);
}

/* copy_too_long() -- the COPY line at p->line has reached the limit. */
static int copy_too_long(struct pgl_parser *p)
{
	char lim[32];
	return seterr(p, p->line, -E2BIG, "COPY data line longer than %s (PostgreSQL's limit)",
		      limit_text(p, lim, sizeof(lim)));
}

static int copy_end(struct pgl_parser *p, struct pgl_item *it, unsigned long line)
{
	memset(it, 0, sizeof(*it));
	it->kind = PGL_ITEM_COPY_END;
	it->line = line;
	it->offset = p->base + p->pos;
	p->copy_mode = false;
	return 1;
}

static int copy_data(struct pgl_parser *p, struct pgl_item *it, size_t start, unsigned long line)
{
	memset(it, 0, sizeof(*it));
	it->kind = PGL_ITEM_COPY_DATA;
	it->text = p->buf + start;
	it->len = p->pos - start;
	it->line = line;
	it->offset = p->base + start;
	return 1;
}

/* next_copy() -- the next span of COPY data, or the end of the block. */
static int next_copy(struct pgl_parser *p, struct pgl_item *it)
{
	int ret;
	for (;;) {
		if (p->pos == p->end) {
			if (p->eof)
				return copy_eof(p);
			if ((ret = (int)fill(p)) < 0)
				return ret;
			continue;
		}
		size_t start = p->pos;
		unsigned long line = p->line;
		if (!p->copy_bol) {
			/* the rest of a line of which a part was handed out */
			char *nl = memchr(p->buf + p->pos, '\n', p->end - p->pos);
			p->copylen += nl ? (size_t)(nl - (p->buf + p->pos)) : p->end - p->pos;
			if (p->copylen >= p->max_line)
				return copy_too_long(p);
			if (!nl) {
				p->pos = p->end;
				return copy_data(p, it, start, line);
			}
			p->pos = (size_t)(nl - p->buf) + 1;
			p->line++;
			p->copy_bol = true;
		}
		while (p->pos < p->end) {
			if (p->buf[p->pos] == '\\') {
				size_t avail = p->end - p->pos;
				if (avail < 4 && !p->eof)
					break;
				const char *s = p->buf + p->pos;
				size_t ml = 0;
				if (avail >= 2 && s[1] == '.') {
					if (avail == 2)
						ml = 2;
					else if (s[2] == '\n')
						ml = 3;
					else if (s[2] == '\r' && (avail == 3 || s[3] == '\n'))
						ml = avail == 3 ? 3 : 4;
				}
				if (ml) {
					if (p->pos > start)
						return copy_data(p, it, start, line);
					unsigned long l = p->line;
					p->pos += ml;
					if (s[ml - 1] == '\n')
						p->line++;
					return copy_end(p, it, l);
				}
			}
			char *nl = memchr(p->buf + p->pos, '\n', p->end - p->pos);
			if (!nl)
				break;
			if ((size_t)(nl - (p->buf + p->pos)) >= p->max_line)
				return copy_too_long(p); /* only with a limit below BUFCAP */
			p->pos = (size_t)(nl - p->buf) + 1;
			p->line++;
		}
		if (p->pos > start)
			return copy_data(p, it, start, line);
		/* a partial line at the start of the unread data */
		if (p->eof || p->end - p->pos >= p->cap / 2) {
			/* the input's last line, or a very long one: hand out its beginning */
			p->copylen = p->end - p->pos;
			if (p->copylen >= p->max_line)
				return copy_too_long(p);
			p->pos = p->end;
			p->copy_bol = false;
			return copy_data(p, it, start, line);
		}
		if ((ret = (int)fill(p)) < 0)
			return ret;
	}
}

int pgl_parser_begin_copy(struct pgl_parser *p, uint64_t offset, unsigned long line)
{
	if (p->base != 0 || p->end != 0 || p->line != 1)
		return -EBUSY;
	p->base = offset;
	p->line = line;
	p->copy_mode = true;
	p->copy_bol = true;
	p->copy_line0 = line;
	return 0;
}

int pgl_parser_next(struct pgl_parser *p, struct pgl_item *item)
{
	if (p->quit)
		return 0;
	if (p->copy_mode)
		return next_copy(p, item);
	return next_sql(p, item);
}
