/*
 * pgdisk.h -- public interface of pgdisk, the modelled disk.
 *
 * pgdisk serves one disk image as the file MOUNTPOINT/disk of a FUSE mount,
 * so that a loop device with direct I/O (`losetup --direct-io=on`) can sit
 * on it, and holds every request back by the disk model of iosched.h
 * (ios_disk_*) with the [device] settings: the kernel's block layer, its
 * elevators and any file system then run on a 2004-era hdd (or an ssd) of
 * known, reproducible timing.  MOUNTPOINT/stats holds its counters;
 * MOUNTPOINT/control its injected faults (rules that fail chosen requests).
 *
 * This header exposes what the command-line front end (pgdisk_main.c) and
 * the tests need.
 */
#ifndef PGIOFS_PGDISK_H
#define PGIOFS_PGDISK_H

#include "version.h"

#define PGDISK_VERSION PGIOFS_RELEASE

/* The files of the mount. */
#define PGDISK_DISK_NAME    "disk"    /* the image, held back by the model */
#define PGDISK_STATS_NAME   "stats"   /* counters, "NAME VALUE" lines (docs/pgdisk.md) */
#define PGDISK_CONTROL_NAME "control" /* fault rules: written to change, read to list */

/* pgdisk_main() -- the `pgdisk` command: serve IMAGE at MOUNTPOINT until
 * unmounted or sent SIGTERM/SIGINT (--help, --version, --print-config).
 * Returns the exit status. */
int pgdisk_main(int argc, char **argv);

#endif
