/*
 * cmd_run.c -- `pgload run`: replay scripts against PostgreSQL and time them.
 *
 * A run creates a fresh database, checkpoints, then executes up to three
 * phases (schema, data, post-data), each one script, each timed on its own
 * (runner.c), and reports the runs (report.c).  This file is the command:
 * its options, the server (embedded, or one given as to psql), the runs and
 * the clean-up.
 *
 * What must stay true:
 *  - Every argument is checked, and every input file read far enough to
 *    know it is a SQL script, before any server or database is made.
 *  - A broken connection ends the run with exit status 2, and the embedded
 *    server is still cleaned up.
 *  - An interrupt stops the run in whatever step it is (each step starts
 *    with pgl_step(), which names it), cancels what runs, and the clean-up
 *    then removes what the run made: the embedded server, or on a given
 *    server the database this process created.
 *  - A server given by an option or a PG* variable naming one (server_env)
 *    is used as given: libpq reads the rest (PG* variables, the service
 *    file, ~/.pgpass); pgload never starts one then.
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
	    f,
	    "usage: pgload run [CONNECTION] [-f FILE | --schema FILE | --post FILE]... [OPTIONS]\n"
	    "\n"
	    "Replay psql scripts (pg_dump -Fp output works; lz4 frames and \"-\" for stdin\n"
	    "are accepted) into a fresh database per run and time each phase.\n"
	    "\n"
	    "inputs (at least one):\n"
	    "      --schema FILE        schema phase script\n"
	    "  -f, --data FILE          data phase script (a whole dump works alone)\n"
	    "      --post FILE          post-data phase script (indexes, constraints)\n"
	    "connection (as psql and pgbench; libpq reads PG* variables and ~/.pgpass):\n"
	    "  -h, --host HOST          server host or socket directory\n"
	    "  -p, --port PORT          server port\n"
	    "  -U, --username USER      user name\n"
	    "  -d, --dbname DBNAME      database to connect to (default postgres), or a\n"
	    "                           connection string; each run loads into --db\n"
	    "      --dsn CONNINFO       a connection string (the same as -d CONNINFO)\n"
	    "  A server named by one of these options, or by PGHOST, PGHOSTADDR, PGPORT or\n"
	    "  PGSERVICE in the environment, is used; otherwise pgload starts an embedded\n"
	    "  server of its own (PGUSER, PGDATABASE, PGPASSWORD alone do not name one).\n"
	    "embedded server:\n"
	    "      --embedded           start it even if PGHOST, PGPORT... are set\n"
	    "      --pgdata DIR         cluster directory (absent or empty)\n"
	    "      --pgbin DIR          directory of initdb and postgres\n"
	    "      --set NAME=VALUE     a server setting (repeatable)\n"
	    "      --on-pgiofs          the cluster on a pgiofs mount of its own\n"
	    "      --profile NAME       pgiofs profile (pgiofs --profile NAME) or a file\n"
	    "      --pgiofs-bin PATH    pgiofs binary for --on-pgiofs and `pgiofs stat`\n"
	    "                           (default: beside pgload, else on PATH)\n"
	    "  (--pgdata, --pgbin, --set and --on-pgiofs imply --embedded)\n"
	    "runs:\n"
	    "  -n, --runs N             measured runs (1..1000, default 1)\n"
	    "  -w, --warmup N           unmeasured runs first (0..100, default 0)\n"
	    "      --db NAME            database pgload (re)creates and loads per run\n"
	    "                           (default pgload; not the -d database)\n"
	    "      --force              drop --db even if pgload did not create it\n"
	    "      --continue-on-error  count errors and go on (default: stop at the first)\n"
	    "  -j, --jobs N             parallel connections for data and post-data (1..64)\n"
	    "      --chunk-mb N         with --jobs, load COPY blocks in chunks of N MB on\n"
	    "                           several connections (default 16, 0 = whole blocks)\n"
	    "      --pipeline           send INSERT/UPDATE/DELETE in libpq pipeline batches\n"
	    "output:\n"
	    "      --json FILE          every sample and the settings as JSON (\"-\" = stdout)\n"
	    "      --csv FILE           one row per run and phase\n"
	    "      --label TEXT         label for this configuration in JSON/CSV\n"
	    "  -P, --progress=SEC       a progress line every SEC seconds on stderr (as\n"
	    "                           pgbench -P), even if it is not a terminal\n"
	    "      --progress           the redrawn progress line even if stderr is not a\n"
	    "                           terminal (the default on a terminal)\n"
	    "      --no-progress        no progress line\n"
	    "  -q, --quiet              no progress or notices on stderr\n"
	    "  -V, --version            print the version and exit\n"
	    "  -?, --help               print this help and exit\n"
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
		fprintf(stderr, "pgload run: %s\n", err);
		return ret;
	}
	if ((ret = pgl_parser_create(in, path, &p)) == 0 && (ret = pgl_parser_next(p, &it)) < 0)
		fprintf(stderr, "pgload run: %s\n", pgl_parser_error(p));
	pgl_parser_destroy(p);
	pgl_input_close(in);
	return ret < 0 ? ret : 0;
}

/*
 * Environment variables that name a server.  With one of them set (and no
 * option for the embedded server), `pgload run` uses that server, as psql
 * would; PGUSER, PGDATABASE, PGPASSWORD and the others only say how to
 * connect, and libpq applies them to any server.
 */
