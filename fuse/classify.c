/*
 * classify.c -- what a file in a PostgreSQL data directory is, from its
 * name and the kind of directory it is in.
 *
 * pgiofs sees one name at a time (lookups are relative to the parent), so
 * every inode remembers the kind of directory it is (pg_wal, a database
 * directory, ...) and a child's class follows from its parent's kind and its
 * own name.  The data directory may be anywhere below the mount point.
 *
 * Relation main forks are classified IOS_CLASS_HEAP here; telling index from
 * heap needs the page content (a later refinement).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "pgiofs.h"

static bool all_digits(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* relation_fork() -- "16384", "16384.2", "16384_fsm", "16384_vm.1",
 * "16384_init": the class of that fork, or -1 if the name is not one. */
static int relation_fork(const char *name)
{
	size_t n = strspn(name, "0123456789");
	const char *rest = name + n;

	if (n == 0)
		return -1;
	if (strncmp(rest, "_fsm", 4) == 0) {
		rest += 4;
		n = IOS_CLASS_FSM;
	} else if (strncmp(rest, "_vm", 3) == 0) {
		rest += 3;
		n = IOS_CLASS_VM;
	} else if (strncmp(rest, "_init", 5) == 0) {
		rest += 5;
		n = IOS_CLASS_HEAP;
	} else {
		n = IOS_CLASS_HEAP;
	}
	if (*rest == '\0')
		return (int)n;
	if (*rest == '.' && all_digits(rest + 1, strlen(rest + 1)))
		return (int)n;
	return -1;
}

void pgiofs_classify(enum pgiofs_dirkind parent, const char *name, bool isdir,
		     enum pgiofs_dirkind *kind, enum ios_class *cls)
{
	int fork;

	*kind = PGIOFS_DIR_OTHER;
	*cls = IOS_CLASS_OTHER;
	if (isdir) {
		if (strcmp(name, "pg_wal") == 0 || strcmp(name, "pg_xlog") == 0)
			*kind = PGIOFS_DIR_WAL;
		else if (strcmp(name, "pg_xact") == 0 || strcmp(name, "pg_subtrans") == 0 ||
			 strcmp(name, "pg_commit_ts") == 0 || strcmp(name, "pg_clog") == 0 ||
			 (parent == PGIOFS_DIR_MULTIXACT &&
			  (strcmp(name, "offsets") == 0 || strcmp(name, "members") == 0)))
			*kind = PGIOFS_DIR_XACT;
		else if (strcmp(name, "pg_multixact") == 0)
			*kind = PGIOFS_DIR_MULTIXACT;
		else if (strcmp(name, "pgsql_tmp") == 0 || parent == PGIOFS_DIR_TEMP)
			*kind = PGIOFS_DIR_TEMP;
		else if (strcmp(name, "base") == 0)
			*kind = PGIOFS_DIR_BASE;
		else if (strcmp(name, "global") == 0 ||
			 (parent == PGIOFS_DIR_BASE && all_digits(name, strlen(name))) ||
			 (parent == PGIOFS_DIR_TABLESPACE_VERSION &&
			  all_digits(name, strlen(name))))
			*kind = PGIOFS_DIR_DATABASE;
		else if (strncmp(name, "PG_", 3) == 0 && strchr(name + 3, '_'))
			*kind = PGIOFS_DIR_TABLESPACE_VERSION; /* pg_tblspc/<oid>/PG_15_... */
		return;
	}
	switch (parent) {
	case PGIOFS_DIR_WAL:
		*cls = IOS_CLASS_WAL;
		break;
	case PGIOFS_DIR_XACT:
		*cls = IOS_CLASS_XACT;
		break;
	case PGIOFS_DIR_TEMP:
		*cls = IOS_CLASS_TEMP;
		break;
	case PGIOFS_DIR_DATABASE:
		fork = relation_fork(name);
		if (fork >= 0)
			*cls = (enum ios_class)fork;
		else if (strcmp(name, "pg_filenode.map") == 0 || strcmp(name, "pg_control") == 0 ||
			 strcmp(name, "pg_internal.init") == 0)
			*cls = IOS_CLASS_META;
		break;
	default:
		break;
	}
}

/* oid_of() -- @s as an oid if it is all digits and fits, else 0. */
static uint32_t oid_of(const char *s, size_t n)
{
	unsigned long v;

	if (!all_digits(s, n) || n > 10)
		return 0;
	v = strtoul(s, NULL, 10);
	return v > UINT32_MAX ? 0 : (uint32_t)v;
}

void pgiofs_dir_oids(enum pgiofs_dirkind parent, uint32_t parent_spc, uint32_t parent_oid,
		     const char *name, enum pgiofs_dirkind kind, uint32_t *spc, uint32_t *oid)
{
	*oid = oid_of(name, strlen(name));
	*spc = 0;
	if (kind == PGIOFS_DIR_DATABASE) {
		if (strcmp(name, "global") == 0)
			*spc = PGIOFS_GLOBALTABLESPACE_OID;
		else if (parent == PGIOFS_DIR_BASE)
			*spc = PGIOFS_DEFAULTTABLESPACE_OID;
		else if (parent == PGIOFS_DIR_TABLESPACE_VERSION)
			*spc = parent_spc;
	} else if (kind == PGIOFS_DIR_TABLESPACE_VERSION) {
		*spc = parent_oid;
	}
}

uint32_t pgiofs_relfilenode(const char *name)
{
	if (relation_fork(name) < 0)
		return 0;
	return oid_of(name, strspn(name, "0123456789"));
}
