/*
 * test_json.c -- the JSON string writer (common/json.h): escapes, bytes
 * that are not UTF-8, both writers alike, the length of a literal that does
 * not fit and a cut literal that stays well-formed.
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
	return failures ? 1 : 0;
}
