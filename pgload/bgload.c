/*
 * bgload.c -- the background loads of `pgload compare --load`, as contest's:
 * io_load streams writes into a file on the back end (rewriting it from
 * the start every LOAD_FILE_MAX bytes), read_load streams reads of a file
 * written beforehand, from the device rather than the page cache.  A load
 * runs in a child process during the import and counts its bytes in
 * shared memory; its CPU time comes from wait4().
 *
 * What must stay true: a load never outlives pgload (PR_SET_PDEATHSIG) and
 * writes only on the back end under test.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compare_i.h"

#define LOAD_CHUNK    (1024 * 1024)  /* bytes per write or read of a load */
#define LOAD_FILE_MAX (256ULL << 20) /* io_load wraps, read_load's file */

const char *const pgl_load_names[] = {"none", "io_load", "read_load"};

/* pgl_cmp_load_file() -- the file read_load streams (LOAD_FILE_MAX or size/8). */
int pgl_cmp_load_file(const struct cmp *m, const char *root)
{
	char path[1100];
	uint64_t size = m->size / 8 < LOAD_FILE_MAX ? m->size / 8 : LOAD_FILE_MAX;
	snprintf(path, sizeof(path), "%s/read_load.dat", root);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	char *buf = malloc(LOAD_CHUNK);
	int ret = buf ? 0 : -ENOMEM;
	for (uint64_t done = 0; buf && done < size && ret == 0; done += LOAD_CHUNK) {
		memset(buf, (int)(done >> 20), LOAD_CHUNK);
		if (write(fd, buf, LOAD_CHUNK) != LOAD_CHUNK)
			ret = -EIO;
	}
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	free(buf);
	close(fd);
	return ret;
}

/* load_child() -- the load's loop; ends when killed. */
static void load_child(enum load_kind kind, const char *root, _Atomic uint64_t *bytes)
{
	char path[1100];
	char *buf = aligned_alloc(4096, LOAD_CHUNK);
	if (!buf)
		_exit(1);
	memset(buf, 'x', LOAD_CHUNK);
	if (kind == LOAD_IO) {
		snprintf(path, sizeof(path), "%s/io_load.dat", root);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			_exit(1);
		for (uint64_t off = 0;; off += LOAD_CHUNK) {
			if (off >= LOAD_FILE_MAX) {
				/* as contest's io_load: write the file again, from the start */
				fdatasync(fd);
				off = 0;
				lseek(fd, 0, SEEK_SET);
			}
			if (write(fd, buf, LOAD_CHUNK) != LOAD_CHUNK)
				_exit(1);
			atomic_fetch_add(bytes, LOAD_CHUNK);
		}
	}
	snprintf(path, sizeof(path), "%s/read_load.dat", root);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		_exit(1);
	for (;;) {
		/* from the device, not the page cache, where the back end has one */
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		lseek(fd, 0, SEEK_SET);
		ssize_t n;
		while ((n = read(fd, buf, LOAD_CHUNK)) > 0)
			atomic_fetch_add(bytes, (uint64_t)n);
		if (n < 0)
			_exit(1);
	}
}

int pgl_cmp_load_start(const struct cmp *m, const char *root, struct load *l)
{
	l->pid = 0;
	if (m->load == LOAD_NONE)
		return 0;
	atomic_store(l->bytes, 0);
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		pgl_child_signals();
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		load_child(m->load, root, l->bytes);
		_exit(0);
	}
	l->pid = pid;
	return 0;
}

void pgl_cmp_load_stop(struct load *l, double *mb, double *cpu)
{
	*mb = 0;
	*cpu = 0;
	if (l->pid <= 0)
		return;
	kill(l->pid, SIGKILL);
	struct rusage ru;
	int st;
	while (wait4(l->pid, &st, 0, &ru) < 0 && errno == EINTR)
		;
	*mb = (double)atomic_load(l->bytes) / 1e6;
	*cpu = pgl_seconds(ru.ru_utime) + pgl_seconds(ru.ru_stime);
	l->pid = 0;
}
