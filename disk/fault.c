/*
 * fault.c -- injected faults: rules that fail chosen requests on the image,
 * as the kernel's dm-error and dm-flakey targets do, for testing what runs
 * on top of a failing disk.
 *
 * A rule names the kinds of request it fails (read, write, flush, discard,
 * zero), the sectors it covers (a request matches when it touches one; a
 * flush touches none and matches a rule that names flush, which then takes
 * no sectors), the nth matching request from which it fails them, how many
 * it fails (count) or for how long from its first fault (for), and how:
 * EIO, ENOSPC, or "lost" (acknowledged as done and not performed: a disk
 * that drops a write, or a flush, on the floor).  The text of a rule is
 * "key=value" words (docs/pgdisk.md, "Fault injection"); the listing
 * prints each in the same form, so that it can be given back.
 *
 * What must stay true: a request an injected fault fails is not performed
 * (the image never holds a failed or lost write) and never reaches the
 * write log as performed (dev.c logs a fault record instead); a rule
 * outside the disk, or malformed, is refused whole, naming the word at
 * fault, and a control write with one refused line changes nothing; the
 * rules are touched by the session thread only, and nothing here
 * allocates but the listing (made at open, like MOUNTPOINT/stats).
 */
#include "pgdisk_i.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#define ALL_OPS ((1u << PGD_NOPS) - 1)

static const char *const op_names[PGD_NOPS] = {
    [PGD_READ] = "read",       [PGD_WRITE] = "write", [PGD_FLUSH] = "flush",
    [PGD_DISCARD] = "discard", [PGD_ZERO] = "zero",
};

const char *pgd_op_name(enum pgd_op op)
{
	return op < PGD_NOPS ? op_names[op] : "?";
}

/* the error names a rule takes and the listing prints */
static const struct {
	const char *name;
	int err;
} errs[] = {{"eio", EIO}, {"enospc", ENOSPC}, {"lost", 0}};

static const char *err_name(int err)
{
	size_t i;

	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		if (errs[i].err == err)
			return errs[i].name;
	return "?";
}

void pgd_fault_init(struct pgd_faults *f, uint64_t disk_size)
{
	memset(f, 0, sizeof(*f));
	f->next_id = 1;
	f->disk_size = disk_size;
}

unsigned pgd_fault_rules(const struct pgd_faults *f)
{
	unsigned i, n = 0;

	for (i = 0; i < PGD_MAX_RULES; i++)
		n += f->rule[i].id != 0;
	return n;
}

/* ---- the text of a rule ---------------------------------------------------- */

/* parse_u64() -- all of @s as a whole number: 0, or -1. */
static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return *end || errno ? -1 : 0;
}

/* parse_ops() -- "read,write,...", or "all". */
static int parse_ops(const char *s, unsigned *ops)
{
	char word[16];
	int op;

	*ops = 0;
	while (*s) {
		size_t n = strcspn(s, ",");

		if (n == 0 || n >= sizeof(word))
			return -1;
		memcpy(word, s, n);
		word[n] = '\0';
		if (strcmp(word, "all") == 0) {
			*ops |= ALL_OPS;
		} else {
			for (op = 0; op < PGD_NOPS && strcmp(word, pgd_op_name(op)) != 0; op++)
				;
			if (op == PGD_NOPS)
				return -1;
			*ops |= 1u << op;
		}
		s += n + (s[n] == ',');
		if (s[-1] == ',' && !*s)
			return -1;
	}
	return *ops ? 0 : -1;
}

/* parse_duration() -- "N" (seconds), "Nms", "Ns", "Nm", more than 0. */
static int parse_duration(const char *s, uint64_t *ns)
{
	char num[32];
	uint64_t v, unit = 1000000000u;
	size_t n = strspn(s, "0123456789");

	if (n == 0 || n >= sizeof(num))
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	if (strcmp(s + n, "ms") == 0)
		unit = 1000000u;
	else if (strcmp(s + n, "m") == 0)
		unit = 60000000000u;
	else if (s[n] && strcmp(s + n, "s") != 0)
		return -1;
	if (parse_u64(num, &v) < 0 || v == 0 || v > UINT64_MAX / unit)
		return -1;
	*ns = v * unit;
	return 0;
}

/* parse_sectors() -- "A-B" (inclusive), "A+N" (N sectors) or "A". */
static int parse_sectors(const char *s, uint64_t *first, uint64_t *last)
{
	char a[32];
	size_t n = strspn(s, "0123456789");
	uint64_t v;

	if (n == 0 || n >= sizeof(a))
		return -1;
	memcpy(a, s, n);
	a[n] = '\0';
	if (parse_u64(a, first) < 0)
		return -1;
	if (!s[n]) {
		*last = *first;
		return 0;
	}
	if (parse_u64(s + n + 1, &v) < 0)
		return -1;
	if (s[n] == '-' && v >= *first)
		*last = v;
	else if (s[n] == '+' && v > 0 && v - 1 <= UINT64_MAX - *first)
		*last = *first + v - 1;
	else
		return -1;
	return 0;
}

