/*
 * parser.c -- split a psql script into statements, COPY data and
 * meta-commands, the way psql's lexer (psqlscan.l) does: the statement
 * lexer and pgl_parser_next().  The read buffer and the statement are in
 * parser_buf.c, meta-commands in parser_meta.c, COPY data in
 * parser_copy.c.
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
#include <stdio.h>
#include <string.h>

#include "parser_i.h"
#include "pgload_i.h"

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
	int q = pgl_ps_at(p, 1), ret;
	size_t start = (q == '\'' || q == '"') ? 2 : 1, n = 0;
	while (p->pos + start + n < p->end &&
	       (pgl_sql_ident_cont((unsigned char)p->buf[p->pos + start + n]) &&
		p->buf[p->pos + start + n] != '$'))
		n++;
	if (n == 0 || n > 200)
		return 0;
	if (start == 2 && pgl_ps_at(p, start + n) != q)
		return 0;
	char name[201];
	memcpy(name, p->buf + p->pos + start, n);
	name[n] = '\0';
	const char *v = pgl_parser_var(p, name);
	if (!v)
		return 0;
	if (start == 1) {
		ret = pgl_ps_sappend(p, v, strlen(v));
	} else {
		/* quote the value: double the quote character (and backslashes
		 * in literals, using E'' when there are any, like PQescapeLiteral) */
		bool bs = q == '\'' && strchr(v, '\\');
		ret =
		    bs ? pgl_ps_sappend(p, " E'", 3) : pgl_ps_sappend(p, q == '\'' ? "'" : "\"", 1);
		for (const char *s = v; *s && ret == 0; s++) {
			if (*s == q || (bs && *s == '\\'))
				ret = pgl_ps_sappend(p, s, 1);
			if (ret == 0)
				ret = pgl_ps_sappend(p, s, 1);
		}
		if (ret == 0)
			ret = pgl_ps_sappend(p, q == '\'' ? "'" : "\"", 1);
	}
	p->pos += start + n + (start == 2);
	return ret < 0 ? ret : 1;
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
			return pgl_ps_seterr(p, p->line, -EINVAL,
					     "text after COPY ... FROM stdin on the same line");
		if ((ret = (int)pgl_ps_fill(p)) < 0)
			return ret;
	}
	size_t n = nl ? (size_t)(nl - (p->buf + p->pos)) : p->end - p->pos;
	for (size_t i = 0; i < n; i++) {
		const char *c = p->buf + p->pos + i;
		if (c[0] == '-' && i + 1 < n && c[1] == '-')
			break;
		if (!isspace((unsigned char)c[0]))
			return pgl_ps_seterr(
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
		return pgl_ps_seterr(p, line, -EBADMSG,
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
	int c = pgl_ps_at(p, 1);
	if (c == '$')
		return 2;
	if (c < 0 || !pgl_sql_ident_start(c))
		return 0;
	while (k <= MAXTAG) {
		c = pgl_ps_at(p, k);
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
		return pgl_ps_seterr(
		    p, p->qline, -EBADMSG,
		    "the input ends inside the dollar-quoted string (%.*s) that begins "
		    "here (a truncated file?)",
		    (int)p->taglen, p->tag);
	case S_COMMENT:
		what = "a comment (/* ... */)";
		break;
	default:
		break;
	}
	return pgl_ps_seterr(p, p->qline, -EBADMSG,
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
	int ret = pgl_ps_ensure(p, 512);
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
		return pgl_ps_seterr_file(p, -EBADMSG, msg);
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
		if (p->end - p->pos < LOOKAHEAD && !p->eof &&
		    (ret = pgl_ps_ensure(p, LOOKAHEAD)) < 0)
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
				if ((ret = pgl_ps_take(p, n)) < 0)
					return ret;
				continue;
			}
			if (c == '\\') {
				if ((ret = pgl_ps_take(p, pgl_ps_at(p, 1) >= 0 ? 2 : 1)) < 0)
					return ret;
			} else if (c == '\'') {
				if (pgl_ps_at(p, 1) == '\'') {
					ret = pgl_ps_take(p, 2);
				} else {
					ret = pgl_ps_take(p, 1);
					p->st = S_NORMAL;
				}
				if (ret < 0)
					return ret;
			} else if ((ret = pgl_ps_take(p, 1)) < 0) {
				return ret;
			}
			continue;
		}
		case S_DQUOTE:
			n = span(p, stop_dq);
			if (n == 0) {
				n = 1;
				if (c == '"') {
					if (pgl_ps_at(p, 1) == '"')
						n = 2;
					else
						p->st = S_NORMAL;
				}
			}
			if ((ret = pgl_ps_take(p, n)) < 0)
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
			if ((ret = pgl_ps_take(p, n)) < 0)
				return ret;
			continue;
		case S_COMMENT:
			n = span(p, stop_comment);
			if (n == 0) {
				n = 1;
				if (c == '/' && pgl_ps_at(p, 1) == '*') {
					n = 2;
					p->cdepth++;
				} else if (c == '*' && pgl_ps_at(p, 1) == '/') {
					n = 2;
					if (--p->cdepth == 0)
						p->st = S_NORMAL;
				}
			}
			if ((ret = pgl_ps_take(p, n)) < 0)
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
			else if ((ret = pgl_ps_take(p, n)) < 0)
				return ret;
			continue;
		case S_NORMAL:
			break;
		}

		/* normal state */
		if (p->inword && pgl_sql_ident_cont(c)) {
			add_word_char(p, c);
			if ((ret = pgl_ps_take(p, 1)) < 0)
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
			if ((ret = pgl_ps_take(p, 1)) < 0)
				return ret;
			continue;
		}
		if (c == '-' && pgl_ps_at(p, 1) == '-') {
			p->st = S_LINECOMMENT;
			continue;
		}
		if (c == '/' && pgl_ps_at(p, 1) == '*') {
			p->st = S_COMMENT;
			p->qline = p->line;
			p->cdepth = 1;
			if ((ret = pgl_ps_take(p, 2)) < 0)
				return ret;
			continue;
		}
		if (c == '\'') {
			p->st = S_SQUOTE;
			p->qline = p->line;
			if ((ret = pgl_ps_take(p, 1)) < 0)
				return ret;
			continue;
		}
		if ((c == 'e' || c == 'E') && pgl_ps_at(p, 1) == '\'') {
			p->st = S_ESTRING;
			p->qline = p->line;
			if ((ret = pgl_ps_take(p, 2)) < 0)
				return ret;
			continue;
		}
		if (c == '"') {
			p->st = S_DQUOTE;
			p->qline = p->line;
			if ((ret = pgl_ps_take(p, 1)) < 0)
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
			if ((ret = pgl_ps_take(p, n)) < 0)
				return ret;
			continue;
		}
		if (c == ':') {
			if (pgl_ps_at(p, 1) == ':') {
				if ((ret = pgl_ps_take(p, 2)) < 0)
					return ret;
				continue;
			}
			if (p->vars && (ret = interpolate(p)) != 0) {
				if (ret < 0)
					return ret;
				continue;
			}
			if ((ret = pgl_ps_take(p, 1)) < 0)
				return ret;
			continue;
		}
		if (c == '\\') {
			ret = pgl_ps_meta(p, it);
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
			if ((ret = pgl_ps_take(p, 1)) < 0)
				return ret;
			continue;
		}
		if ((ret = pgl_ps_take(p, 1)) < 0)
			return ret;
		if (c == ';' && p->pdepth == 0 && p->bdepth == 0)
			return emit(p, it);
	}
}

int pgl_parser_next(struct pgl_parser *p, struct pgl_item *item)
{
	if (p->quit)
		return 0;
	if (p->copy_mode)
		return pgl_ps_next_copy(p, item);
	return next_sql(p, item);
}
