/* ringexit.c -- see ringexit.h. */
#include "ringexit.h"

#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__)
/* unmap() -- munmap() through libc, of whole pages. */
static void unmap(void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (p)
		munmap(p, (len + page - 1) / page * page);
}
#endif

void ring_exit(struct io_uring *r)
{
#if defined(__SANITIZE_THREAD__)
	unmap(r->sq.sqes,
	      (size_t)r->sq.ring_entries * (r->flags & IORING_SETUP_SQE128 ? 128u : 64u));
	if (r->cq.ring_ptr != r->sq.ring_ptr)
		unmap(r->cq.ring_ptr, r->cq.ring_sz);
	unmap(r->sq.ring_ptr, r->sq.ring_sz);
	close(r->ring_fd);
#else
	io_uring_queue_exit(r);
#endif
}
