/*
 * gen.c -- `pgload gen`: write a deterministic synthetic load workload.
 *
 * Output: schema.sql (five related tables with primary keys and a foreign
 * key), data.sql (one COPY block per table, about 100 MB at scale 1) and
 * post.sql (secondary btree, gin and brin indexes, more constraints,
 * ANALYZE).
 *
 * What must stay true:
 *  - The bytes depend only on (scale, seed): one splitmix64 stream per table,
 *    no clock, no locale, no floating-point formatting (numbers are written
 *    from integers).
 *  - Every referenced key exists, so the foreign keys validate.
 *  - Values exercise COPY text escaping: tabs, newlines and backslashes
 *    (escaped), quotes, non-ASCII text, NULLs (\N) and empty strings; the
 *    documents table holds values large enough to be TOASTed.
 *  - Output is streamed through a fixed buffer: memory does not grow with
 *    the scale.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgload.h"
#include "pgload_i.h"

#define WBUF (1024 * 1024)

/* Rows per table at scale 1. */
#define N_CUSTOMERS 100000
#define N_PRODUCTS  20000
#define N_ORDERS    560000
#define N_DOCUMENTS 5500

struct writer {
	int fd;
	const char *path;
	char *buf;
	size_t len;
	uint64_t total;
	int err;
};

static void w_flush(struct writer *w)
{
	size_t off = 0;
	while (off < w->len && !w->err) {
		ssize_t n = write(w->fd, w->buf + off, w->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			w->err = errno;
			fprintf(stderr, "pgload gen: could not write \"%s\": %s\n", w->path,
				strerror(errno));
			break;
		}
		off += (size_t)n;
	}
	w->total += w->len;
	w->len = 0;
}

/* w_reserve() -- room for N more bytes. */
static inline char *w_reserve(struct writer *w, size_t n)
{
	if (w->len + n > WBUF)
		w_flush(w);
	return w->buf + w->len;
}

static inline void w_put(struct writer *w, const char *s, size_t n)
{
	if (n > WBUF / 2) {
		while (n > 0) {
			size_t k = n > WBUF / 2 ? WBUF / 2 : n;
			w_put(w, s, k);
			s += k;
			n -= k;
		}
		return;
	}
	memcpy(w_reserve(w, n), s, n);
	w->len += n;
}

static inline void w_str(struct writer *w, const char *s)
{
	w_put(w, s, strlen(s));
}

static inline void w_ch(struct writer *w, char c)
{
	*w_reserve(w, 1) = c;
	w->len++;
}

static inline void w_u64(struct writer *w, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	char *o = w_reserve(w, (size_t)n);
	for (int i = 0; i < n; i++)
		o[i] = tmp[n - 1 - i];
	w->len += (size_t)n;
}

/* w_money() -- CENTS as a numeric with two decimals. */
static inline void w_money(struct writer *w, uint64_t cents)
{
	w_u64(w, cents / 100);
	char *o = w_reserve(w, 3);
	o[0] = '.';
	o[1] = (char)('0' + cents / 10 % 10);
	o[2] = (char)('0' + cents % 10);
	w->len += 3;
}

static inline void w_2d(char *o, unsigned v)
{
	o[0] = (char)('0' + v / 10);
	o[1] = (char)('0' + v % 10);
}

/* w_time() -- seconds since 2015-01-01 00:00:00 as "YYYY-MM-DD HH:MM:SS". */
static void w_time(struct writer *w, uint64_t secs)
{
	/* days from civil (Howard Hinnant's algorithm), epoch shifted to 2015 */
	int64_t z = (int64_t)(secs / 86400) + 16436 + 719468; /* 16436 = 2015-01-01 */
	unsigned sod = (unsigned)(secs % 86400);
	int64_t era = z / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t y = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned d = doy - (153 * mp + 2) / 5 + 1;
	unsigned m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	char *o = w_reserve(w, 19);
	w_2d(o, (unsigned)(y / 100));
	w_2d(o + 2, (unsigned)(y % 100));
	o[4] = '-';
	w_2d(o + 5, m);
	o[7] = '-';
	w_2d(o + 8, d);
	o[10] = ' ';
	w_2d(o + 11, sod / 3600);
	o[13] = ':';
	w_2d(o + 14, sod / 60 % 60);
	o[16] = ':';
	w_2d(o + 17, sod % 60);
	w->len += 19;
}

