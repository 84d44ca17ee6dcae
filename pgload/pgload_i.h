/*
 * pgload_i.h -- the lower layers of pgload, shared by its files (not
 * installed; nothing outside pgload/ and its tests includes it).  Bottom
 * up: interrupts and steps (intr.c) and helpers (util.c); SQL lexical
 * helpers (sqllex.c); `pgiofs stat` (iostat.c); the embedded server
 * (server.c); the results of a run (results.c); the session layer:
 * connections, errors, COPY (session.c).  The input and the parser (in
 * the server's layer) are in pgload.h, the run engine above in run_i.h;
 * docs/architecture.md draws the whole map.
 *
 * Errors, in all of pgload: a function returns >= 0 on success and -errno
 * on failure, after saying why on stderr (or in an error buffer it takes).
 * Two errors abort a run (exit status 2, pgl_aborts()): -EINTR, pgload was
 * interrupted, and -ECONNRESET, the server went away.  Any other error ends
 * it with exit status 1: -EIO for a statement or server command that
 * failed, -ECONNREFUSED for a connection that could not be made, -EINVAL,
 * -EBADMSG, -E2BIG for bad input (the parser's codes), and so on.  A
 * statement that failed while its script goes on (--continue-on-error, or
 * ON_ERROR_STOP off) is counted in its phase's errors and returns
 * PGL_WENT_ON, a success.
 */
#ifndef PGLOAD_I_H
#define PGLOAD_I_H

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>

#include <libpq-fe.h>

/* A statement failed, was counted, and its script goes on (see above). */
#define PGL_WENT_ON 1

/* pgl_aborts() -- RET ends the run with exit status 2 (see above). */
static inline bool pgl_aborts(int ret)
{
	return ret == -EINTR || ret == -ECONNRESET;
}

/* ---- interrupts and steps (intr.c) --------------------------------------- */

/* Set once SIGINT, SIGTERM or SIGHUP arrives; the run then aborts (exit 2). */
extern atomic_int pgl_interrupted;

/* pgl_exit_status() -- the exit status of a command that ended with RET. */
static inline int pgl_exit_status(int ret)
{
	if (ret >= 0)
		return 0;
	return pgl_aborts(ret) || atomic_load(&pgl_interrupted) ? 2 : 1;
}

/*
 * pgl_signals_start() -- block the termination signals in every thread and
 * start a thread that waits for them.  The first one sets pgl_interrupted,
 * names the step pgload was in, makes pgl_interrupt_fd() readable, cancels
 * the queries of every registered connection (again every second until the
 * clean-up starts, so that a query sent just after the signal is cancelled
 * too) and terminates the registered child process.  A later one only says
 * that the clean-up is under way: it is never cut short.  Call before
 * creating any other thread.  Returns 0 or -errno.
 */
int pgl_signals_start(void);

/*
 * pgl_interrupt_fd() -- a descriptor that becomes readable, and stays so,
 * once a termination signal arrived; -1 before pgl_signals_start().
 */
int pgl_interrupt_fd(void);

/*
 * pgl_wait_fd() -- wait until FD has one of EVENTS (POLLIN, POLLOUT), or an
 * interrupt arrived, or TIMEOUT_MS passed (-1: no limit).  Returns 1 when FD
 * is ready, 0 on timeout, -EINTR once interrupted, or -errno.
 */
int pgl_wait_fd(int fd, short events, int timeout_ms);

/*
 * pgl_step() -- what pgload does from now on: ID is a short name ("initdb",
 * "createdb", "data", "cleanup", ...), the rest a verb phrase for messages
 * ("running the data phase of data.sql", as in "Interrupt received while
 * running ...").  A signal names the step it arrived in.  The step
 * "cleanup" ends the cancelling: the clean-up is never interrupted.
 * For tests, PGLOAD_TEST_INTERRUPT_AT=ID[,ID...] (ID or ID#N, the N-th time
 * the step starts) makes pgload send itself SIGINT as the step starts and
 * wait until the signal is handled.  Returns true if pgload was interrupted
 * (the caller stops before doing the step).
 */
