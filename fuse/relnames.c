/*
 * relnames.c -- `pgiofs stat --dsn CONNINFO`: the names of the relations
 * in a report ("schema.relation" and pg_class.relkind), asked of the
 * PostgreSQL server over libpq.
 *
 * This runs in the `pgiofs stat` process, never in the daemon: the daemon
 * serves the very files the server reads and writes, and must never wait
 * for it.  The server may be down, starting, or stuck on I/O: every
 * connection has a connect timeout and every query a statement timeout, and
 * a failure only leaves names out, with a note saying why.
 *
 * How a name is found: the relation's database name comes from pg_database
 * (over the CONNINFO connection), then, connected to that database,
 * pg_filenode_relation(tablespace, relfilenode) gives the relation's oid
 * (mapped catalogs included, whose pg_class.relfilenode is 0) and pg_class
 * and pg_namespace its name and kind.  Shared catalogs (global/) resolve
 * over the CONNINFO connection.  A relation found is remembered for the
 * life of the process; one not found (created by a transaction still in
 * progress, or dropped) is asked for again at the next report, so names
 * appear as relations are committed.
 */
#include "pgiofs_i.h"

#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONNECT_TIMEOUT_S "5"			      /* libpq's connect_timeout */
#define QUERY_OPTIONS	  "-c statement_timeout=5000" /* ms */

struct known {
	uint32_t spc, db, relnode;
	char relkind;
	char name[IOS_REL_NAME_MAX];
};

struct pfs_relnames {
	char *dsn;
	struct known *k;
	size_t n, cap;
};

struct pfs_relnames *pfs_relnames_create(const char *dsn)
{
	struct pfs_relnames *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->dsn = strdup(dsn);
	if (!r->dsn) {
		free(r);
		return NULL;
	}
	return r;
}

void pfs_relnames_destroy(struct pfs_relnames *r)
{
	if (!r)
		return;
	free(r->dsn);
	free(r->k);
	free(r);
}

static struct known *lookup(struct pfs_relnames *r, const struct ios_rel_info *i)
{
	size_t j;

	for (j = 0; j < r->n; j++)
		if (r->k[j].relnode == i->relnode && r->k[j].db == i->db && r->k[j].spc == i->spc)
			return &r->k[j];
	return NULL;
}

static void remember(struct pfs_relnames *r, uint32_t spc, uint32_t db, uint32_t relnode,
		     const char *nsp, const char *rel, char relkind)
{
	struct known *k;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct known *nk = realloc(r->k, cap * sizeof(*nk));

		if (!nk)
			return; /* not remembered: asked again next time */
		r->k = nk;
		r->cap = cap;
	}
	k = &r->k[r->n++];
	k->spc = spc;
	k->db = db;
	k->relnode = relnode;
	k->relkind = relkind;
	snprintf(k->name, sizeof(k->name), "%s.%s", nsp, rel);
}

/* chomp() -- libpq messages end with a newline; a note is one line. */
static void chomp(char *s)
{
	char *nl;

	while ((nl = strchr(s, '\n')))
		*nl = nl[1] ? ' ' : '\0';
}

/* connect_db() -- a connection to the server of r->dsn, to database @dbname
 * (NULL: the one the dsn names).  NULL with the reason in @note. */
static PGconn *connect_db(const struct pfs_relnames *r, const char *dbname, char *note, size_t len)
{
	/* later keywords override earlier ones: the dsn may set its own
	 * connect_timeout, but not the database when @dbname is given */
	const char *keys[] = {"connect_timeout", "application_name",	   "options",
			      "dbname",		 dbname ? "dbname" : NULL, NULL};
	const char *vals[] = {
	    CONNECT_TIMEOUT_S, "pgiofs stat", QUERY_OPTIONS, r->dsn, dbname, NULL};
	PGconn *c = PQconnectdbParams(keys, vals, 1);

	if (c && PQstatus(c) == CONNECTION_OK)
		return c;
	snprintf(note, len, "cannot connect to %s%s%s: %s", dbname ? "database \"" : "",
		 dbname ? dbname : "the server", dbname ? "\"" : "",
		 c ? PQerrorMessage(c) : "out of memory");
	chomp(note);
	PQfinish(c);
	return NULL;
}

/* resolve_db() -- names for the unknown entries of @l in database @db
 * over @c.  0, or -1 with the reason in @note. */