/* ---- deterministic randomness ------------------------------------------ */

static inline uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static inline uint64_t rnd_below(uint64_t *s, uint64_t n)
{
	return n ? rnd(s) % n : 0;
}

static const char *const words[] = {
    "alpha",	 "bravo",      "charlie",    "delta",	    "echo",	    "foxtrot",
    "golf",	 "hotel",      "india",	     "juliett",	    "kilo",	    "lima",
    "mike",	 "november",   "oscar",	     "papa",	    "quebec",	    "romeo",
    "sierra",	 "tango",      "uniform",    "victor",	    "whiskey",	    "xray",
    "yankee",	 "zulu",       "disk",	     "page",	    "buffer",	    "index",
    "commit",	 "checkpoint", "vacuum",     "tuple",	    "relation",	    "segment",
    "journal",	 "elevator",   "deadline",   "latency",	    "throughput",   "crème",
    "brûlée",	 "naïve",      "Ærø",	     "smörgåsbord", "日本語",	    "Ελληνικά",
    "кириллица", "O'Brien",    "\"quoted\"", "semi;colon",  "dollar$$sign", "back\\slash",
    "tab\there", "new\nline",  "per%cent",   "under_score", "émoji🙂",   "$body$",
    "--dash",	 "/*star*/",
};
#define NWORDS (sizeof(words) / sizeof(words[0]))

/* w_text() -- VAL escaped for COPY text format. */
static void w_text(struct writer *w, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '\\':
			w_put(w, "\\\\", 2);
			break;
		case '\t':
			w_put(w, "\\t", 2);
			break;
		case '\n':
			w_put(w, "\\n", 2);
			break;
		case '\r':
			w_put(w, "\\r", 2);
			break;
		default:
			w_ch(w, *s);
		}
	}
}

/* w_words() -- N random words separated by spaces, COPY-escaped. */
static void w_words(struct writer *w, uint64_t *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (i)
			w_ch(w, ' ');
		uint64_t r = rnd(s);
		/* mostly plain words; the awkward ones 1 time in 8 */
		unsigned k = (r & 7) ? (unsigned)((r >> 3) % 41) : (unsigned)((r >> 3) % NWORDS);
		w_text(w, words[k]);
	}
}

static const char *const countries[] = {"DE", "FR", "US", "JP", "BR", "IN", "GB", "ES", "IT", "CA"};
static const char *const statuses[] = {"new",	    "paid",	"shipped",
				       "delivered", "returned", "cancelled"};
static const char *const colors[] = {"red", "green", "blue", "black", "white", "grey"};

static uint64_t rows_for(double scale, uint64_t base)
{
	double r = scale * (double)base + 0.5;
	return r < 1 ? 1 : (uint64_t)r;
}

/* ---- the three files --------------------------------------------------- */

static const char schema_sql[] = "-- pgload gen: schema\n"
				 "SET client_encoding = 'UTF8';\n"
				 "SET standard_conforming_strings = on;\n"
				 "\n"
				 "CREATE TABLE customers (\n"
				 "    id bigint PRIMARY KEY,\n"
				 "    name text NOT NULL,\n"
				 "    email text,\n"
				 "    country char(2),\n"
				 "    created_at timestamptz NOT NULL,\n"
				 "    balance numeric(12,2)\n"
				 ");\n"
				 "\n"
				 "CREATE TABLE products (\n"
				 "    id integer PRIMARY KEY,\n"
				 "    sku text NOT NULL,\n"
				 "    title text,\n"
				 "    price numeric(10,2) NOT NULL,\n"
				 "    attrs jsonb\n"
				 ");\n"
				 "\n"
				 "CREATE TABLE orders (\n"
				 "    id bigint PRIMARY KEY,\n"
				 "    customer_id bigint NOT NULL REFERENCES customers (id),\n"
				 "    ordered_at timestamp NOT NULL,\n"
				 "    status text NOT NULL,\n"
				 "    total numeric(12,2),\n"
				 "    note text\n"
				 ");\n"
				 "\n"
				 "CREATE TABLE order_items (\n"
				 "    order_id bigint NOT NULL,\n"
				 "    line smallint NOT NULL,\n"
				 "    product_id integer NOT NULL,\n"
				 "    qty integer NOT NULL,\n"
				 "    price numeric(10,2) NOT NULL,\n"
				 "    PRIMARY KEY (order_id, line)\n"
				 ");\n"
				 "\n"
				 "CREATE TABLE documents (\n"
				 "    id bigint PRIMARY KEY,\n"
				 "    customer_id bigint,\n"
				 "    title text,\n"
				 "    body text\n"
				 ");\n";