bool pgl_step(const char *id, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * pgl_step_context() -- text added after a comma to every step's description
 * until the next call ("run 2/3", "round 1, cell 3 ext4/dbaware"); NULL
 * clears it.
 */
void pgl_step_context(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* pgl_interrupted_step() -- the step the first signal arrived in, into BUF. */
void pgl_interrupted_step(char *buf, size_t cap);

/*
 * pgl_child_signals() -- in a forked child before exec: no signal blocked,
 * the termination signals, SIGQUIT and SIGPIPE at their defaults (pgload may
 * have inherited them ignored, as a background job of a script does, and
 * stops its children with them).
 */
void pgl_child_signals(void);

/* pgl_cancel_register() -- make CONN's query cancellable by a signal. */
void pgl_cancel_register(PGconn *conn);

/* pgl_cancel_unregister() -- forget CONN (call before PQfinish). */
void pgl_cancel_unregister(PGconn *conn);

/* pgl_child_register() -- a child to kill on interrupt (0 to forget). */
void pgl_child_register(pid_t pid);

/* ---- helpers (util.c) ---------------------------------------------------- */

/* pgl_print_version() -- "pgload VERSION (libpq VERSION)" on stdout, for --version. */
void pgl_print_version(void);

/* pgl_now() -- CLOCK_MONOTONIC in seconds. */
double pgl_now(void);

/* pgl_seconds() -- T (a CPU time of getrusage()) in seconds. */
double pgl_seconds(struct timeval t);

/* pgl_rmtree() -- remove PATH recursively (no error if absent). */
int pgl_rmtree(const char *path);

/* pgl_tmpdir() -- where pgload makes its temporary directories: $TMPDIR
 * if set and not empty, else /tmp.  0 with the directory in *@out, or
 * -errno after a message naming TMPDIR and the reason (not absolute, longer
 * than PGL_TMPDIR_MAX, which keeps a server socket below it within the
 * 107 bytes of a Unix socket path, or not a directory). */
#define PGL_TMPDIR_MAX 64
int pgl_tmpdir(const char **out);

/* pgl_fstype() -- file system type name of PATH ("ext4", "fuse", ...). */
const char *pgl_fstype(const char *path);

/* pgl_fmt_time() -- the `time` format: "1m0.467s". */
void pgl_fmt_time(char *buf, size_t cap, double secs);

/*
 * pgl_which() -- the executable PROG on PATH (then /sbin, /usr/sbin) into
 * OUT.  Returns 0, or -ENOENT.
 */
int pgl_which(const char *prog, char *out, size_t cap);

/*
 * pgl_find_sibling() -- the program PROG of this tree: GIVEN (which must be
 * executable) if not NULL, else PROG beside this program's binary, else on
 * PATH; into OUT.  Returns 0 or -errno.
 */
int pgl_find_sibling(const char *prog, const char *given, char *out, size_t cap);

/* A program to run to completion (pgl_proc_run()). */
struct pgl_proc {
	char *const *argv; /* argv[0] is looked up with pgl_which() unless it has a '/' */
	char *out;	   /* its stdout (and stderr, unless err), NUL-terminated, or NULL */
	size_t outcap;
	char *err; /* its stderr apart, NUL-terminated (cut to fit), or NULL */
	size_t errcap;
	int timeout_ms;	    /* killed after this long (-ETIMEDOUT); -1: no limit */
	bool interruptible; /* killed by an interrupt (pgl_child_register()) */
	/* results */
	size_t outlen; /* bytes in out */
	bool cut;      /* it wrote more than out holds (the rest was dropped) */
	int signal;    /* the signal that killed it, or 0 */
};

/*
 * pgl_proc_run() -- run P->argv with stdin from /dev/null, wait for it and
 * collect its output.  Returns its exit status (127: it could not be
 * started), 128 + the signal that killed it, or -errno (-ETIMEDOUT).
 */
int pgl_proc_run(struct pgl_proc *p);

/*
 * pgl_run_cmd() -- run ARGV, killed by an interrupt, its stdout and stderr
 * into OUT (CAP bytes, NUL-terminated; NULL: dropped).  Returns as
 * pgl_proc_run().
 */
int pgl_run_cmd(char *const argv[], char *out, size_t cap);

/*
 * pgl_run_ok() -- pgl_run_cmd(); if it fails, say "pgload: WHAT: `ARGV`
 * failed" and its output.  Returns 0, -EINTR (interrupted) or -EIO.
 */
int pgl_run_ok(const char *what, char *const argv[], char *out, size_t cap);

/* ---- SQL lexical helpers (sqllex.c) ------------------------------------- */

/* pgl_sql_ident_start(), pgl_sql_ident_cont() -- C may begin, continue a bare word. */
static inline bool pgl_sql_ident_start(int c)
{
	return isalpha(c) || c == '_' || c >= 0x80;
}

static inline bool pgl_sql_ident_cont(int c)
{
	return pgl_sql_ident_start(c) || isdigit(c) || c == '$';
}

/* pgl_sql_skip() -- S past whitespace and comments (-- and nested slash-star). */
const char *pgl_sql_skip(const char *s);

/* A token of a statement: a bare word, a quoted identifier or one other character. */
struct pgl_sql_tok {
	const char *start; /* in the statement text */
	size_t len;
	char word[32]; /* a bare word, lowercased (cut to fit); "" otherwise */
	bool ident;    /* an identifier, bare or quoted */
};

/*
 * pgl_sql_token() -- the token at *SP, past whitespace and comments; *SP
 * moves past it.  false at the end of the text.
 */
bool pgl_sql_token(const char **sp, struct pgl_sql_tok *t);

/*
 * pgl_sql_raw_name() -- the dotted chain of identifiers at *SP copied as
 * written into BUF (public."T"), for the server to resolve; *SP moves past
 * it.  false if there is none or it does not fit.
 */
bool pgl_sql_raw_name(const char **sp, char *buf, size_t cap);

/*
 * pgl_sql_name() -- the same chain as the server names it: quotes removed,
 * bare words lowercased (public.T), into BUF (cut to fit); *SP moves past
 * it.  Returns its length, or -EINVAL if there is no identifier.
 */
int pgl_sql_name(const char **sp, char *buf, size_t cap);

/* ---- per-class I/O from `pgiofs stat` (iostat.c) ------------------------ */

/* The classes of schema pgiofs.stats/1, in its order, and the counters used. */
enum { PGL_IO_NCLASS = 9 };
enum {
	PGL_IO_READ_OPS,
	PGL_IO_READ_BYTES,
	PGL_IO_WRITE_OPS,
	PGL_IO_WRITE_BYTES,
	PGL_IO_SYNC_OPS,
	PGL_IO_NFIELD
};
extern const char *const pgl_io_class_names[PGL_IO_NCLASS];
extern const char *const pgl_io_field_names[PGL_IO_NFIELD];

/* Latency figures of a class ("latency_ms"), read when present. */
enum { PGL_LAT_AVG, PGL_LAT_P99, PGL_LAT_MAX, PGL_LAT_OVER_2S, PGL_LAT_OVER_10S, PGL_LAT_N };
extern const char *const pgl_lat_field_names[PGL_LAT_N];

/* How much of a class's reads and writes pgiofs sees ("bytes_seen"): files
 * opened in FUSE passthrough are read and written past it. */
enum pgl_io_seen { PGL_SEEN_ALL, PGL_SEEN_PARTIAL, PGL_SEEN_NONE };
extern const char *const pgl_io_seen_names[3];

struct pgl_io {
	uint64_t v[PGL_IO_NCLASS][PGL_IO_NFIELD];
	unsigned char seen[PGL_IO_NCLASS]; /* enum pgl_io_seen; all if not given */
	bool has_lat; /* every class had all of lat[k][] (ms, and % for over_*) */
	double lat[PGL_IO_NCLASS][PGL_LAT_N];
	/* the WAL segments the daemon made ahead of PostgreSQL since the mount
	 * ("wal_segments_ahead": made, of them reserved while WAL was quiet);
	 * has_walprep false when the daemon does not say */
	bool has_walprep;
	uint64_t wal_made, wal_reserved;
};

/*
 * pgl_io_parse() -- read the counters out of one `pgiofs stat --json` object
 * (LEN bytes, not NUL-terminated).  Strict: malformed JSON, another schema,
 * a missing class or counter, a fraction or negative number where a counter
 * is expected all give -EBADMSG with the reason in ERR.  The latency figures
 * (avg, p99, max, over_2s_pct, over_10s_pct of "latency_ms") are optional:
 * has_lat says whether every class had them all.  "bytes_seen" is optional
 * too (all when absent), and so are the segments made ahead
 * ("wal_segments_ahead": has_walprep).  Never reads past
 * BUF + LEN; nesting is limited.
 */
int pgl_io_parse(const char *buf, size_t len, struct pgl_io *out, char *err, size_t errcap);

/* pgl_io_delta() -- AFTER - BEFORE into D, with AFTER's bytes_seen (and
 * the segments made ahead if both have them); -ERANGE if a counter went
 * down. */
int pgl_io_delta(const struct pgl_io *before, const struct pgl_io *after, struct pgl_io *d);

/*
 * pgl_io_find_mount() -- if PATH is on a pgiofs mount (type fuse.pgiofs in
 * MOUNTINFO, NULL for /proc/self/mountinfo), its mount point into MNT and 1;
 * 0 if it is on another file system; -errno on error.
 */
int pgl_io_find_mount(const char *path, const char *mountinfo, char *mnt, size_t cap);

/*
 * pgl_io_sample() -- run `BIN stat MNT --json` (10 s limit) and parse it.
 * Returns 0, or -errno with the reason in ERR.
 */
int pgl_io_sample(const char *bin, const char *mnt, struct pgl_io *out, char *err, size_t errcap);

/* ---- the embedded server (server.c) -------------------------------------- */

struct pgl_server;

struct pgl_server_opts {
	const char *pgbin;  /* directory of initdb and postgres, or NULL */
	const char *pgdata; /* cluster directory (must be absent or empty), or NULL */
	bool quiet;
	const char *const *settings; /* "name=value" server settings, NULL-terminated */
	bool on_pgiofs;		     /* put the cluster on a pgiofs mount */
	const char *profile;	     /* pgiofs configuration: NAME (config/NAME.conf) or a file */
	const char *pgiofs_bin;	     /* the pgiofs binary, or NULL: beside pgload, or PATH */
	const char *const *pgiofs_args; /* more pgiofs options, NULL-terminated, or NULL */
	const char *backing;		/* pgiofs backing directory, or NULL: in the private one */
	const char *tmp_parent;		/* where the private directory goes, or NULL: /tmp */
	const char *waldir; /* pg_wal elsewhere (initdb --waldir): absent or empty; removed at
			     * pgl_server_stop(); NULL: in the cluster directory */
	int port;	    /* port number of the socket, or 0: from the pid */
};

#define PGL_MAX_PGIOFS_ARGS 16

/*
 * pgl_server_start() -- initdb a private cluster and start a postmaster on a
 * private Unix socket (no TCP).  As root the server runs as "postgres".
 * Returns 0 and sets *out, or -errno after printing why on stderr; nothing is
 * left behind on failure.
 */
int pgl_server_start(const struct pgl_server_opts *o, struct pgl_server **out);

/*
 * pgl_server_check_settings() -- whether the server of --pgbin PGBIN (or
 * the one found as pgl_server_start() finds it) knows the name of each
 * "name=value" of SETTINGS (NULL-terminated), from `postgres
 * --describe-config`; a name with a dot (an extension's) is taken as it
 * is.  Returns 0, or -errno after saying which one, with WHO ("pgload
 * compare: --pg-set") first.  The values are the server's to check, when
 * it starts.
 */
int pgl_server_check_settings(const char *pgbin, const char *const *settings, const char *who);

/* pgl_server_conninfo() -- "host=... port=... user=..." for libpq. */
const char *pgl_server_conninfo(const struct pgl_server *s);

/* pgl_server_datadir() -- the cluster directory. */
const char *pgl_server_datadir(const struct pgl_server *s);

/* pgl_server_mount() -- the pgiofs mount point (--on-pgiofs), or NULL. */
const char *pgl_server_mount(const struct pgl_server *s);

/* pgl_server_alive() -- false once the postmaster has exited. */
bool pgl_server_alive(struct pgl_server *s);

/* pgl_server_describe_exit() -- how the postmaster ended, into BUF. */
void pgl_server_describe_exit(struct pgl_server *s, char *buf, size_t cap);

/* pgl_server_log() -- the server log's path (the server's stderr). */
const char *pgl_server_log(const struct pgl_server *s);

/* pgl_server_log_tail() -- print the last lines of the server log on stderr. */
void pgl_server_log_tail(const struct pgl_server *s, int lines);

/*
 * pgl_server_stop() -- stop the postmaster and remove the cluster, socket
 * and temporary directories.  Accepts NULL.  Returns 0 or -errno.
 */
int pgl_server_stop(struct pgl_server *s);

/* ---- results of a run (results.c) ---------------------------------------- */

enum pgl_phase { PGL_PH_SCHEMA, PGL_PH_DATA, PGL_PH_POST, PGL_NPHASE };

extern const char *const pgl_phase_names[PGL_NPHASE];

/* Rows and bytes loaded into one table during one phase. */
struct pgl_table_stat {
	struct pgl_table_stat *next;  /* hash chain */
	struct pgl_table_stat *order; /* in order of first appearance */
	char *name;
	uint64_t rows, bytes;
};

struct pgl_tables {
	struct pgl_table_stat **hash;
	size_t nbuckets, count;
	struct pgl_table_stat *first, *last;
};

/* pgl_tables_add() -- add ROWS and BYTES to table NAME. */
int pgl_tables_add(struct pgl_tables *t, const char *name, uint64_t rows, uint64_t bytes);

/* pgl_tables_merge() -- add every table of SRC to DST. */
int pgl_tables_merge(struct pgl_tables *dst, const struct pgl_tables *src);

/* pgl_tables_free() -- free the entries (T itself is not freed). */
void pgl_tables_free(struct pgl_tables *t);

struct pgl_phase_result {
	bool present;
	double real, user, sys; /* seconds */
	uint64_t rows, bytes;	/* COPY and INSERT rows, COPY bytes */
	uint64_t wal;		/* WAL bytes generated */
	uint64_t statements, errors;
	struct pgl_tables tables;
	bool has_io;	  /* io holds the phase's per-class I/O */
	struct pgl_io io; /* from `pgiofs stat`: after minus before */
};

struct pgl_run_result {
	bool warmup;
	struct pgl_phase_result ph[PGL_NPHASE];
};

/* ---- the session layer: connections, errors, COPY (session.c) ------------ */

/*
 * Where the connections of a run go, as libpq keywords: CONNINFO (a
 * connection string, a URI or a plain database name: psql's -d, or --dsn),
 * then HOST, PORT and USER (-h, -p, -U) over it; NULL members are left to
 * libpq, which fills them from the PG* environment variables, the service
 * file and ~/.pgpass.
 */
struct pgl_target {
	const char *conninfo, *host, *port, *user;
};

/*
 * pgl_connect() -- connect to TARGET, with DBNAME and USER over it if not
 * NULL.  An interrupt ends the attempt, connect_timeout bounds it.  The
 * server's warnings go to stderr if WARNINGS (notices never do); unless
 * QUIET, a failure says why.  The connection is registered for
 * cancellation (pgl_cancel_register()).  Returns it, or NULL.
 */
PGconn *pgl_connect(const struct pgl_target *target, const char *dbname, const char *user,
		    bool quiet, bool warnings);

/*
 * pgl_is_conninfo() -- S is a connection string or URI rather than a plain
 * database name (libpq's rule for a dbname it expands).
 */
bool pgl_is_conninfo(const char *s);

/*
 * pgl_conninfo_get() -- the value of KEYWORD in connection string or URI
 * CONNINFO (a copy to free, NULL if absent or empty).  Returns 0, or
 * -EINVAL if CONNINFO does not parse.
 */
int pgl_conninfo_get(const char *conninfo, const char *keyword, char **out);

/* pgl_disconnect() -- unregister and close CONN; accepts NULL. */
void pgl_disconnect(PGconn *conn);

/*
 * pgl_admin_exec() -- run SQL on ADMIN, the first value of its result into
 * OUT (CAP bytes; "" if none), if OUT.  A failure is said on stderr, but not
 * the cancellation of an interrupt.  Returns 0, -EINTR, -ECONNRESET (the
 * connection is lost) or -EIO.
 */
int pgl_admin_exec(PGconn *admin, const char *sql, char *out, size_t cap);

/* pgl_first_line() -- the first line of statement TEXT, past comments, shortened. */
void pgl_first_line(const char *text, char *buf, size_t cap);

/*
 * pgl_report_error() -- say on stderr that statement TEXT of FNAME, which
 * begins on LINE, failed: "FNAME:LINE: ERROR:  message" (the line where the
 * server found the error: its position in TEXT, the COPY line counted from
 * COPY_LINE0, or the first byte that is not UTF-8), the statement's first
 * line, DETAIL, HINT and CONTEXT of RES; CONNMSG when there is no RES.
 */
void pgl_report_error(const char *fname, const char *text, unsigned long line,
		      unsigned long copy_line0, const PGresult *res, const char *connmsg);

/*
 * pgl_lost_connection() -- say that CONN died at FNAME:LINE and, for an
 * embedded SERVER (NULL with --dsn), how the server ended and its log's tail.
 */
void pgl_lost_connection(struct pgl_server *server, const char *fname, unsigned long line,
			 PGconn *conn);

/*
 * pgl_report_copy_cancelled() -- after an input error inside the data of
 * COPY statement TEXT: which COPY, and that it is cancelled (CHUNKED: the
 * block was loaded in --chunk-mb chunks, the earlier ones are in).
 */
void pgl_report_copy_cancelled(const char *text, unsigned long line, bool chunked);

/*
 * pgl_put_copy() -- send LEN bytes of COPY data as CopyData messages of at
 * most PGL_COPY_MSG bytes: large enough to keep per-message costs out of
 * the way, small enough that the server starts parsing while the rest of a
 * parser span is still on its way.  Returns 1, or -1 (see PQerrorMessage).
 */
#define PGL_COPY_MSG (128 * 1024)
int pgl_put_copy(PGconn *conn, const char *buf, size_t len);

/* pgl_count_lines() -- newlines in BUF (rows, for the progress line). */
uint64_t pgl_count_lines(const char *buf, size_t len);

#endif /* PGLOAD_I_H */
