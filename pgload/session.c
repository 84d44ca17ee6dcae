/*
 * session.c -- the session layer of pgload: connections to the server,
 * reporting what went wrong on them, and sending COPY data.
 *
 * What must stay true: a connection attempt never waits blindly (an
 * interrupt ends it, connect_timeout bounds it); every connection is
 * registered for cancellation from the moment it exists until it is closed;
 * an error names the file, the line of the statement (and where the server
 * found the problem inside it: a character position, a COPY line, a byte
 * that is not UTF-8), the server's message, detail, hint and context.
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgload_i.h"

/* ---- connections -------------------------------------------------------- */

static void notice_quiet(void *arg, const PGresult *res)
{
	(void)arg;
	(void)res;
}

static void notice_print(void *arg, const PGresult *res)
{
	(void)arg;
	const char *sev = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
	/* NOTICEs are chatter in a replay; warnings are worth seeing */
	if (sev && strcmp(sev, "WARNING") == 0)
		fprintf(stderr, "pgload: server %s", PQresultErrorMessage(res));
}

PGconn *pgl_connect(const struct pgl_target *target, const char *dbname, const char *user,
		    bool quiet, bool warnings)
{
	const char *kw[9], *val[9];
	int n = 0;
	/*
	 * Only the first dbname may be a connection string (expand_dbname): the
	 * target's, or an empty one, so that DBNAME is never read as one.
	 * Later keywords override earlier ones; NULL or empty values are
	 * skipped, and libpq fills those from the environment.
	 */
	kw[n] = "dbname";
	val[n++] = target->conninfo ? target->conninfo : "";
	kw[n] = "host";
	val[n++] = target->host;
	kw[n] = "port";
	val[n++] = target->port;
	kw[n] = "user";
	val[n++] = target->user;
	kw[n] = "dbname";
	val[n++] = dbname;
	kw[n] = "user";
	val[n++] = user;
	kw[n] = "fallback_application_name";
	val[n++] = "pgload";
	kw[n] = NULL;
	val[n] = NULL;
	PGconn *conn = PQconnectStartParams(kw, val, 1);
	if (!conn) {
		fprintf(stderr, "pgload: out of memory connecting to the server\n");
		return NULL;
	}
	/*
	 * PQconnectdb() without its blind wait: an interrupt ends the attempt.
	 * connect_timeout (libpq: at least 2 s) bounds the whole attempt here,
	 * not each host's.
	 */
	int timeout_ms = -1;
	PQconninfoOption *ci = PQconninfo(conn);
	for (PQconninfoOption *op = ci; op && op->keyword; op++)
		if (strcmp(op->keyword, "connect_timeout") == 0 && op->val && atoi(op->val) > 0)
			timeout_ms = (atoi(op->val) < 2 ? 2 : atoi(op->val)) * 1000;
	PQconninfoFree(ci);
	double t0 = pgl_now();
	PostgresPollingStatusType ps = PGRES_POLLING_WRITING;
	while (PQstatus(conn) != CONNECTION_BAD && ps != PGRES_POLLING_OK &&
	       ps != PGRES_POLLING_FAILED) {
		int left = -1, w = 0;
		if (timeout_ms >= 0) {
			left = timeout_ms - (int)((pgl_now() - t0) * 1000);
			left = left < 0 ? 0 : left;
		}
		if (left != 0)
			w = pgl_wait_fd(PQsocket(conn),
					ps == PGRES_POLLING_READING ? POLLIN : POLLOUT, left);
		if (w == -EINTR) {
			PQfinish(conn);
			return NULL;
		}
		if (w == 0) {
			if (!quiet)
				fprintf(stderr,
					"pgload: could not connect to database \"%s\": timeout "
					"expired (connect_timeout)\n",
					dbname ? dbname : "(default)");
			PQfinish(conn);
			return NULL;
		}
		ps = PQconnectPoll(conn);
	}
	if (PQstatus(conn) != CONNECTION_OK) {
		if (!quiet)
			fprintf(stderr, "pgload: could not connect to database \"%s\": %s",
				dbname ? dbname : "(default)", PQerrorMessage(conn));
		PQfinish(conn);
		return NULL;
	}
	PQsetNoticeReceiver(conn, warnings ? notice_print : notice_quiet, NULL);
	pgl_cancel_register(conn);
	return conn;
}

