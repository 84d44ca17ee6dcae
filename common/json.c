/*
 * json.c -- the JSON string writer (json.h).
 *
 * What must stay true: both writers escape with escape_byte(), so a string
 * reads the same from a file and from a buffer; a literal cut to fit a
 * buffer is still well-formed.
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
