/*
 * test_json.c -- the JSON string writer and reader (common/json.h):
 * escapes, bytes that are not UTF-8, both writers alike, the length of a
 * literal that does not fit and a cut literal that stays well-formed; the
 * reader gives back every byte string the writer writes, decodes every
 * escape of RFC 8259 (\uXXXX and surrogate pairs as UTF-8), cuts without
 * splitting a character and refuses what is not a literal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#include "check.h"

/* to_file() -- what json_str_write() writes for S. */
static char *to_file(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	json_str_write(f, s);
	fclose(f);
	return buf;
}

/* same() -- S becomes WANT in a buffer and in a file. */
static int same(const char *s, const char *want)
{
	char out[256];
	char *file = to_file(s);
	size_t n = json_str_format(out, sizeof(out), s);
	int ok = n == strlen(want) && strcmp(out, want) == 0 && file && strcmp(file, want) == 0;

	if (!ok)
		fprintf(stderr, "for \"%s\": buffer \"%s\" (%zu), file \"%s\", want \"%s\"\n", s,
			out, n, file ? file : "(null)", want);
	free(file);
	return ok;
}

int main(void)
{
	char out[64];

	CHECK(same("", "\"\""));
	CHECK(same(NULL, "\"\""));
	CHECK(same("plain /srv/pg", "\"plain /srv/pg\""));
	CHECK(same("a\"b\\c", "\"a\\\"b\\\\c\""));
	CHECK(same("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\""));
	CHECK(same("\x01\x1f", "\"\\u0001\\u001f\""));
	/* bytes from 0x20 on, UTF-8 or not, are copied */
	CHECK(same("\x7f\xc3\xa9\xff", "\"\x7f\xc3\xa9\xff\""));

	/* too small: the length of the whole literal, a well-formed prefix */
	CHECK(json_str_format(out, 8, "abcdefghij") == 12 && strcmp(out, "\"abcde\"") == 0);
	/* an escape is never split */
	CHECK(json_str_format(out, 7, "abc\ndef") == 10 && strcmp(out, "\"abc\"") == 0);
	CHECK(json_str_format(out, 8, "abc\ndef") == 10 && strcmp(out, "\"abc\\n\"") == 0);
	CHECK(json_str_format(out, 9, "a\x01") == 9 && strcmp(out, "\"a\"") == 0);
	CHECK(json_str_format(out, 10, "a\x01") == 9 && strcmp(out, "\"a\\u0001\"") == 0);
	/* exactly fitting, and the smallest buffers */
	CHECK(json_str_format(out, 4, "ab") == 4 && strcmp(out, "\"a\"") == 0);
	CHECK(json_str_format(out, 5, "ab") == 4 && strcmp(out, "\"ab\"") == 0);
	CHECK(json_str_format(out, 3, "ab") == 4 && strcmp(out, "\"\"") == 0);
	out[0] = 'x';
	CHECK(json_str_format(out, 2, "ab") == 4 && out[0] == '\0');
	CHECK(json_str_format(NULL, 0, "ab") == 4);

	/* the reader gives back what the writer wrote: every byte 1..255 */
	char all[256], lit[2048], back[512];
	for (int i = 0; i < 255; i++)
		all[i] = (char)(i + 1);
	all[255] = '\0';
	CHECK(json_str_format(lit, sizeof(lit), all) < sizeof(lit));
	const char *end = json_str_read(lit, back, sizeof(back));
	CHECK(end && *end == '\0' && strcmp(back, all) == 0);
	/* escapes the writer does not use */
	CHECK(json_str_read("\"a\\/\\u0041\\u00e9\\u20ac\",", back, sizeof(back)) &&
	      strcmp(back, "a/A\xc3\xa9\xe2\x82\xac") == 0);
	CHECK(json_str_read("\"\\ud83d\\ude00\"", back, sizeof(back)) &&
	      strcmp(back, "\xf0\x9f\x98\x80") == 0);
	CHECK(json_str_read("\"\\ud83dx\"", back, sizeof(back)) &&
	      strcmp(back, "\xef\xbf\xbdx") == 0);
	/* cut to fit, never inside a character, nothing after a cut */
	CHECK(json_str_read("\"ab\\u20acc\"", back, 5) && strcmp(back, "ab") == 0);
	CHECK(json_str_read("\"abcdef\"", back, 4) && strcmp(back, "abc") == 0);
	/* not a literal */
	CHECK(json_str_read("abc", back, sizeof(back)) == NULL);
	CHECK(json_str_read("\"abc", back, sizeof(back)) == NULL);
	CHECK(json_str_read("\"a\\qb\"", back, sizeof(back)) == NULL);
	CHECK(json_str_read("\"\\u12G4\"", back, sizeof(back)) == NULL);
	return failures ? 1 : 0;
}