static const char post_sql[] =
    "-- pgload gen: post-data\n"
    "CREATE INDEX customers_email_idx ON customers (email);\n"
    "CREATE INDEX orders_customer_idx ON orders (customer_id);\n"
    "CREATE INDEX orders_ordered_at_brin ON orders USING brin (ordered_at);\n"
    "CREATE INDEX order_items_product_idx ON order_items (product_id);\n"
    "CREATE INDEX products_attrs_gin ON products USING gin (attrs);\n"
    "ALTER TABLE order_items ADD CONSTRAINT order_items_order_fk\n"
    "    FOREIGN KEY (order_id) REFERENCES orders (id);\n"
    "ALTER TABLE order_items ADD CONSTRAINT order_items_product_fk\n"
    "    FOREIGN KEY (product_id) REFERENCES products (id);\n"
    "ALTER TABLE documents ADD CONSTRAINT documents_customer_fk\n"
    "    FOREIGN KEY (customer_id) REFERENCES customers (id);\n"
    "ALTER TABLE orders ADD CONSTRAINT orders_total_check CHECK (total >= 0);\n"
    "ALTER TABLE products ADD CONSTRAINT products_sku_key UNIQUE (sku);\n"
    "ANALYZE;\n";

static void gen_customers(struct writer *w, uint64_t n, uint64_t seed)
{
	uint64_t s = seed ^ 0x1111;
	w_str(
	    w,
	    "COPY public.customers (id, name, email, country, created_at, balance) FROM stdin;\n");
	for (uint64_t id = 1; id <= n; id++) {
		w_u64(w, id);
		w_ch(w, '\t');
		w_words(w, &s, 2 + (unsigned)rnd_below(&s, 2));
		w_ch(w, '\t');
		uint64_t r = rnd(&s);
		if (r % 50 == 0) {
			w_put(w, "\\N", 2);
		} else if (r % 50 == 1) {
			/* an empty string, not a NULL */
		} else {
			w_str(w, words[(r >> 8) % 26]);
			w_ch(w, '.');
			w_u64(w, id);
			w_str(w, "@example.com");
		}
		w_ch(w, '\t');
		w_str(w, countries[(r >> 16) % 10]);
		w_ch(w, '\t');
		w_time(w, rnd_below(&s, 10ULL * 365 * 86400));
		w_str(w, "+00\t");
		uint64_t bal = rnd_below(&s, 10000000);
		if (bal % 7 == 0)
			w_ch(w, '-');
		w_money(w, bal);
		w_ch(w, '\n');
	}
	w_str(w, "\\.\n\n");
}

static void gen_products(struct writer *w, uint64_t n, uint64_t seed)
{
	uint64_t s = seed ^ 0x2222;
	w_str(w, "COPY public.products (id, sku, title, price, attrs) FROM stdin;\n");
	for (uint64_t id = 1; id <= n; id++) {
		w_u64(w, id);
		w_str(w, "\tSKU-");
		w_u64(w, id * 7919 % 1000003);
		w_ch(w, '-');
		w_u64(w, id);
		w_ch(w, '\t');
		w_words(w, &s, 3 + (unsigned)rnd_below(&s, 5));
		w_ch(w, '\t');
		w_money(w, 100 + rnd_below(&s, 100000));
		w_str(w, "\t{\"color\": \"");
		w_str(w, colors[rnd_below(&s, 6)]);
		w_str(w, "\", \"size\": ");
		w_u64(w, rnd_below(&s, 50));
		w_str(w, ", \"tags\": [\"");
		w_str(w, words[rnd_below(&s, 26)]);
		w_str(w, "\", \"");
		w_str(w, words[rnd_below(&s, 26)]);
		w_str(w, "\"], \"stock\": ");
		w_u64(w, rnd_below(&s, 1000));
		w_str(w, "}\n");
	}
	w_str(w, "\\.\n\n");
}

