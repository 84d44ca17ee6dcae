/*
 * test_serial_writes.c -- iosched.serial_writes: a buffered write that
 * runs at arrival holds the lock its request names (ios_req.serial, the
 * file's) for the whole transfer, so a second write naming the same lock
 * waits for it; a write naming another file's lock, one naming none (an
 * O_DIRECT write) and, with serial_writes = no, any write do not.
 *
 * The first write is held in the middle of its transfer without timing:
 * its buffer is a page registered with userfaultfd, so pwritev() stops at
 * the page fault until the test supplies the page.  The writes that must
 * wait are each given a real file of their own, so that only the lock
 * the request names, not the kernel's inode lock, can hold them.  A write that fails part-way
 * reports its error and frees the lock.  Needs root (userfaultfd for kernel faults).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched_util.h"

#define PAGE 4096

struct wreq {
	struct ios_req r;
	struct iovec iov;
	struct ios_sched *s;
	atomic_int calls;
	atomic_long res;
	pthread_t thread;
};

static void w_done(struct ios_req *r, ssize_t res)
{
	struct wreq *w = (struct wreq *)r;

	atomic_store(&w->res, (long)res);
	atomic_fetch_add(&w->calls, 1);
}

static void *w_submit(void *arg)
{
	struct wreq *w = arg;

	ios_submit(w->s, &w->r);
	return NULL;
}

/* start() -- submit a write of @buf (@len bytes) to @fd at @off under
 * @serial, from a thread of its own (ios_submit() runs it there). */
static void start(struct wreq *w, struct ios_sched *s, int fd, pthread_mutex_t *serial, void *buf,
		  size_t len, off_t off)
{
	memset(w, 0, sizeof(*w));
	w->s = s;
	w->r.fd = fd;
	w->r.fid.ino = (uint64_t)fd;
	w->r.cls = IOS_CLASS_OTHER;
	w->r.dir = IOS_WRITE;
	w->r.serial = serial;
	w->r.off = off;
	w->r.len = len;
	w->iov = (struct iovec){buf, len};
	w->r.iov = &w->iov;
	w->r.iovcnt = 1;
	w->r.done = w_done;
	if (pthread_create(&w->thread, NULL, w_submit, w) != 0) {
		perror("pthread_create");
		exit(1);
	}
}

/* finished() -- whether @w completed within @ms milliseconds. */
static bool finished(struct wreq *w, int ms)
{
	for (int i = 0; i < ms && atomic_load(&w->calls) == 0; i++)
		usleep(1000);
	return atomic_load(&w->calls) != 0;
}

struct held {
	int uffd;
	char *page; /* registered: the first access faults to the test */
};

/* hold() -- a page whose first access waits for release(). */
static int hold(struct held *h)
{
	struct uffdio_api api = {.api = UFFD_API};
	struct uffdio_register reg;

	h->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (h->uffd < 0 || ioctl(h->uffd, UFFDIO_API, &api) < 0)
		return -errno;
	h->page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h->page == MAP_FAILED)
		return -errno;
	reg.range = (struct uffdio_range){(uintptr_t)h->page, PAGE};
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	return ioctl(h->uffd, UFFDIO_REGISTER, &reg) < 0 ? -errno : 0;
}

/* faulted() -- whether the page was touched (a write is stopped in it)
 * within 10 s. */
static bool faulted(struct held *h)
{
	struct pollfd p = {.fd = h->uffd, .events = POLLIN};
	struct uffd_msg msg;

	if (poll(&p, 1, 10000) != 1 || read(h->uffd, &msg, sizeof(msg)) != sizeof(msg))
		return false;
	return msg.event == UFFD_EVENT_PAGEFAULT;
}

/* release() -- supply the page, filled with @fill: the write goes on. */
static void release(struct held *h, char fill)
{
	static char src[PAGE] __attribute__((aligned(PAGE)));
	struct uffdio_copy c;

	memset(src, fill, sizeof(src));
	c = (struct uffdio_copy){.dst = (uintptr_t)h->page, .src = (uintptr_t)src, .len = PAGE};
	CHECK(ioctl(h->uffd, UFFDIO_COPY, &c) == 0);
}

static void unhold(struct held *h)
{
	munmap(h->page, PAGE);
	close(h->uffd);
}

static struct ios_sched *sched(int policy, bool serial)
{
	struct ios_settings set;

