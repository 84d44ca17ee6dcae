/*
 * json.h -- the one JSON string writer of the project, and its reader
 * (shared by all modules).
 *
 * pgiofs, iosched and pgload write JSON of fixed schemas with printf; only
 * strings need care.  A string is written as a quoted literal: '"' and '\'
 * are escaped, \b \f \n \r \t take their short forms, other bytes below 0x20
 * become \u00XX, and every other byte is copied as it is.
 *
 * Why not jansson's encoder, which pgload uses to read JSON: it refuses a
 * string that is not valid UTF-8, and the strings written here are file
 * names, mount points and labels, which are bytes.  Copying the bytes keeps
 * a UTF-8 name readable and never loses a non-UTF-8 one.
 */
#ifndef PGIOFS_JSON_H
#define PGIOFS_JSON_H

#include <stddef.h>
#include <stdio.h>

/*
 * json_str_format() -- S (NULL: "") as a JSON string literal into OUT, which
 * holds CAP bytes, NUL-terminated when CAP > 0.  Returns the length of the
 * whole literal, as snprintf() does: a result >= CAP means it was cut.  A
 * cut literal is still well-formed (no escape is split, the closing quote
 * is written when CAP >= 3), so a reply that is cut stays valid JSON.
 */
size_t json_str_format(char *out, size_t cap, const char *s);

/* json_str_write() -- S (NULL: "") as a JSON string literal on F. */
void json_str_write(FILE *f, const char *s);

/*
 * json_str_read() -- the JSON string literal at S (on its opening quote),
 * decoded into OUT (CAP bytes, NUL-terminated, cut to fit): every escape of
 * RFC 8259, \uXXXX (with surrogate pairs) as UTF-8.  Other bytes are
 * copied as they are, as json_str_write() writes them.  Returns the end of
 * the literal (past its closing quote), or NULL if S is not one.
 */
const char *json_str_read(const char *s, char *out, size_t cap);

#endif
