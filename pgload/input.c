/*
 * input.c -- byte streams from files or stdin, with lz4 frame decoding.
 *
 * Invariants: the first PEEK bytes of the raw stream are read at open time
 * to detect the lz4 frame magic; those bytes are never lost (plain streams
 * serve them from `raw` before reading the descriptor again).  Memory is one
 * raw buffer of RAWCAP bytes whatever the input size; lz4 frames of any
 * block size decode into the caller's buffer through LZ4F_decompress().
 * Concatenated lz4 frames (as `cat a.lz4 b.lz4` makes) decode as one stream.
 *
 * A pipe, FIFO or terminal is read only once poll() says it has data, with
 * the interrupt descriptor beside it (pgl_wait_fd()): a stalled writer never
 * keeps pgload from seeing Ctrl-C.  A FIFO is opened without blocking (its
 * first read waits for the writer instead).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4frame.h>

#include "pgload.h"
#include "pgload_i.h"

#define RAWCAP	  (256 * 1024)
#define LZ4_MAGIC 0x184D2204u

struct pgl_input {
	int fd;
	bool is_stdin;
	bool regular; /* a regular file: plain skips may lseek */
	bool lz4;
	bool eof; /* the descriptor reported end of file */
	int64_t size;
	uint64_t consumed; /* raw bytes taken from the descriptor */
	char *name;
	LZ4F_dctx *dctx;
	size_t lz4_hint; /* LZ4F_decompress's hint; 0 = a frame just ended */
	unsigned char *raw;
	size_t rpos, rend;
	char err[256];
};

/*
 * raw_read() -- read(2) from the descriptor; a pipe is waited for with
 * pgl_wait_fd(), so that an interrupt ends the wait (-EINTR).
 */
static ssize_t raw_read(struct pgl_input *in, void *buf, size_t cap)
{
	for (;;) {
		if (!in->regular) {
			int w = pgl_wait_fd(in->fd, POLLIN, -1);
			if (w == -EINTR) {
				snprintf(in->err, sizeof(in->err),
					 "interrupted while waiting for \"%s\"", in->name);
				return -EINTR;
			}
		}
		ssize_t n = read(in->fd, buf, cap);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			int e = errno;
			snprintf(in->err, sizeof(in->err), "could not read \"%s\": %s", in->name,
				 strerror(e));
			return -e;
		}
		if (n == 0)
			in->eof = true;
		in->consumed += (uint64_t)n;
		return n;
	}
}

/* fill_raw() -- move unread raw bytes to the front and read more. */
static ssize_t fill_raw(struct pgl_input *in)
{
	if (in->rpos > 0) {
		memmove(in->raw, in->raw + in->rpos, in->rend - in->rpos);
		in->rend -= in->rpos;
		in->rpos = 0;
	}
	if (in->eof || in->rend == RAWCAP)
		return 0;
	ssize_t n = raw_read(in, in->raw + in->rend, RAWCAP - in->rend);
	if (n > 0)
		in->rend += (size_t)n;
	return n;
}

/* dump_archive_dir() -- PATH is a pg_dump directory-format archive. */
static bool dump_archive_dir(const char *path)
{
	char toc[4200];
	snprintf(toc, sizeof(toc), "%s/toc.dat", path);
	return access(toc, F_OK) == 0;
}

int pgl_input_open(const char *path, struct pgl_input **out, char *errbuf)
{
	struct pgl_input *in = calloc(1, sizeof(*in));
	int ret;

	*out = NULL;
	if (in)
		in->fd = -1;
	if (!in || !(in->raw = malloc(RAWCAP)) || !(in->name = strdup(path))) {
		ret = -ENOMEM;
		if (errbuf)
			snprintf(errbuf, 256, "out of memory opening \"%s\"", path);
		goto fail;
	}
	in->size = -1;
	in->fd = -1;
	if (strcmp(path, "-") == 0) {
		in->fd = STDIN_FILENO;
		in->is_stdin = true;
	} else {
		/* a FIFO would block here until its writer comes: raw_read() waits */
		struct stat pst;
		int fl = stat(path, &pst) == 0 && S_ISFIFO(pst.st_mode) ? O_NONBLOCK : 0;
		in->fd = open(path, O_RDONLY | O_CLOEXEC | fl);
		if (in->fd >= 0 && fl)
			fcntl(in->fd, F_SETFL, fcntl(in->fd, F_GETFL) & ~O_NONBLOCK);
		if (in->fd < 0) {
			ret = -errno;
			if (errbuf)
				snprintf(errbuf, 256, "could not open \"%s\": %s", path,
					 strerror(-ret));
			goto fail;
		}
	}
	struct stat st;
	if (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		in->regular = true;
		in->size = st.st_size;
	}
	if (!in->is_stdin && S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
		if (errbuf && dump_archive_dir(path))
			snprintf(
			    errbuf, 256,
			    "%s: looks like a pg_dump directory-format archive (-Fd), not SQL; "
			    "convert it with `pg_restore -f FILE.sql %s`",
			    path, path);
		else if (errbuf)
			snprintf(errbuf, 256, "could not read \"%s\": is a directory", path);
		goto fail;
	}
	if (in->regular)
		posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	/* read at least 4 bytes (or to EOF) to look for the lz4 magic */
	while (in->rend < 4 && !in->eof) {
		ssize_t n = fill_raw(in);
		if (n < 0) {
			ret = (int)n;
			if (errbuf)
				snprintf(errbuf, 256, "%s", in->err);
			goto fail;
		}
	}
	if (in->rend >= 4) {
		uint32_t m = (uint32_t)in->raw[0] | (uint32_t)in->raw[1] << 8 |
			     (uint32_t)in->raw[2] << 16 | (uint32_t)in->raw[3] << 24;
		if (m == LZ4_MAGIC) {
			if (LZ4F_isError(
				LZ4F_createDecompressionContext(&in->dctx, LZ4F_VERSION))) {
				ret = -ENOMEM;
				if (errbuf)
					snprintf(errbuf, 256, "out of memory opening \"%s\"", path);
				goto fail;
			}
			in->lz4 = true;
			in->lz4_hint = 1;
		}
	}
	*out = in;
	return 0;
fail:
	pgl_input_close(in);
	return ret;
}