	settings(&set, policy, IOS_DEVICE_NONE);
	set.other_inline = true;
	set.serial_writes = serial;
	return ios_create_with(&set);
}

static pthread_mutex_t lock1 = PTHREAD_MUTEX_INITIALIZER, lock2 = PTHREAD_MUTEX_INITIALIZER;

/* one round: a write under lock1 stopped in its transfer, then a write to
 * another file under @second: whether it finished while the first was
 * stopped */
static bool passes_held_write(int policy, bool serial, pthread_mutex_t *second)
{
	struct ios_sched *s = sched(policy, serial);
	int fd1 = tmpfile_fd(), fd2 = tmpfile_fd();
	char buf[PAGE], back[PAGE];
	struct wreq w1, w2;
	struct held h = {.uffd = -1, .page = NULL};
	bool passed;

	CHECK(s && fd1 >= 0 && fd2 >= 0);
	if (hold(&h) < 0) {
		fprintf(stderr, "userfaultfd: %s (needs root)\n", strerror(errno));
		exit(1);
	}
	start(&w1, s, fd1, &lock1, h.page, PAGE, 0);
	CHECK(faulted(&h)); /* w1 is inside its pwritev() */
	memset(buf, 'b', sizeof(buf));
	start(&w2, s, fd2, second, buf, PAGE, PAGE);
	/* what must pass passes at once; what must wait is given 300 ms to
	 * show it does not */
	passed = finished(&w2, 300);
	CHECK(!finished(&w1, 0));
	release(&h, 'a');
	CHECK(finished(&w1, 10000) && finished(&w2, 10000));
	pthread_join(w1.thread, NULL);
	pthread_join(w2.thread, NULL);
	CHECK(atomic_load(&w1.res) == PAGE && atomic_load(&w2.res) == PAGE);
	CHECK(atomic_load(&w1.calls) == 1 && atomic_load(&w2.calls) == 1);
	/* both files hold what was written */
	CHECK(pread(fd1, back, PAGE, 0) == PAGE && back[0] == 'a' && back[PAGE - 1] == 'a');
	CHECK(pread(fd2, back, PAGE, PAGE) == PAGE && back[0] == 'b' && back[PAGE - 1] == 'b');
	unhold(&h);
	close(fd1);
	close(fd2);
	ios_destroy(s);
	return passed;
}

/* a buffered write that fails part-way (the file size limit after its
 * first page) reports the error, not a short count, and leaves its file's
 * lock free: the next write to the file completes */
static void test_error_part_way(void)
{
	struct ios_sched *s = sched(IOS_POLICY_DIRECT, true);
	struct rlimit old, lim = {.rlim_cur = PAGE, .rlim_max = RLIM_INFINITY};
	static char buf[2 * PAGE];
	int fd = tmpfile_fd();
	struct wreq w;
	char back[PAGE];

	CHECK(s && fd >= 0 && getrlimit(RLIMIT_FSIZE, &old) == 0);
	lim.rlim_max = old.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	memset(buf, 'c', sizeof(buf));
	CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	start(&w, s, fd, &lock1, buf, sizeof(buf), 0);
	CHECK(finished(&w, 10000));
	pthread_join(w.thread, NULL);
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
	CHECK(atomic_load(&w.res) == -EFBIG);
	CHECK(pread(fd, back, PAGE, 0) == PAGE && back[0] == 'c'); /* the part done */
	start(&w, s, fd, &lock1, buf, sizeof(buf), 0);
	CHECK(finished(&w, 10000));
	pthread_join(w.thread, NULL);
	CHECK(atomic_load(&w.res) == (long)sizeof(buf));
	close(fd);
	ios_destroy(s);
}

int main(void)
{
	struct ios_settings set;

	/* on by default */
	conf_defaults(&ios_conf, &set);
	CHECK(set.serial_writes);
	for (int p = 0; p < 2; p++) {
		int policy = p ? IOS_POLICY_DBAWARE : IOS_POLICY_DIRECT; /* other_inline */

		/* the same lock: waits */
		CHECK(!passes_held_write(policy, true, &lock1));
		/* another file's: passes */
		CHECK(passes_held_write(policy, true, &lock2));
		/* none (O_DIRECT): passes */
		CHECK(passes_held_write(policy, true, NULL));
		/* serial_writes = no: passes */
		CHECK(passes_held_write(policy, false, &lock1));
	}
	test_error_part_way();
	if (!failures)
		printf("ok\n");
	return failures ? 1 : 0;
}