/* parse_rule() -- @text into @r (its runtime fields zero).  0, or -EINVAL
 * with the word at fault and the reason in @err. */
static int parse_rule(const struct pgd_faults *f, const char *text, struct pgd_fault_rule *r,
		      char *err, size_t errlen)
{
	static const char *const keys[] = {"op", "sectors", "nth", "count", "for", "error"};
	const uint64_t nsectors = f->disk_size / PGD_SECTOR;
	char buf[PGD_RULE_MAX], *save = NULL, *w;
	unsigned given = 0;
	size_t k;

	memset(r, 0, sizeof(*r));
	r->nth = 1;
	r->err = EIO;
	r->last = nsectors - 1;
	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, errlen, "longer than %d bytes", PGD_RULE_MAX - 1);
		return -EINVAL;
	}
	strcpy(buf, text);
	for (w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		char *v = strchr(w, '=');
		bool ok;

		if (v)
			*v++ = '\0';
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]) && strcmp(w, keys[k]) != 0; k++)
			;
		if (!v || k == sizeof(keys) / sizeof(keys[0])) {
			snprintf(err, errlen,
				 "\"%s\" is not KEY=VALUE with KEY one of op, sectors, nth, count, "
				 "for, error",
				 w);
			return -EINVAL;
		}
		if (given & (1u << k)) {
			snprintf(err, errlen, "%s= is given twice", w);
			return -EINVAL;
		}
		given |= 1u << k;
		switch (k) {
		case 0:
			ok = parse_ops(v, &r->ops) == 0;
			break;
		case 1:
			ok = parse_sectors(v, &r->first, &r->last) == 0;
			if (ok && r->last >= nsectors) {
				snprintf(
				    err, errlen,
				    "sectors=%s: beyond the disk, whose last sector is %" PRIu64
				    " (%" PRIu64 " bytes)",
				    v, nsectors - 1, f->disk_size);
				return -EINVAL;
			}
			break;
		case 2:
			ok = parse_u64(v, &r->nth) == 0 && r->nth > 0;
			break;
		case 3:
			ok = parse_u64(v, &r->count) == 0;
			break;
		case 4:
			ok = strcmp(v, "0") == 0 || parse_duration(v, &r->for_ns) == 0;
			break;
		default:
			for (ok = false, k = 0; k < sizeof(errs) / sizeof(errs[0]) && !ok; k++)
				if (strcmp(v, errs[k].name) == 0) {
					r->err = errs[k].err;
					ok = true;
				}
			break;
		}
		if (!ok) {
			static const char *const want[] = {
			    "read, write, flush, discard, zero or all, separated by commas",
			    "FIRST-LAST, FIRST+COUNT or one sector, in 512-byte sectors",
			    "a whole number of at least 1",
			    "a whole number (0: no limit)",
			    "a duration: N, Ns, Nms or Nm (0: for good)",
			    "eio, enospc or lost"};

			snprintf(err, errlen, "%s=%s: not %s", w, v,
				 want[strcmp(w, "op") == 0	  ? 0
				      : strcmp(w, "sectors") == 0 ? 1
				      : strcmp(w, "nth") == 0	  ? 2
				      : strcmp(w, "count") == 0	  ? 3
				      : strcmp(w, "for") == 0	  ? 4
								  : 5]);
			return -EINVAL;
		}
	}
	if (!(given & 1u)) {
		snprintf(err, errlen, "no op= (the kinds of request it fails)");
		return -EINVAL;
	}
	if ((r->ops & (1u << PGD_FLUSH)) && (given & 2u)) {
		snprintf(err, errlen,
			 "a flush covers no sectors: a rule naming flush takes no sectors= "
			 "(give flushes a rule of their own)");
		return -EINVAL;
	}
	if (r->err == 0 && (r->ops & (1u << PGD_READ))) {
		snprintf(err, errlen,
			 "error=lost: a read cannot be lost (lost is for write, "
			 "flush, discard and zero)");
		return -EINVAL;
	}
	return 0;
}

