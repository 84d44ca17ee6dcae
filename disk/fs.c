/*
 * fs.c -- the FUSE operations of pgdisk: a root directory holding three
 * files, "disk" (the image, every read, write, flush, discard and
 * write-zeroes of which goes through pgd_dev_submit()), "stats" (the
 * counters, a snapshot taken at open) and "control" (the fault rules:
 * each write changes them, fault.c; a read lists them as they were at
 * open).
 *
 * What must stay true: the disk file's size is the image's and never
 * changes (no truncate, no write or allocation beyond it); its data is
 * never cached by the kernel (direct_io), so every access reaches the
 * model; requests are handled one at a time in the order the kernel queued
 * them (a single-threaded session), so the model sees them in that order.
 */
#include "pgdisk_i.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ATTR_TIMEOUT 3600.0 /* nothing but pgdisk changes the tree */

static inline struct pgd *pgd_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* stat_of() -- the attributes of inode @ino; false if there is none. */
static bool stat_of(const struct pgd *p, fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = p->image_st.st_uid;
	st->st_gid = p->image_st.st_gid;
	st->st_atim = st->st_mtim = st->st_ctim = p->image_st.st_mtim;
	st->st_blksize = PGD_SECTOR;
	switch (ino) {
	case PGD_INO_ROOT:
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return true;
	case PGD_INO_DISK:
		st->st_mode = S_IFREG | (p->image_st.st_mode & 0666);
		st->st_nlink = 1;
		st->st_size = (off_t)p->dev.size;
		st->st_blocks = (blkcnt_t)(p->dev.size / 512);
		return true;
	case PGD_INO_STATS:
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		return true;
	case PGD_INO_CONTROL:
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		return true;
	default:
		return false;
	}
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	conn->max_write = PGD_MAX_IO; /* reads too: the kernel's max_pages follows */
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
	/* at most as many in flight as slots, so that the session thread
	 * seldom waits for one */
	conn->max_background = PGD_NSLOTS / 2;
	conn->congestion_threshold = PGD_NSLOTS / 2;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;

	memset(&e, 0, sizeof(e));
	if (parent != PGD_INO_ROOT) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (strcmp(name, PGDISK_DISK_NAME) == 0)
		e.ino = PGD_INO_DISK;
	else if (strcmp(name, PGDISK_STATS_NAME) == 0)
		e.ino = PGD_INO_STATS;
	else if (strcmp(name, PGDISK_CONTROL_NAME) == 0)
		e.ino = PGD_INO_CONTROL;
	else {
		fuse_reply_err(req, ENOENT);
		return;
	}
	stat_of(pgd_of(req), e.ino, &e.attr);
	e.attr_timeout = e.entry_timeout = ATTR_TIMEOUT;
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	if (!stat_of(pgd_of(req), ino, &st))
		fuse_reply_err(req, ENOENT);
	else
		fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

/* op_setattr() -- a disk's size is fixed and its owner and mode are the
 * image's: only setting the size it already has is accepted; the control
 * file takes a truncation (the shell's ">") and stays as it is. */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct pgd *p = pgd_of(req);
	struct stat st;

	if (!stat_of(p, ino, &st)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (to_set & ~FUSE_SET_ATTR_SIZE || (ino != PGD_INO_DISK && ino != PGD_INO_CONTROL) ||
	    (ino == PGD_INO_DISK && (uint64_t)attr->st_size != p->dev.size)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pgd *p = pgd_of(req);

	fi->direct_io = 1; /* no page cache: every access reaches the model */
	fi->keep_cache = 0;
	fi->noflush = 1; /* nothing to do on close: writes are done when acknowledged */
	if (ino == PGD_INO_DISK) {
		fuse_reply_open(req, fi);
		return;
	}
	if (ino != PGD_INO_STATS && ino != PGD_INO_CONTROL) {
		fuse_reply_err(req, ino == PGD_INO_ROOT ? EISDIR : ENOENT);
		return;
	}
	if (ino == PGD_INO_STATS && (fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EACCES);
		return;
	}
	{
		size_t len;
		char *text = ino == PGD_INO_STATS ? pgd_stats_text(p, &len)
						  : pgd_fault_text(&p->dev.faults, &len);

		if (!text) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		fi->fh = (uintptr_t)text;
		if (fuse_reply_open(req, fi) != 0)
			free(text); /* the open was interrupted: no release will come */
	}
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino == PGD_INO_STATS || ino == PGD_INO_CONTROL)
		free((char *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	if (ino == PGD_INO_DISK) {
		pgd_dev_submit(&pgd_of(req)->dev, req, PGD_READ, (uint64_t)off, size, NULL, false);
	} else {
		const char *text = (const char *)(uintptr_t)fi->fh;
		size_t len = strlen(text);

		if ((uint64_t)off >= len)
			fuse_reply_buf(req, NULL, 0);
		else
			fuse_reply_buf(req, text + off,
				       len - (size_t)off < size ? len - (size_t)off : size);
	}
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	if (ino == PGD_INO_CONTROL) {
		int ret = pgd_fault_control(&pgd_of(req)->dev.faults, buf, size);

		if (ret < 0)
			fuse_reply_err(req, -ret);
		else
			fuse_reply_write(req, size);
		return;
	}
	if (ino != PGD_INO_DISK) {
		fuse_reply_err(req, EBADF);
		return;
	}
	/* the kernel passes O_DSYNC (part of O_SYNC) for RWF_DSYNC and O_DSYNC writes in the
	 * write's flags: a FUA write (docs/pgdisk.md) */
	pgd_dev_submit(&pgd_of(req)->dev, req, PGD_WRITE, (uint64_t)off, size, buf,
		       (fi->flags & O_DSYNC) != 0);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	if (ino != PGD_INO_DISK) {
		fuse_reply_err(req, 0);
		return;
	}
	pgd_dev_submit(&pgd_of(req)->dev, req, PGD_FLUSH, 0, 0, NULL, false);
}

/* op_fallocate() -- the loop driver's discards (punch hole) and write
 * zeroes (zero range, or punch hole) go through the model; plain
 * allocation inside the disk has nothing to do; nothing may grow it. */
static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	struct pgd *p = pgd_of(req);

	if (ino != PGD_INO_DISK) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (mode & FALLOC_FL_PUNCH_HOLE)
		pgd_dev_submit(&p->dev, req, PGD_DISCARD, (uint64_t)off, (uint64_t)len, NULL,
			       false);
	else if (mode & FALLOC_FL_ZERO_RANGE)
		pgd_dev_submit(&p->dev, req, PGD_ZERO, (uint64_t)off, (uint64_t)len, NULL, false);
	else if (mode & ~FALLOC_FL_KEEP_SIZE)
		fuse_reply_err(req, EOPNOTSUPP);
	else
		fuse_reply_err(req, (uint64_t)off + (uint64_t)len > p->dev.size &&
					    !(mode & FALLOC_FL_KEEP_SIZE)
					? ENOSPC
					: 0);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != PGD_INO_ROOT)
		fuse_reply_err(req, ENOTDIR);
	else
		fuse_reply_open(req, fi);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	static const struct {
		const char *name;
		fuse_ino_t ino;
	} ents[] = {
	    {".", PGD_INO_ROOT},
	    {"..", PGD_INO_ROOT},
	    {PGDISK_DISK_NAME, PGD_INO_DISK},
	    {PGDISK_STATS_NAME, PGD_INO_STATS},
	    {PGDISK_CONTROL_NAME, PGD_INO_CONTROL},
	};
	char buf[512];
	size_t used = 0, i;

	for (i = (size_t)off; i < sizeof(ents) / sizeof(ents[0]); i++) {
		struct stat st;
		size_t n;

		stat_of(pgd_of(req), ents[i].ino, &st);
		n = fuse_add_direntry(req, buf + used, sizeof(buf) - used, ents[i].name, &st,
				      (off_t)i + 1);
		if (used + n > size || used + n > sizeof(buf))
			break;
		used += n;
	}
	fuse_reply_buf(req, buf, used);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

const struct fuse_lowlevel_ops pgd_ops = {
    .init = op_init,
    .lookup = op_lookup,
    .getattr = op_getattr,
    .setattr = op_setattr,
    .open = op_open,
    .read = op_read,
    .write = op_write,
    .flush = op_flush,
    .release = op_release,
    .fsync = op_fsync,
    .fallocate = op_fallocate,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .releasedir = op_releasedir,
};

/* ------------------------------------------------------------------------ */
/* MOUNTPOINT/stats */

/* log_stats() -- a log's lines, NAME and NAME_*: the logs are the session
 * thread's own. */
static void log_stats(FILE *f, const char *name, const struct pgd_wlog *l)
{
	struct pgd_wlog_counters w;

	pgd_wlog_counters(l, &w);
	fprintf(f,
		"%s %s\n%s_records %" PRIu64 "\n%s_bytes %" PRIu64 "\n%s_bytes_out %" PRIu64
		"\n%s_full %d\n%s_error %d\n",
		name, l ? "yes" : "no", name, w.records, name, w.bytes, name, w.bytes_out, name,
		w.full ? 1 : 0, name, w.error);
}

/* since_start() -- @t (the model's clock, ios_now_ns()) from the start of
 * serving; 0 stays 0 (never). */
static uint64_t since_start(const struct pgd *p, uint64_t t)
{
	return t > p->dev.start_ns ? t - p->dev.start_ns : 0;
}

/* model_stats() -- what held requests back and, for a capped volume, its
 * buckets now.  The model is the session thread's, as is this (a stats
 * file is opened on it): no lock. */
static void model_stats(FILE *f, const struct pgd *p)
{
	struct ios_disk_state st;
	uint64_t now = ios_now_ns();
	char a[32], b[32];
	int l;

	ios_disk_state(p->dev.disk, now, &st);
	fprintf(f,
		"uptime_ns %" PRIu64 "\nstart_realtime_ns %" PRIu64
		"\nsched_session %s\nsched_completion %s\n",
		since_start(p, now), pgd_realtime_ns() - since_start(p, now),
		pgd_sched_name(&p->dev.sched_session, a, sizeof(a)),
		pgd_sched_name(&p->dev.sched_completer, b, sizeof(b)));
	for (l = 0; l < IOS_NLIMIT; l++)
		fprintf(f, "limit_%s %" PRIu64 "\nlimit_%s_ns %" PRIu64 "\n",
			ios_disk_limit_name(l), st.held[l], ios_disk_limit_name(l), st.held_ns[l]);
	fprintf(f,
		"cloud_ops %" PRIu64 "\ncloud_merged %" PRIu64 "\ncloud_bytes %" PRIu64
		"\niops_tokens %.3f\nthroughput_tokens %.0f\ncredits %.3f\ncredits_empty %d"
		"\ncredits_outs %" PRIu64 "\ncredits_first_out_ns %" PRIu64
		"\ncredits_last_out_ns %" PRIu64 "\n",
		st.ops, st.merged, st.bytes, st.iops_tokens, st.bytes_tokens, st.credits,
		st.credits_empty ? 1 : 0, st.credits_outs, since_start(p, st.credits_first_out_ns),
		since_start(p, st.credits_last_out_ns));
}

char *pgd_stats_text(struct pgd *p, size_t *len)
{
	struct pgd_counters c;
	uint64_t held;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	size_t i;
	int op;

	if (!f)
		return NULL;
	pgd_dev_counters(&p->dev, &c, &held);
	fprintf(f, "pgdisk %s\nimage %s\nsize_bytes %" PRIu64 "\n", PGDISK_VERSION, p->image,
		p->dev.size);
	for (i = 0; i < p->conf->nrows; i++) {
		char v[CONF_STR_MAX + 32];

		conf_format(&p->conf->rows[i], &p->set, v, sizeof(v));
		fprintf(f, "%s %s\n", p->conf->rows[i].name, v);
	}
	fprintf(f, "full_stroke_ns %" PRIu64 "\ndirect_io %s\n",
		ios_disk_full_stroke_ns(p->dev.disk), p->dev.dio_align > 1 ? "yes" : "no");
	for (op = 0; op < PGD_NOPS; op++)
		fprintf(f, "%s_ops %" PRIu64 "\n%s_bytes %" PRIu64 "\n", pgd_op_name(op), c.ops[op],
			pgd_op_name(op), c.bytes[op]);
	fprintf(f,
		"completed %" PRIu64 "\novertaken %" PRIu64 "\nerrors %" PRIu64 "\nfaults %" PRIu64
		"\nfault_rules %u\nheld %" PRIu64 "\nheld_max %" PRIu64 "\nin_service_max %" PRIu64
		"\n",
		c.completed, c.overtaken, c.errors, c.faults, pgd_fault_rules(&p->dev.faults), held,
		c.held_max, c.in_service_max);
	fprintf(f,
		"service_ns %" PRIu64 "\nseek_ns %" PRIu64 "\nrotation_ns %" PRIu64
		"\ntransfer_ns %" PRIu64 "\nlatency_ns %" PRIu64 "\n",
		c.service_ns, c.seek_ns, c.rotation_ns, c.transfer_ns, c.latency_ns);
	fprintf(f,
		"late_ns_sum %" PRIu64 "\nlate_ns_max %" PRIu64 "\nlate_ns_p50 %" PRIu64
		"\nlate_ns_p99 %" PRIu64 "\nlate_ns_p999 %" PRIu64 "\n",
		c.late_ns_sum, c.late.lat_max_ns, ios_stats_percentile(&c.late, 0.5),
		ios_stats_percentile(&c.late, 0.99), ios_stats_percentile(&c.late, 0.999));
	fprintf(f,
		"response_ns_p50 %" PRIu64 "\nresponse_ns_p99 %" PRIu64
		"\nresponse_ns_p999 %" PRIu64 "\nresponse_ns_max %" PRIu64 "\n",
		ios_stats_percentile(&c.response, 0.5), ios_stats_percentile(&c.response, 0.99),
		ios_stats_percentile(&c.response, 0.999), c.response.lat_max_ns);
	model_stats(f, p);
	log_stats(f, "log", p->dev.wlog);
	log_stats(f, "request_log", p->dev.rlog);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