static void gen_orders(struct writer *w, uint64_t n, uint64_t ncust, uint64_t seed)
{
	uint64_t s = seed ^ 0x3333;
	w_str(
	    w,
	    "COPY public.orders (id, customer_id, ordered_at, status, total, note) FROM stdin;\n");
	for (uint64_t id = 1; id <= n; id++) {
		w_u64(w, id);
		w_ch(w, '\t');
		w_u64(w, 1 + rnd_below(&s, ncust));
		w_ch(w, '\t');
		/* roughly increasing in id, so the brin index is useful */
		w_time(w, id * 600 + rnd_below(&s, 3600));
		w_ch(w, '\t');
		w_str(w, statuses[rnd_below(&s, 6)]);
		w_ch(w, '\t');
		w_money(w, rnd_below(&s, 5000000));
		w_ch(w, '\t');
		uint64_t r = rnd(&s);
		if (r % 3 == 0)
			w_put(w, "\\N", 2);
		else if (r % 3 == 1)
			w_words(w, &s, 1 + (unsigned)(r >> 8) % 6);
		w_ch(w, '\n');
	}
	w_str(w, "\\.\n\n");
}

static void gen_order_items(struct writer *w, uint64_t norders, uint64_t nprod, uint64_t seed)
{
	uint64_t s = seed ^ 0x4444;
	w_str(w, "COPY public.order_items (order_id, line, product_id, qty, price) FROM stdin;\n");
	for (uint64_t id = 1; id <= norders; id++) {
		unsigned lines = 1 + (unsigned)rnd_below(&s, 3);
		for (unsigned l = 1; l <= lines; l++) {
			w_u64(w, id);
			w_ch(w, '\t');
			w_u64(w, l);
			w_ch(w, '\t');
			w_u64(w, 1 + rnd_below(&s, nprod));
			w_ch(w, '\t');
			w_u64(w, 1 + rnd_below(&s, 20));
			w_ch(w, '\t');
			w_money(w, 100 + rnd_below(&s, 100000));
			w_ch(w, '\n');
		}
	}
	w_str(w, "\\.\n\n");
}

static void gen_documents(struct writer *w, uint64_t n, uint64_t ncust, uint64_t seed)
{
	uint64_t s = seed ^ 0x5555;
	w_str(w, "COPY public.documents (id, customer_id, title, body) FROM stdin;\n");
	for (uint64_t id = 1; id <= n; id++) {
		w_u64(w, id);
		w_ch(w, '\t');
		if (id % 10 == 0)
			w_put(w, "\\N", 2);
		else
			w_u64(w, 1 + rnd_below(&s, ncust));
		w_ch(w, '\t');
		w_words(w, &s, 4);
		w_ch(w, '\t');
		/* 1..10 KB of words; a few of 64 KB+ to be TOASTed out of line */
		unsigned nw = 100 + (unsigned)rnd_below(&s, 1200);
		if (id % 97 == 0)
			nw = 9000;
		w_words(w, &s, nw);
		w_ch(w, '\n');
	}
	w_str(w, "\\.\n\n");
}

static int open_writer(struct writer *w, const char *dir, const char *name, char *path, size_t cap)
{
	snprintf(path, cap, "%s/%s", dir, name);
	w->path = path;
	w->len = 0;
	w->total = 0;
	w->err = 0;
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		int e = errno;
		fprintf(stderr, "pgload gen: could not create \"%s\": %s\n", path, strerror(e));
		return -e;
	}
	return 0;
}

static int close_writer(struct writer *w)
{
	w_flush(w);
	if (close(w->fd) < 0 && !w->err) {
		w->err = errno;
		fprintf(stderr, "pgload gen: could not write \"%s\": %s\n", w->path,
			strerror(errno));
	}
	return w->err ? -w->err : 0;
}