/* format_rule() -- @r as a rule's text (what parse_rule() reads back). */
static void format_rule(const struct pgd_fault_rule *r, char *buf, size_t len)
{
	size_t n = 0;
	int op;

	n += (size_t)snprintf(buf + n, len - n, "op=");
	for (op = 0; op < PGD_NOPS && n < len; op++)
		if (r->ops & (1u << op))
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      buf[n - 1] == '=' ? "" : ",", pgd_op_name(op));
	if (n < len && !(r->ops & (1u << PGD_FLUSH)))
		n += (size_t)snprintf(buf + n, len - n, " sectors=%" PRIu64 "-%" PRIu64, r->first,
				      r->last);
	if (n < len)
		n += (size_t)snprintf(buf + n, len - n, " nth=%" PRIu64 " count=%" PRIu64, r->nth,
				      r->count);
	if (n < len && r->for_ns % 1000000000u == 0)
		n += (size_t)snprintf(buf + n, len - n, " for=%" PRIu64 "s",
				      r->for_ns / 1000000000u);
	else if (n < len)
		n += (size_t)snprintf(buf + n, len - n, " for=%" PRIu64 "ms", r->for_ns / 1000000u);
	if (n < len)
		snprintf(buf + n, len - n, " error=%s", err_name(r->err));
}

/* ---- the table ------------------------------------------------------------- */

static struct pgd_fault_rule *free_slot(struct pgd_faults *f)
{
	unsigned i;

	for (i = 0; i < PGD_MAX_RULES; i++)
		if (!f->rule[i].id)
			return &f->rule[i];
	return NULL;
}

static struct pgd_fault_rule *rule_by_id(struct pgd_faults *f, unsigned id)
{
	unsigned i;

	for (i = 0; i < PGD_MAX_RULES; i++)
		if (id && f->rule[i].id == id)
			return &f->rule[i];
	return NULL;
}

int pgd_fault_add(struct pgd_faults *f, const char *text, char *err, size_t errlen)
{
	struct pgd_fault_rule r, *slot;
	char canon[PGD_RULE_MAX];
	int ret = parse_rule(f, text, &r, err, errlen);

	if (ret < 0)
		return ret;
	slot = free_slot(f);
	if (!slot) {
		snprintf(err, errlen, "no room for another rule (%d at most): clear one first",
			 PGD_MAX_RULES);
		return -ENOSPC;
	}
	r.id = f->next_id++;
	*slot = r;
	format_rule(slot, canon, sizeof(canon));
	log_msg(LOG_NOTICE, "fault rule %u added: %s", slot->id, canon);
	return (int)slot->id;
}

/* log_end() -- a rule cleared or over: what it did. */
static void log_end(struct pgd_fault_rule *r, const char *what)
{
	char canon[PGD_RULE_MAX];

	format_rule(r, canon, sizeof(canon));
	log_msg(LOG_NOTICE,
		"fault rule %u %s (%s): %" PRIu64 " faults injected, %" PRIu64 " requests matched",
		r->id, what, canon, r->hits, r->seen);
	r->ended_logged = true;
}

/* What a control write's first pass has checked so far: the slots the
 * lines before would clear, and the room left. */
struct dry {
	uint32_t cleared; /* 1 << slot */
	unsigned room;
};

/* one_line() -- a control line: applied, or (@dry, the first pass) only
 * checked against what the lines before it would do.  0, or -errno with
 * the reason in @err. */
static int one_line(struct pgd_faults *f, char *line, struct dry *dry, char *err, size_t errlen)
{
	struct pgd_fault_rule r, *c;
	unsigned long id;
	char *end;
	unsigned i;
	int ret;

	while (*line == ' ' || *line == '\t')
		line++;
	if (strncmp(line, "add ", 4) == 0) {
		ret = parse_rule(f, line + 4, &r, err, errlen);
		if (ret < 0 || !dry)
			return ret < 0					     ? ret
			       : pgd_fault_add(f, line + 4, err, errlen) < 0 ? -EIO
									     : 0;
		if (dry->room == 0) {
			snprintf(err, errlen,
				 "no room for another rule (%d at most): clear one first",
				 PGD_MAX_RULES);
			return -ENOSPC;
		}
		dry->room--;
		return 0;
	}
	if (strcmp(line, "clear all") == 0) {
		for (i = 0; i < PGD_MAX_RULES; i++) {
			if (!f->rule[i].id)
				continue;
			if (dry) {
				dry->room += !(dry->cleared & (1u << i));
				dry->cleared |= 1u << i;
			} else {
				log_end(&f->rule[i], "cleared");
				f->rule[i].id = 0;
			}
		}
		return 0;
	}
	if (strncmp(line, "clear ", 6) == 0) {
		errno = 0;
		id = strtoul(line + 6, &end, 10);
		c = line[6] >= '0' && line[6] <= '9' && !*end && !errno
			? rule_by_id(f, (unsigned)id)
			: NULL;
		if (!c || (dry && (dry->cleared & (1u << (c - f->rule))))) {
			snprintf(err, errlen,
				 "no rule %s to clear (cat the control file: rule ID ...)",
				 line + 6);
			return -ENOENT;
		}
		if (dry) {
			dry->cleared |= 1u << (c - f->rule);
			dry->room++;
		} else {
			log_end(c, "cleared");
			c->id = 0;
		}
		return 0;
	}
	snprintf(err, errlen, "not \"add RULE\", \"clear ID\" or \"clear all\"");
	return -EINVAL;
}

