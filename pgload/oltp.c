/*
 * oltp.c -- the foreground of `pgload compare --oltp`: pgbench's clients
 * committing while the import runs, as contest measured how a background
 * load hurts the foreground and bench/mixed.sh measures commit latency
 * under an import.  The method is mixed.sh's: pgbench's tables at scale S
 * in a database of the same cluster, pgbench's TPC-B-like transaction
 * (seven statements, one round trip each, simple protocol), the latency of
 * every transaction, nearest-rank percentiles of those that ended while
 * the import ran, and tps over the import.
 *
 * A client is a thread with its own connection (registered for
 * cancellation: an interrupt ends its statement); it records the end time
 * and latency of every transaction in an array of its own, read by the
 * caller only after the thread has been joined.
 *
 * What must stay true: only transactions that ended inside the window are
 * counted, so the figures are those of the import whatever the clients did
 * before and after it; every client is joined before pgl_oltp_stop()
 * returns.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare_i.h"

#define WARM_TIMEOUT_S 30.0 /* every client has committed once within this */

/* pgbench's tables, generated on the server (pgbench -i -I dtGvp). */
static const char *const init_sql[] = {
    "CREATE TABLE pgbench_branches (bid int NOT NULL, bbalance int, filler char(88)) "
    "WITH (fillfactor = 100)",
    "CREATE TABLE pgbench_tellers (tid int NOT NULL, bid int, tbalance int, filler char(84)) "
    "WITH (fillfactor = 100)",
    "CREATE TABLE pgbench_accounts (aid int NOT NULL, bid int, abalance int, filler char(84)) "
    "WITH (fillfactor = 100)",
    "CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, "
    "filler char(22))",
    "INSERT INTO pgbench_branches (bid, bbalance) SELECT bid, 0 FROM generate_series(1, %d) "
    "AS bid",
    "INSERT INTO pgbench_tellers (tid, bid, tbalance) SELECT tid, (tid - 1) / 10 + 1, 0 "
    "FROM generate_series(1, %d * 10) AS tid",
    "INSERT INTO pgbench_accounts (aid, bid, abalance, filler) SELECT aid, (aid - 1) / 100000 "
    "+ 1, 0, '' FROM generate_series(1, %d * 100000) AS aid",
    "VACUUM ANALYZE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history",
    "ALTER TABLE pgbench_branches ADD PRIMARY KEY (bid)",
    "ALTER TABLE pgbench_tellers ADD PRIMARY KEY (tid)",
    "ALTER TABLE pgbench_accounts ADD PRIMARY KEY (aid)",
};

int pgl_oltp_init(PGconn *admin, const struct pgl_target *base, int scale)
{
	char sql[512];
	int ret;
	if (pgl_step("oltp", "creating the OLTP tables (scale %d)", scale))
		return -EINTR;
	if ((ret = pgl_admin_exec(admin, "CREATE DATABASE " OLTP_DB, NULL, 0)) < 0)
		return ret;
	PGconn *conn = pgl_connect(base, OLTP_DB, NULL, false, true);
	if (!conn)
		return atomic_load(&pgl_interrupted) ? -EINTR : -ECONNREFUSED;
	for (size_t i = 0; i < sizeof(init_sql) / sizeof(init_sql[0]) && ret >= 0; i++) {
		snprintf(sql, sizeof(sql), init_sql[i], scale);
		ret = pgl_admin_exec(conn, sql, NULL, 0);
	}
	pgl_disconnect(conn);
	if (ret >= 0)
		ret = pgl_admin_exec(admin, "CHECKPOINT", NULL, 0);
	return ret < 0 ? ret : 0;
}

/* One transaction's end (pgl_now()) and latency (s). */
struct tx {
	double end, lat;
};

struct client {
	struct oltp *o;
	pthread_t thread;
	bool started;
	PGconn *conn;
	uint64_t rng;
	struct tx *tx;
	size_t n, cap;
	uint64_t errors;
	int lost; /* the connection went away: -ECONNRESET, or -ENOMEM */
};

