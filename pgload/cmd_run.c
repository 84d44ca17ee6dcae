/*
 * cmd_run.c -- `pgload run`: replay scripts against PostgreSQL and time them.
 *
 * A run creates a fresh database, checkpoints, then executes up to three
 * phases (schema, data, post-data), each one script, each timed on its own
 * (runner.c), and reports the runs (report.c).  This file is the command:
 * its options, the server (embedded, or --dsn), the runs and the clean-up.
 *
 * What must stay true:
 *  - Every argument is checked, and every input file read far enough to
 *    know it is a SQL script, before any server or database is made.
 *  - A broken connection ends the run with exit status 2, and the embedded
 *    server is still cleaned up.
 *  - An interrupt stops the run in whatever step it is (each step starts
 *    with pgl_step(), which names it), cancels what runs, and the clean-up
 *    then removes what the run made: the embedded server, or with --dsn the
 *    database this process created.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgload.h"
#include "pgload_i.h"
#include "run_i.h"

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: pgload run [--schema FILE] [--data FILE] [--post FILE] [OPTIONS]\n"
	       "\n"
	       "Replay psql scripts (pg_dump -Fp output works; lz4 frames and \"-\" for stdin\n"
	       "are accepted) into a fresh database per run and time each phase.\n"
	       "\n"
	       "inputs (at least one):\n"
	       "  -s, --schema FILE        schema phase script\n"
	       "  -d, --data FILE          data phase script (a whole dump works alone)\n"
	       "  -p, --post FILE          post-data phase script (indexes, constraints)\n"
	       "runs:\n"
	       "  -n, --runs N             measured runs (1..1000, default 1)\n"
	       "  -w, --warmup N           unmeasured runs first (0..100, default 0)\n"
	       "      --db NAME            database to (re)create per run (default pgload)\n"
	       "      --force              drop --db even if pgload did not create it\n"
	       "      --continue-on-error  count errors and go on (default: stop at the first)\n"
	       "  -j, --jobs N             parallel connections for data and post-data (1..64)\n"
	       "      --chunk-mb N         with --jobs, load COPY blocks in chunks of N MB on\n"
	       "                           several connections (default 16, 0 = whole blocks)\n"
	       "      --pipeline           send INSERT/UPDATE/DELETE in libpq pipeline batches\n"
	       "server:\n"
	       "      --dsn CONNINFO       use this server (its database, or postgres, for admin)\n"
	       "      --pgdata DIR         embedded server: cluster directory (absent or empty)\n"
	       "      --pgbin DIR          embedded server: directory of initdb and postgres\n"
	       "      --set NAME=VALUE     embedded server: a server setting (repeatable)\n"
	       "      --on-pgiofs          embedded server: cluster on a pgiofs mount of its own\n"
	       "      --profile NAME       pgiofs profile (pgiofs --profile NAME) or a file\n"
	       "      --pgiofs-bin PATH    pgiofs binary for --on-pgiofs and `pgiofs stat`\n"
	       "                           (default: beside pgload, else on PATH)\n"
	       "output:\n"
	       "      --json FILE          every sample and the settings as JSON (\"-\" = stdout)\n"
	       "      --csv FILE           one row per run and phase\n"
	       "      --label TEXT         label for this configuration in JSON/CSV\n"
	       "  -q, --quiet              no progress or notices on stderr\n"
	       "      --progress           progress on stderr even if it is not a terminal\n"
	       "      --no-progress        no progress line\n"
	       "\n"
	       "Exit status: 0 success, 1 error, 2 aborted (interrupted or server lost).\n");
}

static int parse_int(const char *opt, const char *arg, long min, long max, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || *end || end == arg || v < min || v > max) {
		fprintf(
		    stderr,
		    "pgload run: invalid value \"%s\" for %s: must be an integer from %ld to %ld\n",
		    arg, opt, min, max);
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

/*
 * check_input() -- read the first item of PATH, so that a file that is no
 * SQL script (an archive, a compressed or binary file) fails before any
 * server or database is made.  Pipes are left alone: they read once.
 */