/* read_lz4() -- decompress into BUF; 0 only at a clean end of input. */
static ssize_t read_lz4(struct pgl_input *in, void *buf, size_t cap)
{
	for (;;) {
		if (in->rpos == in->rend) {
			ssize_t n = fill_raw(in);
			if (n < 0)
				return n;
			if (in->rpos == in->rend) {
				if (in->lz4_hint != 0) {
					snprintf(in->err, sizeof(in->err),
						 "could not decompress \"%s\": truncated lz4 frame",
						 in->name);
					return -EBADMSG;
				}
				return 0;
			}
		}
		size_t srcsz = in->rend - in->rpos, dstsz = cap;
		size_t r = LZ4F_decompress(in->dctx, buf, &dstsz, in->raw + in->rpos, &srcsz, NULL);
		if (LZ4F_isError(r)) {
			snprintf(in->err, sizeof(in->err), "could not decompress \"%s\": %s",
				 in->name, LZ4F_getErrorName(r));
			return -EBADMSG;
		}
		in->rpos += srcsz;
		in->lz4_hint = r;
		if (dstsz > 0)
			return (ssize_t)dstsz;
		/* a frame ended: what follows must be another frame or nothing */
		if (r == 0 && in->rpos == in->rend && in->eof)
			return 0;
	}
}

ssize_t pgl_input_read(struct pgl_input *in, void *buf, size_t cap)
{
	if (cap == 0)
		return 0;
	if (in->lz4)
		return read_lz4(in, buf, cap);
	if (in->rpos < in->rend) {
		size_t n = in->rend - in->rpos;
		if (n > cap)
			n = cap;
		memcpy(buf, in->raw + in->rpos, n);
		in->rpos += n;
		return (ssize_t)n;
	}
	if (in->eof)
		return 0;
	return raw_read(in, buf, cap);
}

int pgl_input_skip(struct pgl_input *in, uint64_t n)
{
	if (!in->lz4 && in->regular) {
		uint64_t buffered = in->rend - in->rpos;
		if (n <= buffered) {
			in->rpos += n;
			return 0;
		}
		n -= buffered;
		in->rpos = in->rend = 0;
		off_t pos = lseek(in->fd, (off_t)n, SEEK_CUR);
		if (pos < 0) {
			int e = errno;
			snprintf(in->err, sizeof(in->err), "could not seek in \"%s\": %s", in->name,
				 strerror(e));
			return -e;
		}
		in->consumed += n;
		if (pos > in->size) {
			snprintf(in->err, sizeof(in->err), "\"%s\" ended before offset %lld",
				 in->name, (long long)pos);
			return -ENODATA;
		}
		return 0;
	}
	char *tmp = malloc(RAWCAP);
	if (!tmp)
		return -ENOMEM;
	while (n > 0) {
		ssize_t r = pgl_input_read(in, tmp, n < RAWCAP ? (size_t)n : RAWCAP);
		if (r <= 0) {
			free(tmp);
			if (r == 0) {
				snprintf(in->err, sizeof(in->err), "\"%s\" ended early", in->name);
				return -ENODATA;
			}
			return (int)r;
		}
		n -= (uint64_t)r;
	}
	free(tmp);
	return 0;
}

bool pgl_input_is_lz4(const struct pgl_input *in)
{
	return in->lz4;
}

bool pgl_input_is_stdin(const struct pgl_input *in)
{
	return in->is_stdin;
}

int64_t pgl_input_size(const struct pgl_input *in)
{
	return in->size;
}

uint64_t pgl_input_consumed(const struct pgl_input *in)
{
	return in->consumed - (in->rend - in->rpos);
}

const char *pgl_input_name(const struct pgl_input *in)
{
	return in->name;
}

const char *pgl_input_error(const struct pgl_input *in)
{
	return in->err;
}

void pgl_input_close(struct pgl_input *in)
{
	if (!in)
		return;
	if (!in->is_stdin && in->fd >= 0)
		close(in->fd);
	if (in->dctx)
		LZ4F_freeDecompressionContext(in->dctx);
	free(in->raw);
	free(in->name);
	free(in);
}
