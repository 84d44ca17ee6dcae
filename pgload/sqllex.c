/*
 * sqllex.c -- the small SQL lexical helpers every part of pgload shares:
 * skipping whitespace and comments, reading a token, a bare word or a
 * quoted identifier, and a (schema-qualified) table name.
 *
 * The streaming splitter (parser.c) lexes a whole script; these read one
 * statement that is already in memory, to classify it (pool.c), name its
 * table (tallies) or show its first line (error messages).
 *
 * What must stay true: comments nest as in PostgreSQL; a quoted identifier
 * ends at a lone '"' ("" stands for one quote); a bare word is folded to
 * lower case, a quoted one kept as written; nothing reads past the NUL.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "pgload.h"
#include "pgload_i.h"

const char *pgl_sql_skip(const char *s)
{
	for (;;) {
		while (isspace((unsigned char)*s))
			s++;
		if (s[0] == '-' && s[1] == '-') {
			s += strcspn(s, "\n");
		} else if (s[0] == '/' && s[1] == '*') {
			int depth = 1;
			for (s += 2; *s && depth > 0; s++) {
				if (s[0] == '/' && s[1] == '*') {
					depth++;
					s++;
				} else if (s[0] == '*' && s[1] == '/') {
					depth--;
					s++;
				}
			}
		} else {
			return s;
		}
	}
}

/*
 * quoted() -- the quoted identifier at S (on its '"'): its content, "" as
 * one quote, into BUF (CAP bytes, cut to fit, may be NULL) at *LEN.  Returns
 * the end, past the closing quote, or NULL if there is none.
 */
static const char *quoted(const char *s, char *buf, size_t cap, size_t *len)
{
	for (s++; *s; s++) {
		if (*s == '"' && s[1] == '"')
			s++;
		else if (*s == '"')
			return s + 1;
		if (buf && *len + 1 < cap)
			buf[(*len)++] = *s;
	}
	return NULL;
}

/* word() -- the bare word at S, lowercased into BUF (as quoted()); its end. */
static const char *word(const char *s, char *buf, size_t cap, size_t *len)
{
	for (; pgl_sql_ident_cont((unsigned char)*s); s++)
		if (*len + 1 < cap)
			buf[(*len)++] = (char)tolower((unsigned char)*s);
	return s;
}

bool pgl_sql_token(const char **sp, struct pgl_sql_tok *t)
{
	const char *s = pgl_sql_skip(*sp);
	size_t n = 0;

	if (!*s)
		return false;
	memset(t, 0, sizeof(*t));
	t->start = s;
	if (*s == '"') {
		const char *e = quoted(s, NULL, 0, &n);
		s = e ? e : s + strlen(s);
		t->ident = true;
	} else if (pgl_sql_ident_start((unsigned char)*s)) {
		s = word(s, t->word, sizeof(t->word), &n);
		t->word[n] = '\0';
		t->ident = true;
	} else {
		s++;
	}
	t->len = (size_t)(s - t->start);
	*sp = s;
	return true;
}

bool pgl_sql_raw_name(const char **sp, char *buf, size_t cap)
{
	struct pgl_sql_tok t;
	const char *s = *sp, *start = NULL, *end = NULL;

	for (;;) {
		if (!pgl_sql_token(&s, &t) || !t.ident)
			return false;
		if (!start)
			start = t.start;
		end = s;
		if (*s != '.')
			break;
		s++;
	}
	size_t n = (size_t)(end - start);
	if (n + 1 > cap)
		return false;
	memcpy(buf, start, n);
	buf[n] = '\0';
	*sp = s;
	return true;
}

int pgl_sql_name(const char **sp, char *buf, size_t cap)
{
	const char *s = *sp;
	size_t o = 0;

	if (cap == 0)
		return -EINVAL;
	for (;;) {
		s = pgl_sql_skip(s);
		if (*s == '"')
			s = quoted(s, buf, cap, &o);
		else if (pgl_sql_ident_start((unsigned char)*s))
			s = word(s, buf, cap, &o);
		else
			s = NULL;
		if (!s)
			return -EINVAL;
		if (*s != '.')
			break;
		if (o + 1 < cap)
			buf[o++] = '.';
		s++;
	}
	buf[o] = '\0';
	*sp = s;
	return (int)o;
}

/* pgl_copy_target() -- see pgload.h. */
int pgl_copy_target(const char *text, char *buf, size_t cap)
{
	struct pgl_sql_tok t;
	const char *s = text, *s2;

	if (!pgl_sql_token(&s, &t) || strcmp(t.word, "copy") != 0)
		return -EINVAL;
	s2 = s;
	if (pgl_sql_token(&s2, &t) && strcmp(t.word, "only") == 0)
		s = s2;
	return pgl_sql_name(&s, buf, cap);
}
