/*
 * test_mountinfo.c -- the mountinfo reader (common/mountinfo.h): escaped
 * mount points, optional fields, lines that are not mountinfo, the deepest
 * mount and the one on top, exact lookups, stopping early, a missing file,
 * and path_is_under().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mountinfo.h"

#include "check.h"

static int count(const struct mountinfo *m, void *arg)
{
	(*(int *)arg)++;
	return strcmp(m->point, "/over") == 0 ? 42 : 0;
}

int main(void)
{
	char file[] = "/tmp/test_mountinfo.XXXXXX";
	int fd = mkstemp(file), n = 0;
	struct mountinfo m;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f) {
		perror("test_mountinfo: temporary file");
		return 1;
	}
	fputs("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
	      "40 22 0:40 / /srv/pg rw,nosuid - fuse.pgiofs /srv/back rw,user_id=0,group_id=0\n"
	      "41 40 0:41 / /srv/pg/data/pg_wal rw master:3 propagate_from:2 - tmpfs tmpfs rw\n"
	      "42 22 0:42 / /mnt/my\\040disk\\011x rw - fuse.pgiofs /b rw\n"
	      "43 22 0:43 / /over rw - fuse.pgiofs /b rw\n"
	      "44 22 0:44 / /over rw - ext4 /dev/sdb rw\n"
	      "47 22 0:47 / /short\n"
	      "garbage\n"
	      "48 22 0:48 / /nosuper rw - proc\n",
	      f);
	fclose(f);

	CHECK(mountinfo_find(file, "/srv/pg/data", false, &m) == 1 &&
	      strcmp(m.point, "/srv/pg") == 0 && strcmp(m.fstype, "fuse.pgiofs") == 0 &&
	      m.major == 0 && m.minor == 40 && strcmp(m.super, "rw,user_id=0,group_id=0") == 0);
	CHECK(mountinfo_find(file, "/srv/pg/data/pg_wal/00001", false, &m) == 1 &&
	      strcmp(m.fstype, "tmpfs") == 0);
	CHECK(mountinfo_find(file, "/srv/pgx", false, &m) == 1 && strcmp(m.point, "/") == 0 &&
	      strcmp(m.super, "rw,errors=remount-ro") == 0);
	CHECK(mountinfo_find(file, "/mnt/my disk\tx/data", false, &m) == 1 &&
	      strcmp(m.point, "/mnt/my disk\tx") == 0);
	/* the later of two mounts at one point is on top */
	CHECK(mountinfo_find(file, "/over/data", false, &m) == 1 && strcmp(m.fstype, "ext4") == 0);
	/* exact: only the point itself */
	CHECK(mountinfo_find(file, "/srv/pg", true, &m) == 1 && m.minor == 40);
	CHECK(mountinfo_find(file, "/srv/pg/data", true, &m) == 0);
	/* a line without super options still counts; malformed lines do not */
	CHECK(mountinfo_find(file, "/nosuper", true, &m) == 1 && strcmp(m.fstype, "proc") == 0 &&
	      m.super[0] == '\0');
	CHECK(mountinfo_find(file, "/short", true, &m) == 0);
	/* every well-formed line, in order, until the callback says stop */
	CHECK(mountinfo_each(file, count, &n) == 42 && n == 5);
	CHECK(mountinfo_find("/nonexistent/mountinfo", "/", false, &m) == -ENOENT);
	/* the real table has a root */
	CHECK(mountinfo_find(NULL, "/", true, &m) == 1);
	unlink(file);

	CHECK(path_is_under("/a/b", "/a"));
	CHECK(path_is_under("/a", "/a"));
	CHECK(!path_is_under("/ab", "/a"));
	CHECK(!path_is_under("/a", "/a/b"));
	CHECK(path_is_under("/x", "/"));
	CHECK(!path_is_under("/a", ""));
	return failures ? 1 : 0;
}
