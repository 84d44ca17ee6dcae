/*
 * json.c -- the JSON string writer and reader (json.h).
 *
 * What must stay true: both writers escape with escape_byte(), so a string
 * reads the same from a file and from a buffer; a literal cut to fit a
 * buffer is still well-formed; the reader gives back every string the
 * writers write, byte for byte.
 */
#include "json.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* escape_byte() -- byte C as it stands inside a JSON string, into E (at
 * least 7 bytes); returns its length. */
static size_t escape_byte(unsigned char c, char *e)
{
	static const char shortform[] = {['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r',
					 ['\t'] = 't', ['"'] = '"',  ['\\'] = '\\'};

	if (c < sizeof(shortform) && shortform[c]) {
		e[0] = '\\';
		e[1] = shortform[c];
		return 2;
	}
	if (c < 0x20)
		return (size_t)snprintf(e, 7, "\\u%04x", c);
	e[0] = (char)c;
	return 1;
}

size_t json_str_format(char *out, size_t cap, const char *s)
{
	size_t len = 1, o = 0;
	bool cut = false;
	char e[8];

	if (cap >= 3)
		out[o++] = '"';
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		size_t n = escape_byte(*p, e);

		/* room for this escape, the closing quote and the NUL */
		if (!cut && cap >= 3 && o + n + 2 <= cap) {
			memcpy(out + o, e, n);
			o += n;
		} else {
			cut = true;
		}
		len += n;
	}
	if (cap >= 3)
		out[o++] = '"';
	if (cap > 0)
		out[o] = '\0';
	return len + 1;
}

void json_str_write(FILE *f, const char *s)
{
	char e[8];

	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
		fwrite(e, 1, escape_byte(*p, e), f);
	fputc('"', f);
}

/* hex4() -- the 4 hex digits at S, or -1. */
static long hex4(const char *s)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		int c = s[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* utf8() -- code point CP as UTF-8 into E; its length. */
static size_t utf8(long cp, char *e)
{
	if (cp < 0x80) {
		e[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		e[0] = (char)(0xC0 | cp >> 6);
		e[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		e[0] = (char)(0xE0 | cp >> 12);
		e[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		e[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	e[0] = (char)(0xF0 | cp >> 18);
	e[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	e[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	e[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

const char *json_str_read(const char *s, char *out, size_t cap)
{
	static const char unescape[] = {['"'] = '"',  ['\\'] = '\\', ['/'] = '/',  ['b'] = '\b',
					['f'] = '\f', ['n'] = '\n',  ['r'] = '\r', ['t'] = '\t'};
	size_t o = 0;
	bool cut = false;
	char e[4];

	if (*s != '"')
		return NULL;
	for (s++; *s != '"'; s++) {
		size_t n = 1;

		if (!*s)
			return NULL;
		e[0] = *s;
		if (*s == '\\') {
			unsigned char c = (unsigned char)*++s;
			long cp;

			if (c == 'u') {
				if ((cp = hex4(s + 1)) < 0)
					return NULL;
				s += 4;
				if (cp >= 0xD800 && cp < 0xDC00 && s[1] == '\\' && s[2] == 'u') {
					long lo = hex4(s + 3);
					if (lo >= 0xDC00 && lo < 0xE000) {
						cp =
						    0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
						s += 6;
					}
				}
				if (cp >= 0xD800 && cp < 0xE000)
					cp = 0xFFFD; /* a lone surrogate */
				n = utf8(cp, e);
			} else if (c < sizeof(unescape) && unescape[c]) {
				e[0] = unescape[c];
			} else {
				return NULL;
			}
		}
		if (!cut && o + n < cap) {
			memcpy(out + o, e, n);
			o += n;
		} else {
			cut = true; /* never a character split, never one left out */
		}
	}
	if (cap > 0)
		out[o] = '\0';
	return s + 1;
}