static int check_input(const char *path)
{
	struct pgl_input *in;
	struct pgl_parser *p = NULL;
	struct pgl_item it;
	struct stat st;
	char err[256];
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return 0;
	int ret = pgl_input_open(path, &in, err);
	if (ret < 0) {
		fprintf(stderr, "pgload: %s\n", err);
		return ret;
	}
	if ((ret = pgl_parser_create(in, path, &p)) == 0 && (ret = pgl_parser_next(p, &it)) < 0)
		fprintf(stderr, "pgload: %s\n", pgl_parser_error(p));
	pgl_parser_destroy(p);
	pgl_input_close(in);
	return ret < 0 ? ret : 0;
}

static int parse_opts(int argc, char **argv, struct pgl_opts *o)
{
	enum {
		O_DB = 256,
		O_FORCE,
		O_CONT,
		O_PIPE,
		O_DSN,
		O_PGDATA,
		O_PGBIN,
		O_SET,
		O_JSON,
		O_CSV,
		O_LABEL,
		O_PROGRESS,
		O_NOPROGRESS,
		O_PGIOFS,
		O_PROFILE,
		O_PGIOFS_BIN,
		O_CHUNK
	};
	static const struct option opts[] = {
	    {"schema", required_argument, NULL, 's'},
	    {"data", required_argument, NULL, 'd'},
	    {"post", required_argument, NULL, 'p'},
	    {"runs", required_argument, NULL, 'n'},
	    {"warmup", required_argument, NULL, 'w'},
	    {"jobs", required_argument, NULL, 'j'},
	    {"chunk-mb", required_argument, NULL, O_CHUNK},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"db", required_argument, NULL, O_DB},
	    {"force", no_argument, NULL, O_FORCE},
	    {"continue-on-error", no_argument, NULL, O_CONT},
	    {"pipeline", no_argument, NULL, O_PIPE},
	    {"dsn", required_argument, NULL, O_DSN},
	    {"pgdata", required_argument, NULL, O_PGDATA},
	    {"pgbin", required_argument, NULL, O_PGBIN},
	    {"set", required_argument, NULL, O_SET},
	    {"json", required_argument, NULL, O_JSON},
	    {"csv", required_argument, NULL, O_CSV},
	    {"label", required_argument, NULL, O_LABEL},
	    {"progress", no_argument, NULL, O_PROGRESS},
	    {"no-progress", no_argument, NULL, O_NOPROGRESS},
	    {"on-pgiofs", no_argument, NULL, O_PGIOFS},
	    {"profile", required_argument, NULL, O_PROFILE},
	    {"pgiofs-bin", required_argument, NULL, O_PGIOFS_BIN},
	    {NULL, 0, NULL, 0},
	};
	int ch;
	o->runs = 1;
	o->jobs = 1;
	o->chunk_bytes = 16 << 20;
	o->db = "pgload";
	o->progress = -1;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "s:d:p:n:w:j:qh", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			o->file[PGL_PH_SCHEMA] = optarg;
			break;
		case 'd':
			o->file[PGL_PH_DATA] = optarg;
			break;
		case 'p':
			o->file[PGL_PH_POST] = optarg;
			break;
		case 'n':
			if (parse_int("--runs", optarg, 1, 1000, &o->runs) < 0)
				return -EINVAL;
			break;
		case 'w':
			if (parse_int("--warmup", optarg, 0, 100, &o->warmup) < 0)
				return -EINVAL;
			break;
		case 'j':
			if (parse_int("--jobs", optarg, 1, 64, &o->jobs) < 0)
				return -EINVAL;
			break;
		case O_CHUNK: {
			char *end;
			errno = 0;
			double mb = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(mb >= 0 && mb <= 65536)) {
				fprintf(
				    stderr,
				    "pgload run: invalid value \"%s\" for --chunk-mb: must be a "
				    "number of MB from 0 to 65536\n",
				    optarg);
				return -EINVAL;
			}
			o->chunk_bytes = (uint64_t)(mb * 1048576);
			break;
		}
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case O_DB:
			if (!*optarg || strlen(optarg) > 63) {
				fprintf(stderr, "pgload run: invalid --db \"%s\": 1 to 63 bytes\n",
					optarg);
				return -EINVAL;
			}
			o->db = optarg;
			break;
		case O_FORCE:
			o->force = true;
			break;
		case O_CONT:
			o->cont = true;
			break;
		case O_PIPE:
			o->pipeline = true;
			break;
		case O_DSN:
			o->dsn = optarg;
			break;
		case O_PGDATA:
			o->pgdata = optarg;
			break;
		case O_PGBIN:
			o->pgbin = optarg;
			break;
		case O_SET:
			if (!strchr(optarg, '=') || o->nsettings >= PGL_MAXSETTINGS) {
				fprintf(stderr,
					"pgload run: invalid --set \"%s\": NAME=VALUE expected (at "
					"most %d)\n",
					optarg, PGL_MAXSETTINGS);
				return -EINVAL;
			}
			o->settings[o->nsettings++] = optarg;
			break;
		case O_JSON:
			o->json = optarg;
			break;
		case O_CSV:
			o->csv = optarg;
			break;
		case O_LABEL:
			o->label = optarg;
			break;
		case O_PROGRESS:
			o->progress = 1;
			break;
		case O_NOPROGRESS:
			o->progress = 0;
			break;
		case O_PGIOFS:
			o->on_pgiofs = true;
			break;
		case O_PROFILE:
			o->profile = optarg;
			break;
		case O_PGIOFS_BIN:
			if (access(optarg, X_OK) < 0) {
				fprintf(stderr, "pgload run: --pgiofs-bin \"%s\": %s\n", optarg,
					strerror(errno));
				return -EINVAL;
			}
			o->pgiofs_bin = optarg;
			break;
		default:
			fprintf(stderr, "Try \"pgload run --help\".\n");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pgload run: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->file[0] && !o->file[1] && !o->file[2]) {
		fprintf(stderr, "pgload run: give at least one of --schema, --data, --post\n");
		return -EINVAL;
	}
	int nstdin = 0;
	for (int i = 0; i < PGL_NPHASE; i++)
		if (o->file[i] && strcmp(o->file[i], "-") == 0)
			nstdin++;
	if (nstdin > 1 || (nstdin == 1 && o->runs + o->warmup > 1)) {
		fprintf(stderr, "pgload run: stdin (\"-\") can be read once: use it for one input "
				"and one run\n");
		return -EINVAL;
	}
	for (int i = 0; i < PGL_NPHASE; i++) {
		if (o->file[i] && strcmp(o->file[i], "-") != 0 && access(o->file[i], R_OK) < 0) {
			fprintf(stderr, "pgload run: cannot read %s file \"%s\": %s\n",
				pgl_phase_names[i], o->file[i], strerror(errno));
			return -errno;
		}
		if (o->file[i] && strcmp(o->file[i], "-") != 0 && check_input(o->file[i]) < 0)
			return -EINVAL;
	}
	if (o->dsn && (o->pgdata || o->pgbin || o->nsettings || o->on_pgiofs)) {
		fprintf(stderr,
			"pgload run: --dsn excludes --pgdata, --pgbin, --set and --on-pgiofs\n");
		return -EINVAL;
	}
	if (o->profile && !o->on_pgiofs) {
		fprintf(stderr, "pgload run: --profile needs --on-pgiofs\n");
		return -EINVAL;
	}
	if (o->on_pgiofs && o->pgdata) {
		fprintf(stderr, "pgload run: --on-pgiofs puts the cluster on its own mount: "
				"drop --pgdata\n");
		return -EINVAL;
	}
	if (o->progress < 0)
		o->progress = !o->quiet && isatty(STDERR_FILENO);
	return 0;
}

