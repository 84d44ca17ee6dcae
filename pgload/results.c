/*
 * results.c -- what a run measured: the phases' names and the rows and
 * bytes loaded per table (a hash table that keeps the order in which tables
 * first appeared, which is the order the report lists them in).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pgload_i.h"

const char *const pgl_phase_names[PGL_NPHASE] = {"schema", "data", "post"};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

int pgl_tables_add(struct pgl_tables *t, const char *name, uint64_t rows, uint64_t bytes)
{
	if (!t->hash) {
		t->nbuckets = 256;
		t->hash = calloc(t->nbuckets, sizeof(*t->hash));
		if (!t->hash)
			return -ENOMEM;
	}
	uint64_t h = hash_str(name) % t->nbuckets;
	struct pgl_table_stat *e;
	for (e = t->hash[h]; e; e = e->next)
		if (strcmp(e->name, name) == 0)
			break;
	if (!e) {
		if (t->count >= t->nbuckets * 2) {
			/* grow: rehash in place of the chains */
			size_t nb = t->nbuckets * 4;
			struct pgl_table_stat **nh = calloc(nb, sizeof(*nh));
			if (!nh)
				return -ENOMEM;
			for (struct pgl_table_stat *x = t->first; x; x = x->order) {
				uint64_t k = hash_str(x->name) % nb;
				x->next = nh[k];
				nh[k] = x;
			}
			free(t->hash);
			t->hash = nh;
			t->nbuckets = nb;
			h = hash_str(name) % nb;
		}
		e = calloc(1, sizeof(*e));
		if (!e || !(e->name = strdup(name))) {
			free(e);
			return -ENOMEM;
		}
		e->next = t->hash[h];
		t->hash[h] = e;
		if (t->last)
			t->last->order = e;
		else
			t->first = e;
		t->last = e;
		t->count++;
	}
	e->rows += rows;
	e->bytes += bytes;
	return 0;
}

int pgl_tables_merge(struct pgl_tables *dst, const struct pgl_tables *src)
{
	for (struct pgl_table_stat *e = src->first; e; e = e->order) {
		int ret = pgl_tables_add(dst, e->name, e->rows, e->bytes);
		if (ret < 0)
			return ret;
	}
	return 0;
}

void pgl_tables_free(struct pgl_tables *t)
{
	struct pgl_table_stat *e = t->first;
	while (e) {
		struct pgl_table_stat *n = e->order;
		free(e->name);
		free(e);
		e = n;
	}
	free(t->hash);
	memset(t, 0, sizeof(*t));
}
