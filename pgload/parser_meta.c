/*
 * parser_meta.c -- psql's meta-commands in a script: the line after a
 * backslash, split into arguments as psql does; \set, \unset, \restrict
 * and \unrestrict handled here, \connect, \copy, \echo, \encoding, \q
 * handed to the caller, a few display commands accepted and ignored,
 * anything else refused.
 *
 * What must stay true: a meta-command runs to the end of its line; in
 * restricted mode (pg_dump's \restrict) only \unrestrict with the right
 * key is accepted; "\\" separating commands on one line is refused rather
 * than half done.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser_i.h"

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
		return pgl_ps_seterr(p, it->line, ret, "\\copy ... program is not supported");
	if (ret < 0)
		return pgl_ps_seterr(p, it->line, ret, "cannot parse \\copy arguments \"%s\"",
				     rest);
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

int pgl_ps_meta(struct pgl_parser *p, struct pgl_item *it)
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
		if ((ret = (int)pgl_ps_fill(p)) < 0)
			return ret;
	}
	size_t len = nl ? (size_t)(nl - (p->buf + p->pos)) : p->end - p->pos;
	if (len >= p->max_line) {
		char lim[32];
		return pgl_ps_seterr(p, line, -E2BIG,
				     "meta-command line longer than %s (PostgreSQL's limit)",
				     pgl_ps_limit_text(p, lim, sizeof(lim)));
	}
	if (memchr(p->buf + p->pos, '\0', len))
		return pgl_ps_seterr(
		    p, line, -EBADMSG,
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
			return pgl_ps_seterr(p, line, -EINVAL,
					     "several meta-commands on one line are not supported");
	}
	char name[32];
	size_t nlen = (size_t)(args - cmd);
	if (nlen == 0 || nlen >= sizeof(name))
		return pgl_ps_seterr(p, line, -EINVAL, "invalid meta-command \"\\%.*s\"",
				     (int)(nlen ? nlen : 1), cmd);
	memcpy(name, cmd, nlen);
	name[nlen] = '\0';

	memset(it, 0, sizeof(*it));
	it->kind = PGL_ITEM_META;
	it->line = line;
	it->offset = off;
	it->cmd = cmd;
	if (p->restricted && strcmp(name, "unrestrict") != 0)
		return pgl_ps_seterr(
		    p, line, -EPERM,
		    "\\%s is not allowed in restricted mode (only \\unrestrict is)", name);
	if (strcmp(name, "copy") == 0)
		return slash_copy(p, it, rest);
	int argc = split_args(rest, it->argv, PGL_META_MAXARGS);
	if (argc < 0)
		return pgl_ps_seterr(p, line, -EINVAL, "too many arguments to \\%s", name);
	it->argc = argc;
	cmd[nlen] = '\0';

	if (strcmp(name, "restrict") == 0) {
		if (argc != 1 || strlen(it->argv[0]) >= sizeof(p->restrict_key))
			return pgl_ps_seterr(p, line, -EINVAL, "\\restrict needs one key argument");
		snprintf(p->restrict_key, sizeof(p->restrict_key), "%s", it->argv[0]);
		p->restricted = true;
		it->meta = PGL_META_OTHER;
		return 1;
	}
	if (strcmp(name, "unrestrict") == 0) {
		if (argc != 1)
			return pgl_ps_seterr(p, line, -EINVAL,
					     "\\unrestrict needs one key argument");
		if (!p->restricted)
			return pgl_ps_seterr(p, line, -EINVAL,
					     "\\unrestrict: not in restricted mode");
		if (strcmp(it->argv[0], p->restrict_key) != 0)
			return pgl_ps_seterr(p, line, -EPERM, "\\unrestrict: wrong key");
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
			return pgl_ps_seterr(p, line, -EINVAL, "\\unset needs one variable name");
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
			return pgl_ps_seterr(p, line, -EINVAL,
					     "\\encoding needs one encoding name");
		it->meta = PGL_META_ENCODING;
		return 1;
	}
	if (strcmp(name, "q") == 0 || strcmp(name, "quit") == 0) {
		p->quit = true;
		it->meta = PGL_META_QUIT;
		return 1;
	}
	if (strcmp(name, ";") == 0) {
		ret = pgl_ps_sappend(p, ";", 1);
		return ret < 0 ? ret : 0;
	}
	for (int i = 0; ignored_meta[i]; i++) {
		if (strcmp(name, ignored_meta[i]) == 0) {
			it->meta = PGL_META_OTHER;
			return 1;
		}
	}
	return pgl_ps_seterr(p, line, -EINVAL, "unsupported meta-command \"\\%s\"", name);
}
