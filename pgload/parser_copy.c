/*
 * parser_copy.c -- the COPY data that follows a COPY ... FROM STDIN (or a
 * \copy ... from stdin): spans of the read buffer up to the line that is
 * exactly "\.".
 *
 * What must stay true: the data is handed out as spans of the read buffer,
 * never collected, so memory is bounded by BUFCAP whatever the block's
 * size; a line of max_line bytes is refused as it streams, counted and
 * never held; the input ending before "\." is an error (a truncated dump
 * must not load as if it were whole).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "parser_i.h"

/* copy_eof() -- the input ended inside COPY data, before its "\." line. */
static int copy_eof(struct pgl_parser *p)
{
	/* the last line of the input (the line count is past a final newline) */
	unsigned long last = p->copy_bol && p->line > p->copy_line0 ? p->line - 1 : p->line;
	return pgl_ps_seterr(p, last, -EBADMSG,
			     "the input ends inside COPY data (which begins on line %lu) without "
			     "its \\. line (a truncated file?)",
			     p->copy_line0);
}

/* copy_too_long() -- the COPY line at p->line has reached the limit. */
static int copy_too_long(struct pgl_parser *p)
{
	char lim[32];
	return pgl_ps_seterr(p, p->line, -E2BIG,
			     "COPY data line longer than %s (PostgreSQL's limit)",
			     pgl_ps_limit_text(p, lim, sizeof(lim)));
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

int pgl_ps_next_copy(struct pgl_parser *p, struct pgl_item *it)
{
	int ret;
	for (;;) {
		if (p->pos == p->end) {
			if (p->eof)
				return copy_eof(p);
			if ((ret = (int)pgl_ps_fill(p)) < 0)
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
		if ((ret = (int)pgl_ps_fill(p)) < 0)
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
