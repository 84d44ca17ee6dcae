/*
 * test_blkqueue.c -- pgl_queue_apply() (pgload/blkqueue.c) on a real loop
 * device: a loop device is reused from run to run, and one left with
 * mq-deadline and a write_expire of 1000 ms must come out of
 * pgl_queue_apply(mq-deadline) with mq-deadline's default 5000 ms, not the
 * stale tunable a report would then show as the cell's; the tunables asked
 * for are applied after the reset, and rotational as asked.  Needs root and
 * losetup; exit 0 pass, 1 fail, 77 skip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testbed.h"

static char sysfs[128];

static int read_attr(const char *name, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", sysfs, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int write_attr(const char *name, const char *value)
{
	char path[256];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", sysfs, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fputs(value, f) < 0 ? -1 : 0;
	return fclose(f) == 0 ? ret : -1;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char dir[512], img[600], cmd[1400], dev[64] = "", buf[128];
	const char *sets[] = {"read_expire=1000", NULL};
	struct pgl_queue_conf mq = {.elevator = "mq-deadline", .rotational = 1, .sets = NULL};
	struct pgl_queue_conf mq_set = {.elevator = "mq-deadline", .rotational = 0, .sets = sets};
	FILE *p;

	if (geteuid() != 0) {
		printf("SKIP: needs root (a loop device)\n");
		return 77;
	}
	snprintf(dir, sizeof(dir), "%s/test_blkqueue.XXXXXX", tmp);
	if (!mkdtemp(dir))
		return 1;
	snprintf(img, sizeof(img), "%s/img", dir);
	snprintf(cmd, sizeof(cmd), "truncate -s 16M %s && losetup --find --show %s", img, img);
	p = popen(cmd, "r");
	if (!p || !fgets(dev, sizeof(dev), p)) {
		fprintf(stderr, "cannot attach a loop device to %s\n", img);
		return 1;
	}
	pclose(p);
	dev[strcspn(dev, "\n")] = '\0';
	snprintf(sysfs, sizeof(sysfs), "/sys/block/%s/queue", dev + strlen("/dev/"));

	/* what an earlier run left */
	CHECK(write_attr("scheduler", "mq-deadline") == 0);
	CHECK(write_attr("iosched/write_expire", "1000") == 0);
	CHECK(read_attr("iosched/write_expire", buf, sizeof(buf)) == 0 && strcmp(buf, "1000") == 0);

	CHECK(pgl_queue_apply(dev, &mq) == 0);
	CHECK(read_attr("scheduler", buf, sizeof(buf)) == 0 && strstr(buf, "[mq-deadline]"));
	CHECK(read_attr("iosched/write_expire", buf, sizeof(buf)) == 0 && strcmp(buf, "5000") == 0);
	if (strcmp(buf, "5000") != 0)
		fprintf(stderr, "write_expire after pgl_queue_apply(mq-deadline): %s\n", buf);
	CHECK(read_attr("rotational", buf, sizeof(buf)) == 0 && strcmp(buf, "1") == 0);

	/* the tunables asked for come after the reset */
	CHECK(pgl_queue_apply(dev, &mq_set) == 0);
	CHECK(read_attr("iosched/read_expire", buf, sizeof(buf)) == 0 && strcmp(buf, "1000") == 0);
	CHECK(read_attr("iosched/write_expire", buf, sizeof(buf)) == 0 && strcmp(buf, "5000") == 0);
	CHECK(read_attr("rotational", buf, sizeof(buf)) == 0 && strcmp(buf, "0") == 0);

	snprintf(cmd, sizeof(cmd), "losetup -d %s; rm -rf %s", dev, dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleaning up: %s failed\n", cmd);
	return failures ? 1 : 0;
}