bool pgl_is_conninfo(const char *s)
{
	return strchr(s, '=') || strncmp(s, "postgres://", 11) == 0 ||
	       strncmp(s, "postgresql://", 13) == 0;
}

int pgl_conninfo_get(const char *conninfo, const char *keyword, char **out)
{
	PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
	*out = NULL;
	if (!opts)
		return -EINVAL;
	for (PQconninfoOption *op = opts; op->keyword; op++)
		if (strcmp(op->keyword, keyword) == 0 && op->val && *op->val)
			*out = strdup(op->val);
	PQconninfoFree(opts);
	return 0;
}

void pgl_disconnect(PGconn *conn)
{
	if (!conn)
		return;
	pgl_cancel_unregister(conn);
	PQfinish(conn);
}

int pgl_admin_exec(PGconn *admin, const char *sql, char *out, size_t cap)
{
	PGresult *res = PQexec(admin, sql);
	int st = PQresultStatus(res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && atomic_load(&pgl_interrupted)) {
		PQclear(res);
		return -EINTR;
	}
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		if (PQstatus(admin) == CONNECTION_BAD)
			fprintf(stderr, "pgload: lost connection to the server: %s",
				PQerrorMessage(admin));
		else
			fprintf(stderr, "pgload: %s failed: %s", sql, PQresultErrorMessage(res));
		PQclear(res);
		return PQstatus(admin) == CONNECTION_BAD ? -ECONNRESET : -EIO;
	}
	if (out && cap) {
		out[0] = '\0';
		if (st == PGRES_TUPLES_OK && PQntuples(res) > 0 && !PQgetisnull(res, 0, 0))
			snprintf(out, cap, "%s", PQgetvalue(res, 0, 0));
	}
	PQclear(res);
	return 0;
}

/* ---- error reporting ---------------------------------------------------- */

void pgl_first_line(const char *text, char *buf, size_t cap)
{
	const char *s = pgl_sql_skip(text);
	size_t n = strcspn(s, "\n");
	if (n >= cap - 4 && cap > 8) {
		snprintf(buf, cap, "%.*s...", (int)(cap - 4), s);
		return;
	}
	snprintf(buf, cap, "%.*s", (int)n, s);
}

/*
 * error_line() -- the input line of a character position in a statement; a
 * position at the end of the text ("syntax error at end of input") is on
 * the line of its last visible character.
 */
static unsigned long error_line(const char *text, unsigned long line0, long pos)
{
	unsigned long line = line0, visible = line0;
	long chars = 0;
	const unsigned char *s;
	for (s = (const unsigned char *)text; *s && chars < pos - 1; s++) {
		if ((*s & 0xC0) != 0x80)
			chars++;
		if (*s == '\n')
			line++;
		else if (!isspace(*s))
			visible = line;
	}
	return *s ? line : visible;
}

/*
 * bad_utf8_line() -- the line of the first byte of TEXT (which starts on
 * LINE0) that is not well-formed UTF-8, or 0 if it all is.
 */
static unsigned long bad_utf8_line(const char *text, unsigned long line0)
{
	const unsigned char *s = (const unsigned char *)text;
	unsigned long line = line0;
	while (*s) {
		unsigned char c = *s;
		size_t n = c < 0x80		    ? 1
			   : c >= 0xC2 && c <= 0xDF ? 2
			   : c >= 0xE0 && c <= 0xEF ? 3
			   : c >= 0xF0 && c <= 0xF4 ? 4
						    : 0;
		if (n == 0)
			return line;
		for (size_t i = 1; i < n; i++)
			if ((s[i] & 0xC0) != 0x80)
				return line;
		/* overlong forms, surrogates, beyond U+10FFFF */
		if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) ||
		    (c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F))
			return line;
		line += c == '\n';
		s += n;
	}
	return 0;
}