static const char *const server_env[] = {"PGHOST", "PGHOSTADDR", "PGPORT", "PGSERVICE", NULL};

/* parse_port() -- -p: a port, or a comma-separated list of them (libpq's multi-host form). */
static int parse_port(const char *arg)
{
	const char *p = arg;
	do {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (errno || end == p || v < 1 || v > 65535 || (*end && *end != ',')) {
			fprintf(stderr,
				"pgload run: invalid value \"%s\" for -p/--port: must be a port "
				"number from 1 to 65535\n",
				arg);
			return -EINVAL;
		}
		p = *end ? end + 1 : end;
	} while (*p);
	return 0;
}

/*
 * choose_server() -- settle o->external: a server named by an option or the
 * environment, or the embedded one.  Options contradicting each other are
 * an error naming both.
 */
static int choose_server(struct pgl_opts *o)
{
	const char *conn = o->dsn      ? "--dsn"
			   : o->host   ? "-h/--host"
			   : o->port   ? "-p/--port"
			   : o->user   ? "-U/--username"
			   : o->dbname ? "-d/--dbname"
				       : NULL;
	const char *emb = o->embedded	 ? "--embedded"
			  : o->pgdata	 ? "--pgdata"
			  : o->pgbin	 ? "--pgbin"
			  : o->nsettings ? "--set"
			  : o->on_pgiofs ? "--on-pgiofs"
					 : NULL;
	if (o->dbname && !pgl_is_conninfo(o->dbname)) {
		struct stat st;
		if (stat(o->dbname, &st) == 0 && S_ISREG(st.st_mode)) {
			fprintf(stderr,
				"pgload run: -d \"%s\" is a file, but -d names the database to "
				"connect to (as in psql): give the data script with -f/--data\n",
				o->dbname);
			return -EINVAL;
		}
	}
	if (o->dsn && (o->host || o->port || o->user || o->dbname)) {
		fprintf(stderr,
			"pgload run: --dsn and %s both say where to connect: give one of them "
			"(-d also takes a connection string)\n",
			o->host	  ? "-h/--host"
			: o->port ? "-p/--port"
			: o->user ? "-U/--username"
				  : "-d/--dbname");
		return -EINVAL;
	}
	if (conn && emb) {
		fprintf(stderr,
			"pgload run: %s names a server, and %s is for the embedded server "
			"pgload starts: give one or the other\n",
			conn, emb);
		return -EINVAL;
	}
	o->external = conn != NULL;
	for (int i = 0; !conn && !emb && server_env[i]; i++) {
		const char *v = getenv(server_env[i]);
		if (v && *v) {
			o->external = true;
			if (!o->quiet)
				fprintf(stderr,
					"pgload: using the server of %s=%s (--embedded starts "
					"pgload's own)\n",
					server_env[i], v);
			break;
		}
	}
	return 0;
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
		O_NOPROGRESS,
		O_PGIOFS,
		O_PROFILE,
		O_PGIOFS_BIN,
		O_CHUNK,
		O_SCHEMA,
		O_POST,
		O_EMBEDDED,
		O_HELP
	};
	static const struct option opts[] = {
	    {"schema", required_argument, NULL, O_SCHEMA},
	    {"data", required_argument, NULL, 'f'},
	    {"post", required_argument, NULL, O_POST},
	    {"host", required_argument, NULL, 'h'},
	    {"port", required_argument, NULL, 'p'},
	    {"username", required_argument, NULL, 'U'},
	    {"dbname", required_argument, NULL, 'd'},
	    {"runs", required_argument, NULL, 'n'},
	    {"warmup", required_argument, NULL, 'w'},
	    {"jobs", required_argument, NULL, 'j'},
	    {"chunk-mb", required_argument, NULL, O_CHUNK},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, O_HELP},
	    {"version", no_argument, NULL, 'V'},
	    {"db", required_argument, NULL, O_DB},
	    {"force", no_argument, NULL, O_FORCE},
	    {"continue-on-error", no_argument, NULL, O_CONT},
	    {"pipeline", no_argument, NULL, O_PIPE},
	    {"dsn", required_argument, NULL, O_DSN},
	    {"embedded", no_argument, NULL, O_EMBEDDED},
	    {"pgdata", required_argument, NULL, O_PGDATA},
	    {"pgbin", required_argument, NULL, O_PGBIN},
	    {"set", required_argument, NULL, O_SET},
	    {"json", required_argument, NULL, O_JSON},
	    {"csv", required_argument, NULL, O_CSV},
	    {"label", required_argument, NULL, O_LABEL},
	    {"progress", optional_argument, NULL, 'P'},
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
	opterr = 0; /* its messages would say "run:" */
	while ((ch = getopt_long(argc, argv, ":f:h:p:U:d:n:w:j:P:qVs?", opts, NULL)) != -1) {
		switch (ch) {
		case O_SCHEMA:
			o->file[PGL_PH_SCHEMA] = optarg;
			break;
		case 'f':
			o->file[PGL_PH_DATA] = optarg;
			break;
		case O_POST:
			o->file[PGL_PH_POST] = optarg;
			break;
		case 's':
			fprintf(stderr, "pgload run: -s is not an option: the schema script is "
					"--schema FILE\n");
			return -EINVAL;
		case 'h':
			o->host = optarg;
			break;
		case 'p':
			if (parse_port(optarg) < 0)
				return -EINVAL;
			o->port = optarg;
			break;
		case 'U':
			o->user = optarg;
			break;
		case 'd':
			o->dbname = optarg;
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
		case O_HELP:
			usage(stdout);
			return 1;
		case 'V':
			pgl_print_version();
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
		case O_EMBEDDED:
			o->embedded = true;
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
		case 'P': {
			/* --progress alone: the redrawn line; -P SEC, --progress=SEC: pgbench's */
			o->progress = 1;
			if (!optarg)
				break;
			char *end;
			errno = 0;
			double sec = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(sec >= 0.1 && sec <= 3600)) {
				fprintf(
				    stderr,
				    "pgload run: invalid value \"%s\" for -P/--progress: must be "
				    "a number of seconds from 0.1 to 3600\n",
				    optarg);
				return -EINVAL;
			}
			o->progress_every = sec;
			break;
		}
		case O_NOPROGRESS:
			o->progress = 0;
			o->progress_every = 0;
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
		case ':':
			fprintf(stderr, "pgload run: option \"%s\" needs a value\n",
				argv[optind - 1]);
			fprintf(stderr, "Try \"pgload run --help\".\n");
			return -EINVAL;
		default:
			if (strcmp(argv[optind - 1], "-?") == 0) { /* help, as psql spells it */
				usage(stdout);
				return 1;
			}
			if (optopt && optopt != '?')
				fprintf(stderr, "pgload run: unknown option \"-%c\"\n", optopt);
			else
				fprintf(stderr, "pgload run: unknown option \"%s\"\n",
					argv[optind - 1]);
			fprintf(stderr, "Try \"pgload run --help\".\n");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "pgload run: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	if (choose_server(o) < 0)
		return -EINVAL;
	if (!o->file[0] && !o->file[1] && !o->file[2]) {
		fprintf(stderr, "pgload run: give at least one of --schema, -f/--data, --post\n");
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
		fprintf(stderr, "pgload run: cannot set up signal handling\n");
		return 1;
	}

	char *admin_db = NULL;
	if (o.external) {
		/* the database to administer from: -d's (or --dsn's), else libpq's default */
		const char *given = o.dsn ? o.dsn : o.dbname;
		if (given && pgl_is_conninfo(given)) {
			if (pgl_conninfo_get(given, "dbname", &admin_db) < 0) {
				fprintf(stderr, "pgload run: invalid connection string \"%s\"\n",
					given);
				return 1;
			}
		} else if (given) {
			admin_db = strdup(given);
		}
		if (!admin_db) {
			/* PGDATABASE or the service's; not libpq's last resort, the user name */
			PQconninfoOption *def = PQconndefaults();
			for (PQconninfoOption *op = def; op && op->keyword; op++)
				if (strcmp(op->keyword, "dbname") == 0 && op->val && *op->val)
					admin_db = strdup(op->val);
			PQconninfoFree(def);
		}
		if (!admin_db)
			admin_db = strdup("postgres");
		c.base = (struct pgl_target){
		    .conninfo = given, .host = o.host, .port = o.port, .user = o.user};
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
		c.base.conninfo = pgl_server_conninfo(c.server);
		admin_db = strdup("postgres");
	}
	if (admin_db && o.db && strcmp(admin_db, o.db) == 0) {
		fprintf(stderr,
			"pgload run: --db \"%s\" is also the database pgload connects to (-d, or "
			"PGDATABASE), and each run drops and recreates --db: choose another --db\n",
			o.db);
		status = 1;
		goto out;
	}
	if (pgl_step("connect", "connecting to the server")) {
		status = 2;
		goto out;
	}
	c.admin = pgl_connect(&c.base, admin_db, NULL, false, !o.quiet);
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
	if (intr && c.admin && c.db_created && o.external)
		pgl_drop_run_db(&c);
	else if (status == 1 && c.db_created && o.external)
		fprintf(stderr, "pgload: database \"%s\" is kept as the failed run left it\n",
			o.db);
	pgl_disconnect(c.admin);
	if (c.server && pgl_server_stop(c.server) < 0 && status == 0)
		status = 1;
	if (intr) {
		char step[512];
		pgl_interrupted_step(step, sizeof(step));
		fprintf(stderr, "pgload run: interrupted while %s; %s\n", step,
			!o.external    ? "the embedded server is stopped and its files are removed"
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