int pgl_cmd_run(int argc, char **argv)
{
	struct pgl_opts o = {0};
	struct pgl_ctx c = {.o = &o};
	int ret = parse_opts(argc, argv, &o);
	int status = 0;
	if (ret != 0)
		return ret > 0 ? 0 : 1;
	signal(SIGPIPE, SIG_IGN); /* a closed stdout must not skip the clean-up */
	if (pgl_signals_start() < 0) {
		fprintf(stderr, "pgload: cannot set up signal handling\n");
		return 1;
	}

	char *admin_db = NULL;
	if (o.dsn) {
		PQconninfoOption *opts = PQconninfoParse(o.dsn, NULL);
		if (!opts) {
			fprintf(stderr, "pgload: invalid --dsn \"%s\"\n", o.dsn);
			return 1;
		}
		for (PQconninfoOption *op = opts; op->keyword; op++)
			if (strcmp(op->keyword, "dbname") == 0 && op->val && *op->val)
				admin_db = strdup(op->val);
		PQconninfoFree(opts);
		if (!admin_db)
			admin_db = strdup("postgres");
		c.base = o.dsn;
	} else {
		struct pgl_server_opts so = {
		    .pgbin = o.pgbin,
		    .pgdata = o.pgdata,
		    .quiet = o.quiet,
		    .settings = o.settings,
		    .on_pgiofs = o.on_pgiofs,
		    .profile = o.profile,
		    .pgiofs_bin = o.pgiofs_bin,
		};
		ret = pgl_server_start(&so, &c.server);
		if (ret < 0) {
			status = pgl_exit_status(ret);
			goto out;
		}
		c.base = pgl_server_conninfo(c.server);
		admin_db = strdup("postgres");
	}
	if (admin_db && o.db && strcmp(admin_db, o.db) == 0) {
		fprintf(stderr,
			"pgload: --db \"%s\" is the database pgload administers from; "
			"choose another name\n",
			o.db);
		status = 1;
		goto out;
	}
	if (pgl_step("connect", "connecting to the server")) {
		status = 2;
		goto out;
	}
	c.admin = pgl_connect(c.base, admin_db, NULL, false, !o.quiet);
	if (!c.admin) {
		status = atomic_load(&pgl_interrupted) ? 2 : 1;
		goto out;
	}
	pgl_server_info(&c);
	pgl_io_setup(&c);
	if (!o.quiet)
		fprintf(stderr, "pgload: PostgreSQL %s, data directory %s (%s)\n", c.server_version,
			c.datadir[0] ? c.datadir : "(not visible)", c.fstype);

	int total = o.warmup + o.runs;
	c.results = calloc((size_t)total, sizeof(*c.results));
	if (!c.results) {
		status = 1;
		goto out;
	}
	if (o.progress)
		pgl_progress_start(&c);
	for (int run = 0; run < total; run++) {
		struct pgl_run_result *rr = &c.results[run];
		rr->warmup = run < o.warmup;
		c.progress_run = run;
		pgl_step_context("run %d/%d%s", run + 1, total, rr->warmup ? ", a warmup" : "");
		if ((ret = pgl_prepare_db(&c)) < 0) {
			status = pgl_exit_status(ret);
			break;
		}
		for (int ph = 0; ph < PGL_NPHASE && ret >= 0; ph++)
			if (o.file[ph])
				ret = pgl_run_phase(&c, (enum pgl_phase)ph, &rr->ph[ph]);
		if (ret < 0) {
			status = pgl_exit_status(ret);
			break;
		}
		c.nresults = run + 1;
		if (!o.quiet)
			pgl_progress_run_done(&c, run);
	}
	pgl_progress_stop(&c);
	pgl_step_context(NULL);
	if (status == 0 || c.nresults > 0) {
		pgl_step("report", "writing the report");
		pgl_report_summary(&c, stdout);
		if (o.json && pgl_report_json(&c, o.json) < 0 && status == 0)
			status = 1;
		if (o.csv && pgl_report_csv(&c, o.csv) < 0 && status == 0)
			status = 1;
	}
out:
	pgl_step_context(NULL);
	pgl_step("cleanup", "cleaning up");
	bool intr = atomic_load(&pgl_interrupted) != 0;
	if (intr && c.admin && c.db_created && o.dsn)
		pgl_drop_run_db(&c);
	else if (status == 1 && c.db_created && o.dsn)
		fprintf(stderr, "pgload: database \"%s\" is kept as the failed run left it\n",
			o.db);
	pgl_disconnect(c.admin);
	if (c.server && pgl_server_stop(c.server) < 0 && status == 0)
		status = 1;
	if (intr) {
		char step[512];
		pgl_interrupted_step(step, sizeof(step));
		fprintf(stderr, "pgload: interrupted while %s; %s\n", step,
			!o.dsn	       ? "the embedded server is stopped and its files are removed"
			: c.db_created ? "could not drop the run's database"
				       : "nothing of the run is left on the server");
	}
	if (c.results) {
		for (int i = 0; i < o.warmup + o.runs; i++)
			for (int ph = 0; ph < PGL_NPHASE; ph++)
				pgl_tables_free(&c.results[i].ph[ph].tables);
		free(c.results);
	}
	free(admin_db);
	if (atomic_load(&pgl_interrupted))
		status = 2; /* whatever failed on the way, the run was aborted */
	return status;
}
