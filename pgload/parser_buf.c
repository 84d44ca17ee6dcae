/*
 * parser_buf.c -- the script splitter's state: creating and freeing it, its
 * read buffer (refilled from the input, grown only for a meta-command line
 * longer than BUFCAP), the statement being collected (bounded by max_line),
 * its error messages and psql variables.
 *
 * What must stay true: memory is the read buffer plus the longest
 * statement, never the size of the input; a statement stops growing at the
 * limit with -E2BIG.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser_i.h"

int pgl_ps_seterr(struct pgl_parser *p, unsigned long line, int ret, const char *fmt, ...)
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

int pgl_ps_seterr_file(struct pgl_parser *p, int ret, const char *msg)
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

const char *pgl_ps_limit_text(const struct pgl_parser *p, char *buf, size_t cap)
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

/* ---- the read buffer and the statement -------------------------------- */

ssize_t pgl_ps_fill(struct pgl_parser *p)
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
		return pgl_ps_seterr(p, p->line, (int)n, "%s", pgl_input_error(p->in));
	if (n == 0)
		p->eof = true;
	p->end += (size_t)n;
	p->buf[p->end] = '\0';
	return n;
}

int pgl_ps_ensure(struct pgl_parser *p, size_t n)
{
	while (p->end - p->pos < n && !p->eof) {
		ssize_t r = pgl_ps_fill(p);
		if (r < 0)
			return (int)r;
	}
	return 0;
}

int pgl_ps_grow(struct pgl_parser *p, size_t n)
{
	if (p->slen + n >= p->max_line) {
		char lim[32];
		return pgl_ps_seterr(p, p->slen ? p->sline : p->line, -E2BIG,
				     "statement longer than %s (PostgreSQL's limit)",
				     pgl_ps_limit_text(p, lim, sizeof(lim)));
	}
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
	return 0;
}
