/*
 * passthrough.c -- how files are opened: through the mount's page cache,
 * with FOPEN_DIRECT_IO, or in FUSE passthrough, where the kernel reads and
 * writes the backing file itself and only opens, fsyncs, attribute changes
 * and closes reach the daemon.
 *
 * files.wal_mode chooses for pg_wal segments (docs/pgiofs.md "WAL modes").
 * Passthrough needs a kernel that offers it (Linux 6.9 and later), the
 * write-back cache off on the connection, and CAP_SYS_ADMIN to register
 * backing files.  With the write-back cache on, the mount's connection
 * keeps it and each pg_wal directory gets a connection of its own without
 * it (walmount.c); WAL files reached through the mount's connection (before
 * such a WAL mount covers their directory) are direct.  Where passthrough
 * cannot be had, WAL is opened direct instead, which
 * keeps every write and fsync synchronous to the backing file (the same
 * durability), and the mount says why (fs->wal_note).
 *
 * The kernel enforces per inode: while a passthrough open is outstanding,
 * every other open must be passthrough too, with the same backing file, and
 * a passthrough open fails while a page-cache open is outstanding; the
 * failed open reaches the application as EIO.  So the mode is decided by
 * the inode, not by the name it was opened under (renames move files into
 * and out of pg_wal while they are open):
 *
 *   - an inode with a passthrough open gets passthrough, whatever its class;
 *   - an inode whose class wants passthrough gets it only if it has no
 *     other open at all (a direct open can become a page-cache user through
 *     mmap), and direct otherwise;
 *   - everything else gets what its class wants (direct or the page cache).
 *
 * What must stay true: the counts of an inode only include handles the
 * kernel may still hold (taken before the reply, dropped at RELEASE, which
 * the kernel sends after it has let go of the mode), so they never say less
 * than the kernel's; one backing id per inode, registered while it has a
 * passthrough handle and closed with the last one; a page-cache open of an
 * inode that was ever open uncached drops the mount's pages of it (they may
 * be older than what went past them).
 */
#include "pgiofs_i.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#define CAP_SYS_ADMIN_BIT 21 /* <linux/capability.h> CAP_SYS_ADMIN */

/* has_cap_sys_admin() -- whether the daemon may register backing files
 * (FUSE_DEV_IOC_BACKING_OPEN checks CAP_SYS_ADMIN). */
static bool has_cap_sys_admin(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long eff = 0;
	bool found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			found = true;
			break;
		}
	fclose(f);
	return found && (eff >> CAP_SYS_ADMIN_BIT & 1);
}

void pfs_open_mode_init(struct pfs *fs, bool writeback_offered)
{
	const struct pgiofs_settings *s = &fs->set;
	const char *why = NULL;

	fs->writeback = s->writeback_cache && writeback_offered;
	fs->wal_mode = s->wal_mode;
	fs->wal_note[0] = '\0';
	if (s->wal_mode != PGIOFS_WAL_PASSTHROUGH)
		return;
	if (s->fault_no_passthrough || !pfs_wire_passthrough_offered(fs))
		why = "the kernel does not offer FUSE passthrough (it needs Linux 6.9 or later "
		      "built with CONFIG_FUSE_PASSTHROUGH)";
	else if (!has_cap_sys_admin())
		why = "FUSE passthrough needs CAP_SYS_ADMIN (run pgiofs as root)";
	if (why) {
		fs->wal_mode = PGIOFS_WAL_DIRECT;
		snprintf(fs->wal_note, sizeof(fs->wal_note),
			 "files.wal_mode = passthrough: %s; WAL is opened direct instead (every "
			 "write and fsync still reaches the backing file before it returns)",
			 why);
		return;
	}
	if (fs->writeback && fs->core == fs) {
		/* the kernel refuses passthrough on a connection with the
		 * write-back cache: pg_wal directories get connections of their
		 * own (walmount.c), and WAL reached through this one is direct */
		fs->wal_split = true;
		return;
	}
	fs->writeback = false; /* the kernel refuses passthrough with it */
	pfs_wire_enable_passthrough(fs);
}

/* wanted() -- what class @cls asks for. */
static enum pfs_open_mode wanted(const struct pfs *fs, enum ios_class cls)
{
	if (cls != IOS_CLASS_WAL)
		return PFS_OPEN_CACHED;
	switch (fs->wal_mode) {
	case PGIOFS_WAL_PASSTHROUGH:
		return fs->wal_split ? PFS_OPEN_DIRECT : PFS_OPEN_PASSTHROUGH;
	case PGIOFS_WAL_DIRECT:
		return PFS_OPEN_DIRECT;
	default:
		return PFS_OPEN_CACHED;
	}
}

/* register_backing__() -- the inode's backing id, registered if need be;
 * caller holds in->om_lock.  0 or -errno. */
static int register_backing__(struct pfs *fs, struct pfs_inode *in)
{
	static atomic_bool warned;
	int fd, id;

	if (in->backing_id > 0)
		return 0;
	fd = id = pfs_inode_fd(fs, in);
	if (fd >= 0) {
		id = pfs_wire_backing_open(fs, fd);
		pfs_inode_fd_put(fs, in);
	}
	if (id < 0) {
		if (!atomic_exchange(&warned, true))
			log_msg(LOG_WARNING,
				"cannot register a backing file for passthrough (%s): such files "
				"are opened direct instead",
				strerror(-id));
		return id;
	}
	in->backing_id = id;
	return 0;
}

void pfs_open_mode_take(struct pfs *fs, struct pfs_inode *in, enum ios_class cls,
			struct pfs_open_how *how)
{
	enum pfs_open_mode want = wanted(fs, cls), mode;
	bool had_id;

	pthread_mutex_lock(&in->om_lock);
	had_id = in->backing_id > 0;
	if (in->n_passthrough)
		mode = PFS_OPEN_PASSTHROUGH;
	else if (want == PFS_OPEN_PASSTHROUGH && !in->n_cached && !in->n_direct &&
		 register_backing__(fs, in) == 0)
		mode = PFS_OPEN_PASSTHROUGH;
	else if (want != PFS_OPEN_CACHED)
		mode = PFS_OPEN_DIRECT;
	else
		mode = PFS_OPEN_CACHED;
	how->mode = mode;
	how->backing_id = mode == PFS_OPEN_PASSTHROUGH ? in->backing_id : 0;
	how->new_file = mode == PFS_OPEN_PASSTHROUGH && !had_id;
	how->drop_cache = in->uncached_seen;
	switch (mode) {
	case PFS_OPEN_PASSTHROUGH:
		in->n_passthrough++;
		in->uncached_seen = true;
		break;
	case PFS_OPEN_DIRECT:
		in->n_direct++;
		in->uncached_seen = true;
		break;
	default:
		in->n_cached++;
		break;
	}
	pthread_mutex_unlock(&in->om_lock);
}

void pfs_open_mode_drop(struct pfs *fs, struct pfs_inode *in, enum pfs_open_mode mode)
{
	int id = 0;

	pthread_mutex_lock(&in->om_lock);
	switch (mode) {
	case PFS_OPEN_PASSTHROUGH:
		if (--in->n_passthrough == 0) {
			id = in->backing_id;
			in->backing_id = 0;
		}
		break;
	case PFS_OPEN_DIRECT:
		in->n_direct--;
		break;
	default:
		in->n_cached--;
		break;
	}
	/* under the lock: an open that comes next registers its own id */
	if (id > 0)
		pfs_wire_backing_close(fs, id);
	pthread_mutex_unlock(&in->om_lock);
}