int pgd_fault_control(struct pgd_faults *f, const char *buf, size_t len)
{
	char text[4096], err[2 * PGD_RULE_MAX] = "", *line, *next;
	struct dry dry = {.room = PGD_MAX_RULES - pgd_fault_rules(f)};
	int pass, ret = 0;

	if (len >= sizeof(text)) {
		snprintf(f->refused, sizeof(f->refused),
			 "a write of %zu bytes: the control file takes at most %zu at once", len,
			 sizeof(text) - 1);
		log_msg(LOG_WARNING, "control: refused %s", f->refused);
		return -EFBIG;
	}
	/* checked whole first, then applied: all of it or nothing */
	for (pass = 0; pass < 2 && ret == 0; pass++) {
		memcpy(text, buf, len);
		text[len] = '\0';
		for (line = text; line && ret == 0; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = '\0';
			if (!*line || *line == '#')
				continue;
			ret = one_line(f, line, pass == 0 ? &dry : NULL, err, sizeof(err));
			if (ret < 0) {
				snprintf(f->refused, sizeof(f->refused), "\"%.*s\": %.200s",
					 PGD_RULE_MAX, line, err);
				log_msg(LOG_WARNING, "control: refused %s", f->refused);
			}
		}
	}
	return ret;
}

/* matches() -- @op of [@off, @off + @len) touches @r. */
static bool matches(const struct pgd_fault_rule *r, enum pgd_op op, uint64_t off, uint64_t len)
{
	if (!r->id || !(r->ops & (1u << op)))
		return false;
	if (op == PGD_FLUSH)
		return true;
	return len > 0 && off / PGD_SECTOR <= r->last && (off + len - 1) / PGD_SECTOR >= r->first;
}

/* over() -- @r fails no more: its count or its time is used up. */
static bool over(const struct pgd_fault_rule *r, uint64_t now_ns)
{
	return (r->count && r->hits >= r->count) ||
	       (r->for_ns && r->hits && now_ns - r->first_ns >= r->for_ns);
}

int pgd_fault_check(struct pgd_faults *f, enum pgd_op op, uint64_t off, uint64_t len,
		    uint64_t now_ns)
{
	struct pgd_fault_rule *fire = NULL;
	unsigned i;

	for (i = 0; i < PGD_MAX_RULES; i++) {
		struct pgd_fault_rule *r = &f->rule[i];

		if (!matches(r, op, off, len))
			continue;
		r->seen++;
		if (r->seen < r->nth || over(r, now_ns)) {
			if (over(r, now_ns) && !r->ended_logged)
				log_end(r, "is over");
			continue;
		}
		if (!fire || r->id < fire->id)
			fire = r;
	}
	if (!fire)
		return 0;
	if (fire->hits++ == 0) {
		char canon[PGD_RULE_MAX];

		fire->first_ns = now_ns;
		format_rule(fire, canon, sizeof(canon));
		log_msg(LOG_WARNING,
			"fault rule %u (%s): first fault: %s of %" PRIu64
			" bytes at sector %" PRIu64 " %s",
			fire->id, canon, pgd_op_name(op), len, off / PGD_SECTOR,
			fire->err ? "failed" : "acknowledged, not performed");
	}
	if (fire->count && fire->hits == fire->count)
		log_end(fire, "is over");
	return fire->err ? -fire->err : PGD_FAULT_LOST;
}

char *pgd_fault_text(struct pgd_faults *f, size_t *len)
{
	uint64_t now = ios_now_ns();
	char *buf = NULL, canon[PGD_RULE_MAX];
	FILE *out = open_memstream(&buf, len);
	unsigned id, i;

	if (!out)
		return NULL;
	fprintf(out, "# pgdisk fault rules: write \"add RULE\", \"clear ID\" or \"clear all\"\n");
	for (id = 1; id < f->next_id; id++)
		for (i = 0; i < PGD_MAX_RULES; i++) {
			struct pgd_fault_rule *r = &f->rule[i];

			if (r->id != id)
				continue;
			format_rule(r, canon, sizeof(canon));
			fprintf(out, "rule %u %s seen=%" PRIu64 " faults=%" PRIu64 " state=%s\n",
				r->id, canon, r->seen, r->hits,
				over(r, now)	       ? "over"
				: r->seen + 1 < r->nth ? "waiting"
						       : "active");
		}
	if (f->refused[0])
		fprintf(out, "# last refused: %s\n", f->refused);
	if (fclose(out) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
