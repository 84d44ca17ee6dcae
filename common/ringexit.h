/* ringexit.h -- closing an io_uring so that ThreadSanitizer sees it.
 *
 * liburing unmaps a ring with raw system calls, which ThreadSanitizer does
 * not see: a ring mapped later at the same address (a scheduler's next
 * ring, another mount's) inherits the old ring's threads' accesses and is
 * reported as racing with them.  ring_exit() closes a ring as
 * io_uring_queue_exit() does; under ThreadSanitizer through libc's
 * munmap() (whole pages: TSan forgets a range only by whole pages of its
 * shadow) and close().  Everywhere else it is io_uring_queue_exit().
 */
#ifndef PGIOFS_RINGEXIT_H
#define PGIOFS_RINGEXIT_H

#include <liburing.h>

/* ring_exit() -- unmap ring @r and close its descriptor. */
void ring_exit(struct io_uring *r);

#endif
