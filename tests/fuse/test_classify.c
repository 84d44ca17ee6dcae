/*
 * test_classify.c -- pgiofs_classify(): the class of every kind of file
 * PostgreSQL 15 keeps in its data directory, reached one name at a time as
 * the kernel looks them up (the data directory may be below the mount root).
 */
#include <stdio.h>
#include <string.h>

#include "pgiofs.h"

static int failures;

/* class_of() -- walk "a/b/c" from a directory of kind OTHER. */
static enum ios_class class_of(const char *path, enum pgiofs_dirkind *last_kind)
{
	char buf[256], *save = NULL, *tok, *next;
	enum pgiofs_dirkind kind = PGIOFS_DIR_OTHER, k;
	enum ios_class cls = IOS_CLASS_OTHER;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, "/", &save); tok; tok = next) {
		next = strtok_r(NULL, "/", &save);
		pgiofs_classify(kind, tok, next != NULL || path[strlen(path) - 1] == '/', &k, &cls);
		kind = k;
	}
	if (last_kind)
		*last_kind = kind;
	return cls;
}

static void expect(const char *path, enum ios_class want)
{
	enum ios_class got = class_of(path, NULL);

	if (got != want) {
		fprintf(stderr, "%s: got %s, want %s\n", path, ios_class_name(got),
			ios_class_name(want));
		failures++;
	}
}

int main(void)
{
	const char *roots[] = {"", "data/", "srv/pg/15/main/"};
	char p[256];
	unsigned i;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
#define E(rel, cls)                                                                                \
	do {                                                                                       \
		snprintf(p, sizeof(p), "%s%s", roots[i], rel);                                     \
		expect(p, cls);                                                                    \
	} while (0)
		E("pg_wal/000000010000000000000001", IOS_CLASS_WAL);
		E("pg_wal/xlogtemp.1234", IOS_CLASS_WAL);
		E("pg_wal/archive_status/000000010000000000000001.done", IOS_CLASS_OTHER);
		E("pg_xact/0000", IOS_CLASS_XACT);
		E("pg_subtrans/0000", IOS_CLASS_XACT);
		E("pg_commit_ts/0000", IOS_CLASS_XACT);
		E("pg_multixact/offsets/0000", IOS_CLASS_XACT);
		E("pg_multixact/members/0000", IOS_CLASS_XACT);
		E("base/5/16384", IOS_CLASS_HEAP);
		E("base/5/16384.1", IOS_CLASS_HEAP);
		E("base/5/16384_fsm", IOS_CLASS_FSM);
		E("base/5/16384_vm", IOS_CLASS_VM);
		E("base/5/16384_vm.2", IOS_CLASS_VM);
		E("base/5/16384_init", IOS_CLASS_HEAP);
		E("base/5/pg_filenode.map", IOS_CLASS_META);
		E("base/5/pg_internal.init", IOS_CLASS_META);
		E("base/5/PG_VERSION", IOS_CLASS_OTHER);
		E("base/5/16384_fsmx", IOS_CLASS_OTHER);
		E("base/5/16384.x", IOS_CLASS_OTHER);
		E("base/pgsql_tmp/pgsql_tmp1234.0", IOS_CLASS_TEMP);
		E("base/pgsql_tmp/pgsql_tmp1234.0.fileset/o1of2.p0.0", IOS_CLASS_TEMP);
		E("global/1260", IOS_CLASS_HEAP);
		E("global/pg_control", IOS_CLASS_META);
		E("global/pg_filenode.map", IOS_CLASS_META);
		E("pg_tblspc/16400/PG_15_202209061/16401/16402", IOS_CLASS_HEAP);
		E("pg_tblspc/16400/PG_15_202209061/pgsql_tmp/pgsql_tmp1.0", IOS_CLASS_TEMP);
		E("postgresql.conf", IOS_CLASS_OTHER);
		E("postmaster.pid", IOS_CLASS_OTHER);
		E("log/postgresql-2026.log", IOS_CLASS_OTHER);
		E("pg_stat/pgstat.stat", IOS_CLASS_OTHER);
		E("base/notadb/16384", IOS_CLASS_OTHER);
	}
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
