/*
 * compare_backends.c -- the back ends of `pgload compare` as --backends
 * and --destroy-device give them: each parsed (backends.c), named for the
 * report (LABEL=BACKEND, or told apart by their paths' ends), and checked
 * before anything is made (root, programs; a dev:DEVICE:FS back end only
 * on a device --destroy-device names, and nothing else uses).
 *
 * What must stay true: no two back ends share a label; no device is named
 * by --destroy-device that no back end destroys (a typo would otherwise go
 * unnoticed until the wrong device is named in a back end too).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare_i.h"

/* What a back end's label (LABEL=BACKEND) may hold: not "/", which parts
 * the back end from the profile in a cell's label, nor spaces or commas. */
#define LABEL_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"

/*
 * split_label() -- the LABEL of "LABEL=BACKEND" into LABEL (CAP bytes) and
 * *BACKEND past it.  Returns 1 if ARG had a label, 0 if not (*BACKEND is
 * ARG), or -EINVAL after saying why.  A back end of its own never has an
 * "=" before its first ":", so a label is told apart by that.
 */
static int split_label(const char *arg, char *label, size_t cap, const char **backend)
{
	size_t n = strcspn(arg, "=:");
	*backend = arg;
	if (arg[n] != '=')
		return 0;
	if (n == 0 || n >= cap || strspn(arg, LABEL_CHARS) != n || !arg[n + 1]) {
		fprintf(stderr,
			"pgload compare: --backends \"%s\": LABEL=BACKEND expected, LABEL of "
			"letters, digits and \"_.-\" (at most %zu), such as fast=dir:/srv/a\n",
			arg, cap - 1);
		return -EINVAL;
	}
	snprintf(label, cap, "%.*s", (int)n, arg);
	*backend = arg + n + 1;
	return 1;
}

/* path_tail() -- the last K components of PATH (trailing slashes dropped)
 * into OUT; all of it, without its leading slash, if it has fewer. */
static void path_tail(const char *path, int k, char *out, size_t cap)
{
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	size_t start = len;
	for (int seen = 0; start > 0; start--)
		if (path[start - 1] == '/' && ++seen == k)
			break;
	while (start < len && path[start] == '/')
		start++;
	snprintf(out, cap, "%.*s", (int)(len - start), path + start);
}

/*
 * name_backends() -- a unique name for every back end, the first part of
 * its cells' labels: a LABEL given (LABELLED) stays; back ends with a path
 * (dir:PATH, MODEL:IMAGE) whose names collide are told apart by the
 * shortest tail of their paths that differs ("dir:a/x", "dir:b/x").
 * Returns 0, or -EINVAL after saying which two still collide.
 */
static int name_backends(struct cmp *m, const bool *labelled)
{
	char tail[MAX_BACKENDS][sizeof(m->be[0].name)];
	bool clash[MAX_BACKENDS] = {false};
	for (int i = 0; i < m->nbe; i++)
		for (int j = 0; j < m->nbe; j++)
			clash[i] |= j != i && !labelled[i] && !labelled[j] && m->be[i].path &&
				    m->be[j].path && strcmp(m->be[i].name, m->be[j].name) == 0;
	for (int i = 0; i < m->nbe; i++) {
		if (!clash[i])
			continue;
		for (int k = 1; k <= 64; k++) {
			bool unique = true;
			path_tail(m->be[i].path, k, tail[i], sizeof(tail[i]));
			for (int j = 0; j < m->nbe && unique; j++) {
				char other[sizeof(tail[0])];
				if (j == i || !clash[j] || strcmp(m->be[i].name, m->be[j].name))
					continue;
				path_tail(m->be[j].path, k, other, sizeof(other));
				unique = strcmp(tail[i], other) != 0;
			}
			if (unique)
				break;
		}
	}
	for (int i = 0; i < m->nbe; i++)
		if (clash[i])
			snprintf(m->be[i].name, sizeof(m->be[i].name), "%s:%.*s",
				 m->be[i].model ? m->be[i].disk_model : "dir",
				 (int)sizeof(m->be[i].name) - 8, tail[i]);
	for (int i = 0; i < m->nbe; i++)
		for (int j = i + 1; j < m->nbe; j++)
			if (strcmp(m->be[i].name, m->be[j].name) == 0) {
				char unused[sizeof(m->be[0].name)];
				const char *bare;
				split_label(m->be_arg[j], unused, sizeof(unused), &bare);
				fprintf(stderr,
					"pgload compare: --backends: \"%s\" and \"%s\" would both "
					"be labelled \"%s\": give one a label of its own "
					"(LABEL=BACKEND, such as fast=%s)\n",
					m->be_arg[i], m->be_arg[j], m->be[i].name, bare);
				return -EINVAL;
			}
	return 0;
}

int pgl_cmp_backends(struct cmp *m, const char *const *items, int n)
{
	bool labelled[MAX_BACKENDS] = {false};
	int ret;
	for (int i = 0; i < n; i++) {
		char label[sizeof(m->be[0].name)];
		const char *arg = items[i];
		m->be_arg[i] = items[i];
		int has = split_label(arg, label, sizeof(label), &arg);
		if (has < 0)
			return has;
		if ((ret = pgl_backend_parse(arg, &m->be[m->nbe++])) < 0)
			return ret;
		if ((labelled[i] = has > 0))
			snprintf(m->be[i].name, sizeof(m->be[i].name), "%s", label);
	}
	return name_backends(m, labelled);
}

int pgl_cmp_check_backends(struct cmp *m)
{
	int ret;
	for (int i = 0; i < m->nbe; i++)
		if ((ret = pgl_backend_check(&m->be[i], m->destroy)) < 0)
			return ret;
	for (int d = 0; d < m->ndestroy; d++) {
		bool used = false;
		for (int i = 0; i < m->nbe && !used; i++)
			used = m->be[i].device[0] &&
			       pgl_blkdev_same(m->be[i].device, m->destroy[d]) == 1;
		if (!used) {
			fprintf(stderr,
				"pgload compare: --destroy-device %s: no dev:DEVICE:FS back end is "
				"on that device\n",
				m->destroy[d]);
			return -EINVAL;
		}
	}
	return 0;
}

/* pgl_cmp_backend_opts() -- how C's back end is set up: size, the loop device's
 * queue (elevator, --queue-set values; an hdd says it is rotational), the
 * model's --disk-set values. */
void pgl_cmp_backend_opts(const struct cmp *m, struct cell *c)
{
	int nq = 0, nd = 0, nb = 0;
	for (int i = 0; i < m->nsets; i++) {
		const struct sweep *s = &m->sets[i];
		if (!c->setv[i] || s->kind == SWEEP_PGIOFS)
			continue;
		snprintf(c->set_buf[nb], sizeof(c->set_buf[0]), "%s=%s", s->name, c->setv[i]);
		if (s->kind == SWEEP_QUEUE)
			c->queue_sets[nq++] = c->set_buf[nb++];
		else
			c->disk_sets[nd++] = c->set_buf[nb++];
	}
	c->queue_sets[nq] = NULL;
	c->disk_sets[nd] = NULL;
	c->bo = (struct pgl_backend_opts){
	    .size = m->size,
	    .queue = {.elevator = c->elevator,
		      .rotational = !c->spec->model ? -1 : strcmp(c->spec->model, "hdd") == 0,
		      .sets = c->queue_sets},
	    .pgdisk = m->pgdisk,
	    .disk_sets = c->disk_sets,
	};
}
