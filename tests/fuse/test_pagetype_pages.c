/*
 * test_pagetype_pages.c -- pgiofs_page_kind() on hand-made PostgreSQL 15
 * pages: every access method's special space (and their metapages), heap
 * and sequence pages, a new (all-zero) page, every way a header can be
 * invalid, and special spaces no core method uses.  test_pagetype.sh checks
 * the same function on the pages of a real cluster.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pgiofs.h"

static int failures;
static unsigned char page[8192];

static void set16(size_t off, uint16_t v)
{
	memcpy(page + off, &v, 2);
}

static void set32(size_t off, uint32_t v)
{
	memcpy(page + off, &v, 4);
}

/* init() -- PageInit(page, 8192, special) with @nitems line pointers and
 * tuples filling the page down to 4000. */
static void init(size_t special, unsigned nitems)
{
	memset(page, 0, sizeof(page));
	set32(0, 0x1);	     /* lsn */
	set32(4, 0x2000028); /* lsn */
	set16(12, (uint16_t)(24 + 4 * nitems));
	set16(14, (uint16_t)(nitems ? 4000 : 8192 - special));
	set16(16, (uint16_t)(8192 - special));
	set16(18, 8192 | 4);
	memset(page + 4000, 0x5a, 8192 - special - 4000 > 0 ? 8192 - special - 4000 : 0);
}

static void expect(const char *what, int want_ret, enum ios_class want_cls, const char *want_am)
{
	enum ios_class cls = IOS_CLASS_OTHER;
	const char *am = NULL;
	int ret = pgiofs_page_kind(page, sizeof(page), &cls, &am);

	if (ret != want_ret || (ret == 0 && (cls != want_cls || !am || strcmp(am, want_am) != 0))) {
		fprintf(stderr, "%s: got %d %s %s, want %d %s %s\n", what, ret, ios_class_name(cls),
			am ? am : "-", want_ret, ios_class_name(want_cls), want_am);
		failures++;
	}
}

int main(void)
{
	enum ios_class cls;
	const char *am;

	memset(page, 0, sizeof(page));
	expect("all-zero page", -ENODATA, 0, NULL);

	init(0, 10);
	expect("heap", 0, IOS_CLASS_HEAP, "heap");
	set16(10, 0x0004); /* PD_ALL_VISIBLE */
	expect("heap, all visible", 0, IOS_CLASS_HEAP, "heap");
	init(0, 0);
	expect("empty heap page", 0, IOS_CLASS_HEAP, "heap");

	/* btree: leaf, cycle id in use, the highest cycle id, metapage */
	init(16, 5);
	set16(8192 - 4, 0x1); /* BTP_LEAF */
	expect("btree leaf", 0, IOS_CLASS_INDEX, "btree");
	set16(8192 - 2, 0x1234);
	expect("btree cycle id", 0, IOS_CLASS_INDEX, "btree");
	set16(8192 - 2, 0xFF7F);
	expect("btree MAX_BT_CYCLE_ID", 0, IOS_CLASS_INDEX, "btree");
	init(16, 0);
	set16(12, 72); /* pd_lower: end of the metadata */
	set32(24, 0x053162);
	set32(28, 4);
	set16(8192 - 4, 0x8); /* BTP_META */
	expect("btree metapage", 0, IOS_CLASS_INDEX, "btree");
	set32(24, 0x12345);
	expect("btree meta flag, wrong magic", 0, IOS_CLASS_INDEX, "unknown");

	init(16, 3);
	set16(8192 - 4, 0x2); /* LH_BUCKET_PAGE */
	set16(8192 - 2, 0xFF80);
	expect("hash", 0, IOS_CLASS_INDEX, "hash");
	init(16, 3);
	set16(8192 - 4, 0x1); /* F_LEAF */
	set16(8192 - 2, 0xFF81);
	expect("gist", 0, IOS_CLASS_INDEX, "gist");
	init(16, 3);
	set16(8192 - 2, 0xFF90);
	expect("16 bytes, unknown id", 0, IOS_CLASS_INDEX, "unknown");

	init(8, 3);
	set16(8192 - 8, 0x4); /* SPGIST_LEAF */
	set16(8192 - 2, 0xFF82);
	expect("spgist", 0, IOS_CLASS_INDEX, "spgist");
	init(8, 0);
	set16(8192 - 2, 0xF091);
	expect("brin meta", 0, IOS_CLASS_INDEX, "brin");
	set16(8192 - 2, 0xF092);
	expect("brin revmap", 0, IOS_CLASS_INDEX, "brin");
	set16(8192 - 2, 0xF093);
	expect("brin regular", 0, IOS_CLASS_INDEX, "brin");
	set16(8192 - 2, 0xF094);
	expect("brin-like unknown type", 0, IOS_CLASS_INDEX, "unknown");
	set16(8192 - 2, 0xFF83);
	expect("bloom", 0, IOS_CLASS_INDEX, "bloom");
	init(8, 3);
	set32(8192 - 8, 0xFFFFFFFF); /* rightlink: none */
	set16(8192 - 2, 0x3);	     /* GIN_DATA | GIN_LEAF */
	expect("gin posting leaf", 0, IOS_CLASS_INDEX, "gin");
	set16(8192 - 2, 0x0);
	expect("gin entry internal", 0, IOS_CLASS_INDEX, "gin");
	set16(8192 - 2, 0x8); /* GIN_META */
	expect("gin meta", 0, IOS_CLASS_INDEX, "gin");
	init(8, 1);
	set32(8192 - 8, 0x1717);
	expect("sequence", 0, IOS_CLASS_HEAP, "sequence");
	init(24, 3);
	expect("24 bytes of special space", 0, IOS_CLASS_INDEX, "unknown");

	/* invalid headers */
	init(0, 10);
	set16(18, 8192 | 3);
	expect("layout version 3", -EINVAL, 0, NULL);
	init(0, 10);
	set16(18, 4096 | 4);
	expect("page size 4096", -EINVAL, 0, NULL);
	init(0, 10);
	set16(10, 0x8);
	expect("unknown pd_flags bit", -EINVAL, 0, NULL);
	init(0, 10);
	set16(12, 4001);
	expect("pd_lower > pd_upper", -EINVAL, 0, NULL);
	init(0, 10);
	set16(12, 20);
	expect("pd_lower inside the header", -EINVAL, 0, NULL);
	init(16, 10);
	set16(14, 8180);
	expect("pd_upper > pd_special", -EINVAL, 0, NULL);
	init(0, 10);
	set16(16, 8200);
	expect("pd_special > 8192", -EINVAL, 0, NULL);
	init(12, 10);
	expect("pd_special not MAXALIGNed", -EINVAL, 0, NULL);
	memset(page, 0, sizeof(page));
	page[5000] = 1;
	expect("zero header, data below", -EINVAL, 0, NULL);
	memset(page, 0xff, sizeof(page));
	expect("all ones", -EINVAL, 0, NULL);

	/* arguments */
	init(0, 10);
	if (pgiofs_page_kind(page, 8191, &cls, &am) != -EINVAL ||
	    pgiofs_page_kind(NULL, 8192, &cls, &am) != -EINVAL ||
	    pgiofs_page_kind(page, 8192, NULL, NULL) != 0) {
		fprintf(stderr, "argument checks failed\n");
		failures++;
	}

	if (failures) {
		fprintf(stderr, "test_pagetype_pages: %d checks failed\n", failures);
		return 1;
	}
	printf("test_pagetype_pages: all checks passed\n");
	return 0;
}
