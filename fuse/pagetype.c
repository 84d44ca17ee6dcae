/*
 * pagetype.c -- what a PostgreSQL 15 relation block is (table or index, and
 * which index access method) from its content alone.
 *
 * A relation's path does not say whether it is a table or an index, and a
 * catalog lookup cannot see relations created by a transaction still in
 * progress, so pgiofs looks at the pages themselves.  Every page starts with
 * the 24-byte PageHeaderData (storage/bufpage.h):
 *
 *    0 pd_lsn (8)  8 pd_checksum (2)  10 pd_flags (2)  12 pd_lower (2)
 *   14 pd_upper (2)  16 pd_special (2)  18 pd_pagesize_version (2)
 *   20 pd_prune_xid (4)
 *
 * Heap pages have no special space (pd_special == 8192).  Index pages keep
 * their access method's opaque data in [pd_special, 8192), and every core
 * method but GIN ends it with a 16-bit page id that tells it apart:
 *
 *   size 16: btree  BTPageOpaqueData    prev, next, level, flags, cycleid
 *                   (cycle ids stop at MAX_BT_CYCLE_ID 0xFF7F for this)
 *            hash   HashPageOpaqueData  ..., hasho_page_id 0xFF80
 *            gist   GISTPageOpaqueData  nsn, rightlink, flags, 0xFF81
 *   size 8:  spgist SpGistPageOpaqueData flags, nRedirection, nPlaceholder,
 *                   spgist_page_id 0xFF82
 *            brin   BrinSpecialSpace    vector[4], the last one the page
 *                   type 0xF091 (meta), 0xF092 (revmap), 0xF093 (regular)
 *            bloom  BloomPageOpaqueData (contrib) ..., 0xFF83
 *            gin    GinPageOpaqueData   rightlink, maxoff, flags: no id,
 *                   but flags use only the low 8 bits, so they never match
 *                   the ids above (ginblock.h relies on the same)
 *            sequences ("heap" class): sequence_magic 0x1717 at pd_special
 *
 * Block 0 of btree, hash, spgist, gin and brin indexes is a metapage with
 * the same special space (btree's also holds BTREE_MAGIC 0x053162 right
 * after the header), so the first block suffices.
 *
 * The page is read in the byte order of this machine, which is the one
 * PostgreSQL wrote it in.  The header checks are PageIsVerifiedExtended()'s
 * plus the page size and layout version (8192, 4) and pd_lower >= 24.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "pgiofs.h"

#define BLCKSZ		      8192
#define SIZE_OF_PAGE_HEADER   24
#define PAGESIZE_VERSION      (BLCKSZ | 4) /* PG_PAGE_LAYOUT_VERSION 4 */
#define PD_VALID_FLAG_BITS    0x0007
#define MAXIMUM_ALIGNOF	      8
#define MAX_BT_CYCLE_ID	      0xFF7F
#define HASHO_PAGE_ID	      0xFF80
#define GIST_PAGE_ID	      0xFF81
#define SPGIST_PAGE_ID	      0xFF82
#define BLOOM_PAGE_ID	      0xFF83
#define BRIN_PAGETYPE_META    0xF091
#define BRIN_PAGETYPE_REGULAR 0xF093
#define SEQUENCE_MAGIC	      0x1717
#define GIN_VALID_FLAGS	      0x00FF
#define BTP_META	      (1 << 3)
#define BTREE_MAGIC	      0x053162

static uint16_t u16_at(const unsigned char *p, size_t off)
{
	uint16_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t u32_at(const unsigned char *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static int all_zero(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

static int found(enum ios_class *cls, const char **am, enum ios_class c, const char *name)
{
	if (cls)
		*cls = c;
	if (am)
		*am = name;
	return 0;
}

int pgiofs_page_kind(const void *page, size_t len, enum ios_class *cls, const char **am)
{
	const unsigned char *p = page;
	uint16_t flags, lower, upper, special, id;
	size_t size;

	if (!p || len < BLCKSZ)
		return -EINVAL;
	flags = u16_at(p, 10);
	lower = u16_at(p, 12);
	upper = u16_at(p, 14);
	special = u16_at(p, 16);
	if (upper == 0 && all_zero(p, BLCKSZ))
		return -ENODATA; /* a new page: the relation was extended */
	if (u16_at(p, 18) != PAGESIZE_VERSION || (flags & ~PD_VALID_FLAG_BITS) ||
	    lower < SIZE_OF_PAGE_HEADER || lower > upper || upper > special || special > BLCKSZ ||
	    special % MAXIMUM_ALIGNOF)
		return -EINVAL;

	size = BLCKSZ - special;
	if (size == 0)
		return found(cls, am, IOS_CLASS_HEAP, "heap");
	id = u16_at(p, BLCKSZ - 2);
	if (size == 16) {
		if (id == HASHO_PAGE_ID)
			return found(cls, am, IOS_CLASS_INDEX, "hash");
		if (id == GIST_PAGE_ID)
			return found(cls, am, IOS_CLASS_INDEX, "gist");
		if (id <= MAX_BT_CYCLE_ID) {
			/* a metapage says so twice: flag and magic */
			if ((u16_at(p, special + 12) & BTP_META) &&
			    u32_at(p, SIZE_OF_PAGE_HEADER) != BTREE_MAGIC)
				return found(cls, am, IOS_CLASS_INDEX, "unknown");
			return found(cls, am, IOS_CLASS_INDEX, "btree");
		}
	} else if (size == 8) {
		if (id == SPGIST_PAGE_ID)
			return found(cls, am, IOS_CLASS_INDEX, "spgist");
		if (id >= BRIN_PAGETYPE_META && id <= BRIN_PAGETYPE_REGULAR)
			return found(cls, am, IOS_CLASS_INDEX, "brin");
		if (id == BLOOM_PAGE_ID)
			return found(cls, am, IOS_CLASS_INDEX, "bloom");
		/* a sequence has one tuple and the magic where GIN's rightlink
		 * would be */
		if (u32_at(p, special) == SEQUENCE_MAGIC && lower == SIZE_OF_PAGE_HEADER + 4)
			return found(cls, am, IOS_CLASS_HEAP, "sequence");
		if ((id & ~GIN_VALID_FLAGS) == 0)
			return found(cls, am, IOS_CLASS_INDEX, "gin");
	}
	/* special space of another size or id: an index of some other AM */
	return found(cls, am, IOS_CLASS_INDEX, "unknown");
}
