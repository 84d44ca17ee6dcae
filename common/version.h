/*
 * version.h -- the release of the whole suite (pgiofs, pgdisk, pgload):
 * the programs are released together, and each prints it as
 * "NAME VERSION (LIBRARY VERSION)" for --version.
 */
#ifndef PGIOFS_COMMON_VERSION_H
#define PGIOFS_COMMON_VERSION_H

#define PGIOFS_RELEASE "0.1.0"

#endif /* PGIOFS_COMMON_VERSION_H */