void pgl_report_error(const char *fname, const char *text, unsigned long line,
		      unsigned long copy_line0, const PGresult *res, const char *connmsg)
{
	char first[128];
	const char *sev = res ? PQresultErrorField(res, PG_DIAG_SEVERITY) : NULL;
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *hint = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_HINT) : NULL;
	const char *context = res ? PQresultErrorField(res, PG_DIAG_CONTEXT) : NULL;
	const char *pos = res ? PQresultErrorField(res, PG_DIAG_STATEMENT_POSITION) : NULL;
	unsigned long eline = line;

	if (pos && text)
		eline = error_line(text, line, atol(pos));
	if (context && copy_line0 && strncmp(context, "COPY ", 5) == 0) {
		const char *l = strstr(context, ", line ");
		if (l)
			eline = copy_line0 + strtoul(l + 7, NULL, 10) - 1;
	} else if (!pos && text && msg && strstr(msg, "for encoding \"UTF8\"")) {
		/* the server checks a statement's encoding whole: find the byte */
		unsigned long l = bad_utf8_line(text, line);
		if (l)
			eline = l;
	}
	if (msg) {
		fprintf(stderr, "pgload: %s:%lu: %s:  %s\n", fname, eline, sev ? sev : "ERROR",
			msg);
	} else {
		const char *m = connmsg ? connmsg
				: res	? PQresultErrorMessage(res)
					: "unknown error";
		fprintf(stderr, "pgload: %s:%lu: %.*s\n", fname, eline, (int)strcspn(m, "\n"), m);
	}
	if (text) {
		pgl_first_line(text, first, sizeof(first));
		fprintf(stderr, "  statement (line %lu): %s\n", line, first);
	}
	if (detail)
		fprintf(stderr, "  DETAIL:  %s\n", detail);
	if (hint)
		fprintf(stderr, "  HINT:  %s\n", hint);
	if (context)
		fprintf(stderr, "  CONTEXT:  %.*s\n", (int)strcspn(context, "\n"), context);
}

void pgl_lost_connection(struct pgl_server *server, const char *fname, unsigned long line,
			 PGconn *conn)
{
	const char *m = conn ? PQerrorMessage(conn) : "";
	fprintf(stderr, "pgload: %s:%lu: lost connection to the server: %.*s\n", fname, line,
		(int)strcspn(m, "\n"), m);
	if (server) {
		/* give a dying postmaster a moment to be reaped */
		for (int i = 0; i < 50 && pgl_server_alive(server); i++)
			usleep(10000);
		char how[160];
		pgl_server_describe_exit(server, how, sizeof(how));
		fprintf(stderr, "pgload: %s\n", how);
		pgl_server_log_tail(server, 8);
	}
}

void pgl_report_copy_cancelled(const char *text, unsigned long line, bool chunked)
{
	char first[128];
	pgl_first_line(text, first, sizeof(first));
	fprintf(stderr, "  statement (line %lu): %s\n", line, first);
	if (chunked)
		fprintf(stderr, "  the rest of the block is not loaded; its earlier --chunk-mb "
				"chunks are\n");
	else
		fprintf(stderr, "  the COPY is cancelled: none of its rows are loaded\n");
}

/* ---- COPY data ---------------------------------------------------------- */

int pgl_put_copy(PGconn *conn, const char *buf, size_t len)
{
	while (len > 0) {
		size_t n = len > PGL_COPY_MSG ? PGL_COPY_MSG : len;
		if (PQputCopyData(conn, buf, (int)n) != 1)
			return -1;
		buf += n;
		len -= n;
	}
	return 1;
}

uint64_t pgl_count_lines(const char *buf, size_t len)
{
	uint64_t n = 0;
	const char *end = buf + len;
	while ((buf = memchr(buf, '\n', (size_t)(end - buf)))) {
		n++;
		buf++;
	}
	return n;
}