int pgl_gen(const struct pgl_gen_opts *o)
{
	struct writer w = {0};
	char path[4096];
	int ret;
	if (mkdir(o->outdir, 0755) < 0 && errno != EEXIST) {
		ret = -errno;
		fprintf(stderr, "pgload gen: could not create directory \"%s\": %s\n", o->outdir,
			strerror(errno));
		return ret;
	}
	w.buf = malloc(WBUF);
	if (!w.buf)
		return -ENOMEM;

	if ((ret = open_writer(&w, o->outdir, "schema.sql", path, sizeof(path))) < 0)
		goto out;
	w_str(&w, schema_sql);
	if ((ret = close_writer(&w)) < 0)
		goto out;

	if ((ret = open_writer(&w, o->outdir, "post.sql", path, sizeof(path))) < 0)
		goto out;
	w_str(&w, post_sql);
	if ((ret = close_writer(&w)) < 0)
		goto out;

	uint64_t ncust = rows_for(o->scale, N_CUSTOMERS), nprod = rows_for(o->scale, N_PRODUCTS);
	uint64_t nord = rows_for(o->scale, N_ORDERS), ndoc = rows_for(o->scale, N_DOCUMENTS);
	if ((ret = open_writer(&w, o->outdir, "data.sql", path, sizeof(path))) < 0)
		goto out;
	char hdr[256];
	snprintf(hdr, sizeof(hdr),
		 "-- pgload gen: data (scale %g, seed %llu)\n"
		 "SET client_encoding = 'UTF8';\n"
		 "SET standard_conforming_strings = on;\n\n",
		 o->scale, (unsigned long long)o->seed);
	w_str(&w, hdr);
	gen_customers(&w, ncust, o->seed);
	gen_products(&w, nprod, o->seed);
	gen_orders(&w, nord, ncust, o->seed);
	gen_order_items(&w, nord, nprod, o->seed);
	gen_documents(&w, ndoc, ncust, o->seed);
	ret = close_writer(&w);
out:
	free(w.buf);
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: pgload gen --out DIR [--scale N] [--seed S] [--quiet]\n"
		   "\n"
		   "Write schema.sql, data.sql (COPY blocks, about 100 MB per unit of scale) and\n"
		   "post.sql into DIR.  The same scale and seed give the same bytes.\n"
		   "\n"
		   "  -o, --out DIR     output directory (created if missing)\n"
		   "  -s, --scale N     size factor, 0.0001 to 10000 (default 1)\n"
		   "      --seed S      random seed, a non-negative integer (default 1)\n"
		   "  -q, --quiet       do not report sizes and speed on stderr\n");
}

int pgl_cmd_gen(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"out", required_argument, NULL, 'o'},  {"scale", required_argument, NULL, 's'},
	    {"seed", required_argument, NULL, 'S'}, {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},	    {NULL, 0, NULL, 0},
	};
	struct pgl_gen_opts o = {.scale = 1.0, .seed = 1};
	bool quiet = false;
	char *end;
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "o:s:qh", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			o.outdir = optarg;
			break;
		case 's':
			errno = 0;
			o.scale = strtod(optarg, &end);
			if (errno || *end || end == optarg ||
			    !(o.scale >= 0.0001 && o.scale <= 10000)) {
				fprintf(stderr,
					"pgload gen: invalid --scale \"%s\": must be a number from "
					"0.0001 to 10000\n",
					optarg);
				return 1;
			}
			break;
		case 'S':
			errno = 0;
			o.seed = strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg || optarg[0] == '-') {
				fprintf(stderr,
					"pgload gen: invalid --seed \"%s\": must be a non-negative "
					"integer below 2^64\n",
					optarg);
				return 1;
			}
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Try \"pgload gen --help\".\n");
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pgload gen: unexpected argument \"%s\"\n", argv[optind]);
		return 1;
	}
	if (!o.outdir) {
		fprintf(stderr, "pgload gen: --out DIR is required\n");
		return 1;
	}
	double t0 = pgl_now();
	if (pgl_gen(&o) < 0)
		return 1;
	double el = pgl_now() - t0;
	if (!quiet) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof(path), "%s/data.sql", o.outdir);
		double mb = stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0;
		fprintf(stderr,
			"pgload gen: wrote %s/{schema,data,post}.sql: data %.1f MB in %.2f s "
			"(%.0f MB/s)\n",
			o.outdir, mb, el, el > 0 ? mb / el : 0.0);
	}
	return 0;
}