static int resolve_db(struct pfs_relnames *r, PGconn *c, uint32_t db, struct ios_rel_list *l,
		      char *note, size_t len)
{
	static const char sql[] =
	    "SELECT f.spc, f.node, n.nspname, c.relname, c.relkind"
	    " FROM unnest($1::oid[], $2::oid[]) AS f(spc, node)"
	    " JOIN pg_class c ON c.oid = COALESCE(pg_filenode_relation(f.spc, f.node),"
	    /* spc 0: a tablespace reached under another name than its oid */
	    "   (SELECT oid FROM pg_class WHERE f.spc = 0 AND relfilenode = f.node"
	    "    AND reltablespace <> 0 ORDER BY oid LIMIT 1))"
	    " JOIN pg_namespace n ON n.oid = c.relnamespace";
	char *spcs, *nodes;
	const char *params[2];
	size_t i, cap = 16 * l->count + 3, ps = 0, pn = 0;
	PGresult *res;
	int row, ret = 0;

	spcs = malloc(cap);
	nodes = malloc(cap);
	if (!spcs || !nodes) {
		free(spcs);
		free(nodes);
		return 0;
	}
	ps += (size_t)snprintf(spcs, cap, "{");
	pn += (size_t)snprintf(nodes, cap, "{");
	for (i = 0; i < l->count; i++) {
		const struct ios_rel_info *e = &l->rel[i];

		if (e->db != db || e->relnode == 0 || lookup(r, e))
			continue;
		ps +=
		    (size_t)snprintf(spcs + ps, cap - ps, "%s%" PRIu32, ps > 1 ? "," : "", e->spc);
		pn += (size_t)snprintf(nodes + pn, cap - pn, "%s%" PRIu32, pn > 1 ? "," : "",
				       e->relnode);
	}
	snprintf(spcs + ps, cap - ps, "}");
	snprintf(nodes + pn, cap - pn, "}");
	params[0] = spcs;
	params[1] = nodes;
	res = PQexecParams(c, sql, 2, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(note, len, "query in database %" PRIu32 " failed: %s", db,
			 PQresultErrorMessage(res));
		ret = -1;
	} else {
		for (row = 0; row < PQntuples(res); row++)
			remember(r, (uint32_t)strtoul(PQgetvalue(res, row, 0), NULL, 10), db,
				 (uint32_t)strtoul(PQgetvalue(res, row, 1), NULL, 10),
				 PQgetvalue(res, row, 2), PQgetvalue(res, row, 3),
				 PQgetvalue(res, row, 4)[0]);
	}
	PQclear(res);
	free(spcs);
	free(nodes);
	return ret;
}

/* database_name() -- pg_database.datname of @db into @out over @c.  0; 1
 * when there is nothing to ask (the database was dropped, or accepts no
 * connections, as template0); -1 with the reason in @note. */
static int database_name(PGconn *c, uint32_t db, char *out, size_t outlen, char *note, size_t len)
{
	char oid[16];
	const char *params[1] = {oid};
	PGresult *res;
	int ret = -1;

	snprintf(oid, sizeof(oid), "%" PRIu32, db);
	res = PQexecParams(c, "SELECT datname, datallowconn FROM pg_database WHERE oid = $1::oid",
			   1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		snprintf(note, len, "cannot read pg_database: %s", PQresultErrorMessage(res));
	else if (PQntuples(res) == 0 || strcmp(PQgetvalue(res, 0, 1), "t") != 0)
		ret = 1;
	else {
		snprintf(out, outlen, "%s", PQgetvalue(res, 0, 0));
		ret = 0;
	}
	PQclear(res);
	return ret;
}

int pfs_relnames_resolve(struct pfs_relnames *r, struct ios_rel_list *l, char *note, size_t len)
{
	PGconn *main_conn;
	size_t i, j;
	int failed = 0, ret;

	note[0] = '\0';
	main_conn = connect_db(r, NULL, note, len);
	for (i = 0; main_conn && i < l->count; i++) {
		uint32_t db = l->rel[i].db;
		char why[512] = "", dbname[256];
		PGconn *c = main_conn;
		bool seen = false, unknown = false;

		for (j = 0; j < i && !seen; j++)
			seen = l->rel[j].db == db;
		for (j = i; j < l->count && !unknown; j++)
			unknown = l->rel[j].db == db && l->rel[j].relnode && !lookup(r, &l->rel[j]);
		if (seen || !unknown)
			continue; /* each database once, and only if needed */
		ret = db != 0
			  ? database_name(main_conn, db, dbname, sizeof(dbname), why, sizeof(why))
			  : 0;
		if (ret > 0)
			continue; /* gone, or template0: nothing to name */
		if (ret < 0)
			c = NULL;
		else if (db != 0 && strcmp(dbname, PQdb(main_conn)) != 0)
			c = connect_db(r, dbname, why, sizeof(why));
		if (c && resolve_db(r, c, db, l, why, sizeof(why)) < 0)
			failed = -1;
		else if (!c)
			failed = -1;
		if (why[0] && !note[0])
			snprintf(note, len, "%s", why);
		if (c && c != main_conn)
			PQfinish(c);
	}
	PQfinish(main_conn);
	for (i = 0; i < l->count; i++) {
		const struct known *k = lookup(r, &l->rel[i]);

		if (k) {
			snprintf(l->rel[i].name, sizeof(l->rel[i].name), "%s", k->name);
			l->rel[i].relkind = k->relkind;
		}
	}
	chomp(note);
	return main_conn && !failed ? 0 : -1;
}