struct oltp {
	int nclients, scale;
	atomic_bool stop;
	atomic_int warm; /* clients that have committed once */
	struct client *c;
};

/* next() -- splitmix64: the client's own deterministic stream. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* uniform() -- an integer from LO to HI, as pgbench's random(). */
static long uniform(uint64_t *s, long lo, long hi)
{
	return lo + (long)(next(s) % (uint64_t)(hi - lo + 1));
}

/* exec_ok() -- run SQL on CONN; false if it failed (the result is dropped). */
static bool exec_ok(PGconn *conn, const char *sql)
{
	PGresult *r = PQexec(conn, sql);
	ExecStatusType st = PQresultStatus(r);
	PQclear(r);
	return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

/* transaction() -- pgbench's tpcb-like script once; false if a statement failed. */
static bool transaction(struct client *cl)
{
	int s = cl->o->scale;
	long aid = uniform(&cl->rng, 1, 100000L * s), bid = uniform(&cl->rng, 1, s);
	long tid = uniform(&cl->rng, 1, 10L * s), delta = uniform(&cl->rng, -5000, 5000);
	char sql[5][256];
	snprintf(sql[0], sizeof(sql[0]),
		 "UPDATE pgbench_accounts SET abalance = abalance + %ld WHERE aid = %ld", delta,
		 aid);
	snprintf(sql[1], sizeof(sql[1]), "SELECT abalance FROM pgbench_accounts WHERE aid = %ld",
		 aid);
	snprintf(sql[2], sizeof(sql[2]),
		 "UPDATE pgbench_tellers SET tbalance = tbalance + %ld WHERE tid = %ld", delta,
		 tid);
	snprintf(sql[3], sizeof(sql[3]),
		 "UPDATE pgbench_branches SET bbalance = bbalance + %ld WHERE bid = %ld", delta,
		 bid);
	snprintf(sql[4], sizeof(sql[4]),
		 "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (%ld, %ld, %ld, "
		 "%ld, CURRENT_TIMESTAMP)",
		 tid, bid, aid, delta);
	if (!exec_ok(cl->conn, "BEGIN"))
		return false;
	for (int i = 0; i < 5; i++)
		if (!exec_ok(cl->conn, sql[i]))
			return false;
	return exec_ok(cl->conn, "END");
}

static void *client_main(void *arg)
{
	struct client *cl = arg;
	bool warm = false;
	while (!atomic_load(&cl->o->stop) && !atomic_load(&pgl_interrupted)) {
		double t0 = pgl_now();
		bool ok = transaction(cl);
		double t1 = pgl_now();
		if (!ok) {
			if (PQstatus(cl->conn) != CONNECTION_OK) {
				cl->lost = -ECONNRESET;
				break;
			}
			if (atomic_load(&pgl_interrupted))
				break;
			cl->errors++;
			exec_ok(cl->conn, "ROLLBACK");
			continue;
		}
		if (cl->n == cl->cap) {
			size_t cap = cl->cap ? 2 * cl->cap : 4096;
			struct tx *tx = realloc(cl->tx, cap * sizeof(*tx));
			if (!tx) {
				cl->lost = -ENOMEM;
				break;
			}
			cl->tx = tx;
			cl->cap = cap;
		}
		cl->tx[cl->n++] = (struct tx){.end = t1, .lat = t1 - t0};
		if (!warm) {
			warm = true;
			atomic_fetch_add(&cl->o->warm, 1);
		}
	}
	if (!warm) /* let the starter see this client is done */
		atomic_fetch_add(&cl->o->warm, 1);
	return NULL;
}

/* stop_all() -- stop and join the clients, close their connections. */
static void stop_all(struct oltp *o)
{
	atomic_store(&o->stop, true);
	for (int i = 0; i < o->nclients; i++) {
		struct client *cl = &o->c[i];
		if (cl->started)
			pthread_join(cl->thread, NULL);
		cl->started = false;
		pgl_disconnect(cl->conn);
		cl->conn = NULL;
	}
}

static void oltp_free(struct oltp *o)
{
	if (!o)
		return;
	for (int i = 0; i < o->nclients; i++)
		free(o->c[i].tx);
	free(o->c);
	free(o);
}

int pgl_oltp_start(const struct pgl_target *base, int clients, int scale, uint64_t seed,
		   struct oltp **out)
{
	struct oltp *o = calloc(1, sizeof(*o));
	int ret = 0;
	*out = NULL;
	if (!o || !(o->c = calloc((size_t)clients, sizeof(*o->c)))) {
		free(o);
		return -ENOMEM;
	}
	o->nclients = clients;
	o->scale = scale;
	for (int i = 0; i < clients && ret == 0; i++) {
		struct client *cl = &o->c[i];
		cl->o = o;
		cl->rng = seed * 1000003u + (uint64_t)i;
		cl->conn = pgl_connect(base, OLTP_DB, NULL, false, false);
		if (!cl->conn)
			ret = atomic_load(&pgl_interrupted) ? -EINTR : -ECONNREFUSED;
		else if ((ret = -pthread_create(&cl->thread, NULL, client_main, cl)) == 0)
			cl->started = true;
	}
	/* warm: every client has committed once (or given up) */
	for (double t0 = pgl_now(); ret == 0 && atomic_load(&o->warm) < clients;) {
		if (atomic_load(&pgl_interrupted))
			ret = -EINTR;
		else if (pgl_now() - t0 > WARM_TIMEOUT_S)
			ret = -ETIMEDOUT;
		else
			usleep(2000);
	}
	for (int i = 0; i < clients && ret == 0; i++)
		if (o->c[i].lost)
			ret = o->c[i].lost;
	if (ret < 0) {
		if (ret != -EINTR)
			fprintf(stderr, "pgload compare: the OLTP clients did not start: %s\n",
				strerror(-ret));
		stop_all(o);
		oltp_free(o);
		return ret;
	}
	*out = o;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* rank() -- nearest rank P of N sorted values (as bench/mixed.sh). */
static double rank(const double *v, size_t n, double p)
{
	size_t k = (size_t)ceil(p * (double)n - 1e-9);
	k = k < 1 ? 1 : k > n ? n : k;
	return v[k - 1];
}

void pgl_oltp_figures(double *lat, size_t n, double secs, struct oltp_figures *f)
{
	uint64_t errors = f->errors;
	memset(f, 0, sizeof(*f));
	f->errors = errors;
	f->tx = n;
	f->secs = secs;
	f->tps = secs > 0 ? (double)n / secs : 0;
	if (!n)
		return;
	qsort(lat, n, sizeof(*lat), cmp_double);
	f->p50 = rank(lat, n, 0.50);
	f->p99 = rank(lat, n, 0.99);
	f->p999 = rank(lat, n, 0.999);
	f->max = lat[n - 1];
}

/* pool_add() -- latency V (ms) into POOL. */
static int pool_add(struct lat_pool *pool, double v)
{
	if (pool->n == pool->cap) {
		size_t cap = pool->cap ? 2 * pool->cap : 4096;
		double *x = realloc(pool->v, cap * sizeof(*x));
		if (!x)
			return -ENOMEM;
		pool->v = x;
		pool->cap = cap;
	}
	pool->v[pool->n++] = v;
	return 0;
}

/*
 * seconds() -- the commits of each second from T0 to T1 into TL->sec: how
 * many ended in it, their p99 (nearest rank) and max; LAT[i] (ms, in the
 * pool's order) ended at END[i].
 */
static int seconds(const double *end, const double *lat, size_t n, double t0, double t1,
		   struct timeline *tl)
{
	int nsec = (int)ceil(t1 - t0 - 1e-9);
	nsec = nsec < 1 ? 1 : nsec;
	size_t *at = calloc((size_t)nsec + 1, sizeof(*at));
	double *v = malloc((n ? n : 1) * sizeof(*v));
	tl->sec = calloc((size_t)nsec, sizeof(*tl->sec));
	if (!at || !v || !tl->sec) {
		free(at);
		free(v);
		free(tl->sec);
		tl->sec = NULL;
		return -ENOMEM;
	}
	tl->nsec = nsec;
	/* counting sort by second, then each second's latencies sorted */
	for (size_t i = 0; i < n; i++) {
		int k = (int)(end[i] - t0);
		at[(k < 0 ? 0 : k >= nsec ? nsec - 1 : k) + 1]++;
	}
	for (int k = 0; k < nsec; k++)
		at[k + 1] += at[k];
	size_t *fill = calloc((size_t)nsec, sizeof(*fill));
	if (!fill) {
		free(at);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int k = (int)(end[i] - t0);
		k = k < 0 ? 0 : k >= nsec ? nsec - 1 : k;
		v[at[k] + fill[k]++] = lat[i];
	}
	for (int k = 0; k < nsec; k++) {
		size_t m = at[k + 1] - at[k];
		struct tl_second *x = &tl->sec[k];
		x->tx = (uint32_t)m;
		if (!m)
			continue;
		qsort(v + at[k], m, sizeof(*v), cmp_double);
		x->p99 = (float)rank(v + at[k], m, 0.99);
		x->max = (float)v[at[k] + m - 1];
	}
	free(fill);
	free(at);
	free(v);
	return 0;
}

int pgl_oltp_stop(struct oltp *o, double t0, double t1, struct lat_pool *pool,
		  struct oltp_figures *f, struct timeline *tl)
{
	int ret = 0;
	size_t n0 = pool->n;
	double *end = NULL;
	memset(f, 0, sizeof(*f));
	stop_all(o);
	for (int i = 0; i < o->nclients; i++) {
		const struct client *cl = &o->c[i];
		if (cl->lost && !ret)
			ret = cl->lost;
		f->errors += cl->errors;
		for (size_t k = 0; k < cl->n; k++) {
			if (cl->tx[k].end < t0 || cl->tx[k].end > t1)
				continue;
			if (pool_add(pool, cl->tx[k].lat * 1000.0) < 0) {
				ret = -ENOMEM;
				goto out;
			}
		}
	}
	pool->secs += t1 - t0;
	pool->errors += f->errors;
	size_t n = pool->n - n0;
	if (tl) {
		/* the ends, in the order the latencies went into the pool */
		size_t j = 0;
		if (!(end = malloc((n ? n : 1) * sizeof(*end)))) {
			ret = -ENOMEM;
			goto out;
		}
		for (int i = 0; i < o->nclients; i++)
			for (size_t k = 0; k < o->c[i].n; k++)
				if (o->c[i].tx[k].end >= t0 && o->c[i].tx[k].end <= t1)
					end[j++] = o->c[i].tx[k].end;
		if ((ret = seconds(end, pool->v + n0, n, t0, t1, tl)) < 0)
			goto out;
	}
	/* this run's figures from a copy: the pool keeps arrival order */
	double *mine = malloc((n ? n : 1) * sizeof(*mine));
	if (!mine) {
		ret = -ENOMEM;
		goto out;
	}
	if (n) /* none yet: the pool may still be NULL */
		memcpy(mine, pool->v + n0, n * sizeof(*mine));
	pgl_oltp_figures(mine, n, t1 - t0, f);
	free(mine);
out:
	if (ret == -ECONNRESET)
		fprintf(stderr, "pgload compare: an OLTP client lost its connection\n");
	free(end);
	oltp_free(o);
	return ret;
}
