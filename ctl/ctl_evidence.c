/* SPDX-License-Identifier: MIT */
/*
 * ctl_evidence.c - `ledgerctl evidence` and `ledgerctl transcript`
 * (ledgerctl(1) COMMANDS): verify the ledger first (against the daemon for
 * a mounted case, with the host key otherwise), then fold it into host
 * evidence and, for a transcript, run the gate.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_verify.h"
#include "evidence.h"
#include "ledger.h"
#include "transcript.h"

#define EV_USAGE "usage: ledgerctl evidence LEDGER [--turn N] [--key FILE]\n"
#define TR_USAGE                                                                     \
	"usage: ledgerctl transcript LEDGER --target FILE [--turn N] [--key FILE]\n" \
	"                            [--replace]\n"

/* How often a mounted case is re-read when rows moved on meanwhile. */
#define EV_MOUNT_TRIES 10

/* Exit statuses shared by both commands (ledgerctl(1) EXIT STATUS). */
enum { EV_OK = 0, EV_GATE = 1, EV_USAGE_ERR = 2, EV_UNVERIFIED = 3 };

struct ev_args {
	const char *cmd;
	const char *ledger;
	const char *key;
	const char *target;
	unsigned long turn;
	bool replace; /* ASSERT's gate: replace target tool events */
};

static int parse_turn(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	if (*s < '1' || *s > '9')
		return -1;
	*out = strtoul(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int parse_args(int argc, char **argv, struct ev_args *a, bool target)
{
	const char *usage = target ? TR_USAGE : EV_USAGE;
	const char *turn = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		const char *s = argv[i];
		const char **slot = NULL;

		if (!strcmp(s, "--turn"))
			slot = &turn;
		else if (!strcmp(s, "--key"))
			slot = &a->key;
		else if (target && !strcmp(s, "--target"))
			slot = &a->target;
		if (slot) {
			if (i + 1 >= argc) {
				fprintf(stderr,
					"ledgerctl %s: %s needs a value\n%s",
					a->cmd, s, usage);
				return -1;
			}
			*slot = argv[++i];
		} else if (!strncmp(s, "--turn=", 7)) {
			turn = s + 7;
		} else if (!strncmp(s, "--key=", 6)) {
			a->key = s + 6;
		} else if (target && !strncmp(s, "--target=", 9)) {
			a->target = s + 9;
		} else if (target && !strcmp(s, "--replace")) {
			a->replace = true;
		} else if (s[0] == '-' && s[1]) {
			fprintf(stderr, "ledgerctl %s: unknown option %s\n%s",
				a->cmd, s, usage);
			return -1;
		} else if (!a->ledger) {
			a->ledger = s;
		} else {
			fprintf(stderr, "ledgerctl %s: one LEDGER only\n%s",
				a->cmd, usage);
			return -1;
		}
	}
	if (!a->ledger || (target && !a->target)) {
		fputs(usage, stderr);
		return -1;
	}
	if (turn && parse_turn(turn, &a->turn) < 0) {
		fprintf(stderr,
			"ledgerctl %s: --turn wants a turn number from 1, not '%s'\n",
			a->cmd, turn);
		return -1;
	}
	return 0;
}

/* The whole of fd, read to its end (mount files report size 0). */
static char *slurp(int fd, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap), *nb;
	ssize_t r;

	while (buf) {
		if (n == cap) {
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	return NULL;
}

/*
 * Verify fd, folding its rows into a new *rows as they are read (a large
 * ledger's rows are never all held at once).  Exit-status style.
 */
static int verify_rows(const char *cmd, const char *label, int fd,
		       const char *case_id, const unsigned char *key,
		       bool quiet_torn, struct evidence_folder **rows,
		       struct ledger_report *rep)
{
	struct lf_why why = {{0}};
	const char *refused;
	enum lf_err e;

	*rows = evidence_folder_new();
	if (!*rows)
		return EV_USAGE_ERR;
	e = ledger_verify_fd(fd, case_id, key, evidence_folder_cb, *rows, rep,
			     &why);
	if (e == LF_OK)
		return EV_OK;
	/* A row the fold refused: its own reason, not the scan's. */
	refused = evidence_folder_why(*rows);
	if (refused)
		snprintf(why.msg, sizeof(why.msg), "%s", refused);
	evidence_folder_free(*rows);
	*rows = NULL;
	if (e == LF_VERIFY) {
		if (!quiet_torn || !rep->torn || refused)
			fprintf(stderr,
				"ledgerctl %s: %s does not verify: %s\n", cmd,
				label, why.msg);
		return EV_UNVERIFIED;
	}
	fprintf(stderr, "ledgerctl %s: %s: %s\n", cmd, label, why.msg);
	return EV_USAGE_ERR;
}

/* rows/head as the daemon reports them in the case's status. */
/*
 * A mounted case: the daemon checked the MACs when it loaded the case, so
 * the chain read through the mount must end where the daemon's status
 * says.  The ledger is copied first so one snapshot is verified; status
 * is read after it, and rows appended in between mean a new try.
 */
static int load_mounted(const struct ev_args *a, int dirfd, const char *name,
			struct evidence_folder **rows)
{
	struct ledger_report rep;
	unsigned long long srows = 0;
	char shead[CHAIN_HEX_LEN + 1], fault[CTL_FAULT_MAX];
	struct timespec pause = {0, 50 * 1000 * 1000};
	int try, rc = EV_USAGE_ERR;

	if (a->key)
		fprintf(stderr,
			"ledgerctl %s: %s is a mounted case: checked against the daemon, --key not used\n",
			a->cmd, a->ledger);
	for (try = 0; try < EV_MOUNT_TRIES; try++) {
		size_t len = 0;
		char *text = NULL;
		int fd = openat(dirfd, "ledger", O_RDONLY | O_CLOEXEC), mfd;

		if (fd >= 0) {
			text = slurp(fd, &len);
			close(fd);
		}
		mfd = text ? memfd_create("ledger", MFD_CLOEXEC) : -1;
		if (mfd < 0 || write(mfd, text, len) != (ssize_t)len) {
			fprintf(stderr,
				"ledgerctl %s: cannot read %s/ledger: %s\n",
				a->cmd, a->ledger, strerror(errno));
			free(text);
			if (mfd >= 0)
				close(mfd);
			return EV_USAGE_ERR;
		}
		free(text);
		rc = verify_rows(a->cmd, a->ledger, mfd, name, NULL, true, rows,
				 &rep);
		close(mfd);
		if (rc == EV_UNVERIFIED && rep.torn) {
			nanosleep(&pause, NULL); /* read during an append */
			continue;
		}
		if (rc != EV_OK)
			return rc;
		if (ctl_read_status(dirfd, &srows, shead, fault) < 0) {
			fprintf(stderr, "ledgerctl %s: cannot read %s/status\n",
				a->cmd, a->ledger);
			evidence_folder_free(*rows);
			*rows = NULL;
			return EV_USAGE_ERR;
		}
		if (fault[0]) {
			fprintf(stderr,
				"ledgerctl %s: %s does not verify: the daemon found it bad when it loaded the case (%s)\n",
				a->cmd, a->ledger, fault);
			evidence_folder_free(*rows);
			*rows = NULL;
			return EV_UNVERIFIED;
		}
		if (srows == rep.head.rows && !strcmp(shead, rep.head.head))
			return EV_OK;
		evidence_folder_free(*rows);
		*rows = NULL;
		if (srows < rep.head.rows)
			break;
		nanosleep(&pause, NULL);
	}
	fprintf(stderr,
		"ledgerctl %s: %s does not verify: the ledger read through the mount does not match the daemon's status (%llu rows, head %s)\n",
		a->cmd, a->ledger, srows, srows ? shead : "-");
	return EV_UNVERIFIED;
}

/*
 * Everything `verify --key` checks (ledgerctl(1) verify): the current
 * epoch's MACs with the seal key file beside the ledger, that file's
 * epoch against the ledger's end, and a backing folder's signed
 * checkpoints.  Evidence is built only from a ledger that passes.
 */
static int verify_as_verify_key(const struct ev_args *a, int fd,
				const unsigned char *key, const char *key_path)
{
	struct ratchet_keys seal;
	struct ctl_verdict v;
	struct stat st;
	char where[4200];
	int rc;

	memset(&seal, 0, sizeof(seal));
	if (ctl_pick_seal(a->ledger, NULL, key, &seal, where, sizeof(where)))
		return EV_USAGE_ERR;
	ctl_verify_check_sealed(fd, key, &seal, NULL, &v);
	explicit_bzero(&seal, sizeof(seal));
	if (v.status == 0 && stat(a->ledger, &st) == 0 && S_ISDIR(st.st_mode))
		ctl_verify_own_checkpoints(a->ledger, NULL, 0, NULL, fd,
					   key_path, &v);
	if (key)
		ctl_seal_file_required(a->ledger, fd, where, &v);
	rc = v.status == 0 ? EV_OK : EV_UNVERIFIED;
	if (rc != EV_OK)
		fprintf(stderr, "ledgerctl %s: %s does not verify: %s%s\n",
			a->cmd, a->ledger,
			strcmp(v.verdict, "wrong_key") ? "" : "wrong key: ",
			v.reason);
	/*
	 * No MAC and no signed checkpoint anchors the chain (a closed case's
	 * ledger file: its seal key file holds no key for any of its rows):
	 * said, as verify says it (ledgerctl(1) evidence).
	 */
	else if (!v.mac_rows && v.checkpoints < 0)
		fprintf(stderr,
			"ledgerctl %s: warning: %s: no MAC checked and no signed checkpoint: the chain and canonical form only (a closed case's MACs need its K0: ledgerctl verify --seal-key)\n",
			a->cmd, a->ledger);
	return rc;
}

/* A ledger file or a backing case folder: its MACs must be checked. */
static int load_keyed(const struct ev_args *a, int fd, const char *case_id,
		      struct evidence_folder **rows)
{
	unsigned char key[CHAIN_KEY_BYTES];
	const char *path = a->key ? a->key : CTL_DEFAULT_KEY;
	struct ledger_report rep;
	int rc = ctl_read_key(a->cmd, path, key);

	/* A key named on the command line that cannot be used is a usage error. */
	if (rc > 0 && a->key)
		fprintf(stderr, "ledgerctl %s: cannot read key %s: %s\n",
			a->cmd, path, strerror(errno));
	if (rc && a->key)
		return EV_USAGE_ERR;
	if (rc) {
		fprintf(stderr,
			"ledgerctl %s: refused: %s needs the host key to check its MACs (no readable %s; pass --key FILE)\n",
			a->cmd, a->ledger, path);
		return EV_UNVERIFIED;
	}
	rc = verify_as_verify_key(a, fd, key, path);
	if (rc == EV_OK && lseek(fd, 0, SEEK_SET) == 0)
		rc = verify_rows(a->cmd, a->ledger, fd, case_id, key, false,
				 rows, &rep);
	explicit_bzero(key, sizeof(key));
	return rc;
}

/* A ustar archive (an export): "ustar" at offset 257. */
static bool is_ustar(int fd)
{
	char magic[5];

	return pread(fd, magic, sizeof(magic), 257) == (ssize_t)sizeof(magic) &&
	       !memcmp(magic, "ustar", sizeof(magic));
}

/* The folder's own name: the case id its ledger must carry. */
static char *case_name_of(const char *dir)
{
	char real[PATH_MAX];

	if (!realpath(dir, real))
		return NULL;
	return strdup(basename(real));
}

/*
 * Verify LEDGER (mounted case folder, backing case folder or ledger file)
 * and fold its rows.  Exit-status style; *folder new on EV_OK.
 */
static int load_folder(const struct ev_args *a, struct evidence_folder **folder)
{
	struct evidence_folder *rows = NULL;
	char *name = NULL;
	struct stat st;
	int fd, lfd = -1, rc = EV_USAGE_ERR;

	*folder = NULL;
	fd = open(a->ledger, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "ledgerctl %s: cannot open %s: %s\n", a->cmd,
			a->ledger, strerror(errno));
		goto out;
	}
	ctl_note_commit_journal(a->cmd, a->ledger);
	if (S_ISREG(st.st_mode) && is_ustar(fd)) {
		/* An export holds its evidence.json; its ledger is checked by
		 * verify (ledgerctl(1) EXPORT). */
		fprintf(stderr,
			"ledgerctl %s: %s is an export: its evidence is the member evidence.json, and `ledgerctl verify %s` checks it\n",
			a->cmd, a->ledger, a->ledger);
	} else if (S_ISREG(st.st_mode)) {
		rc = load_keyed(a, fd, NULL, &rows);
	} else if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr,
			"ledgerctl %s: %s is neither a case folder nor a ledger file\n",
			a->cmd, a->ledger);
	} else if (!(name = case_name_of(a->ledger))) {
		fprintf(stderr, "ledgerctl %s: %s: %s\n", a->cmd, a->ledger,
			strerror(errno));
	} else if ((lfd = openat(fd, "ledger.jsonl",
				 O_RDONLY | O_CLOEXEC | O_NOCTTY)) >= 0) {
		rc = load_keyed(a, lfd, name, &rows);
	} else if (faccessat(fd, "status", F_OK, 0) == 0 &&
		   faccessat(fd, "ledger", F_OK, 0) == 0) {
		rc = load_mounted(a, fd, name, &rows);
	} else {
		fprintf(stderr,
			"ledgerctl %s: %s is not a case folder (no ledger.jsonl, no status and ledger)\n",
			a->cmd, a->ledger);
	}
	if (rc == EV_OK) {
		*folder = rows;
		rows = NULL;
	}
out:
	evidence_folder_free(rows);
	free(name);
	if (lfd >= 0)
		close(lfd);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* load_folder, then every event of the turn asked: *events new on EV_OK. */
static int load_events(const struct ev_args *a, json_t **events)
{
	struct lf_why why = {{0}};
	struct evidence_folder *rows;
	int rc = load_folder(a, &rows);

	*events = NULL;
	if (rc == EV_OK &&
	    evidence_folder_end(rows, a->turn, events, &why) != LF_OK) {
		fprintf(stderr, "ledgerctl %s: %s does not verify: %s\n",
			a->cmd, a->ledger, why.msg);
		rc = EV_UNVERIFIED;
	}
	evidence_folder_free(rows);
	return rc;
}

static int print_json(const json_t *v)
{
	if (json_dumpf(v, stdout, JSON_INDENT(2)) != 0 ||
	    putchar('\n') == EOF || fflush(stdout) != 0)
		return EV_USAGE_ERR;
	return EV_OK;
}

int ctl_evidence_main(int argc, char **argv)
{
	struct ev_args a = {.cmd = "evidence"};
	struct evidence_folder *rows = NULL;
	struct lf_why why = {{0}};
	int rc;

	if (argc > 1 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(EV_USAGE, stdout);
		return EV_OK;
	}
	if (parse_args(argc, argv, &a, false) < 0)
		return EV_USAGE_ERR;
	chain_init();
	/* Written an event at a time: a large case's are never all parsed. */
	rc = load_folder(&a, &rows);
	if (rc == EV_OK &&
	    (evidence_folder_print(rows, a.turn, stdout, &why) != LF_OK ||
	     fflush(stdout) != 0)) {
		fprintf(stderr, "ledgerctl evidence: %s\n",
			why.msg[0] ? why.msg : strerror(errno));
		rc = EV_USAGE_ERR;
	}
	evidence_folder_free(rows);
	return rc;
}

/* One message a line, for transcripts that came as lines. */
static int print_jsonl(const json_t *msgs)
{
	const json_t *m;
	size_t i;

	json_array_foreach(msgs, i, m)
	{
		if (json_dumpf(m, stdout, JSON_COMPACT) != 0 ||
		    putchar('\n') == EOF)
			return EV_USAGE_ERR;
	}
	return fflush(stdout) == 0 ? EV_OK : EV_USAGE_ERR;
}

/* The target's transcript, or NULL with the reason said (exit 2). */
static struct transcript *load_transcript(const struct ev_args *a, json_t **doc,
					  enum transcript_shape *shape)
{
	struct transcript *t = NULL;
	struct lf_why why = {{0}};
	size_t len = 0;
	char *text = NULL;
	bool ambiguous;
	int fd;

	*doc = NULL;
	fd = open(a->target, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0) {
		text = slurp(fd, &len);
		close(fd);
	}
	if (!text) {
		fprintf(stderr, "ledgerctl transcript: cannot read %s: %s\n",
			a->target, strerror(errno));
		return NULL;
	}
	if (transcript_read(text, len, doc, shape, &why) != LF_OK ||
	    transcript_parse(*doc, &t, &ambiguous, &why) != LF_OK) {
		fprintf(stderr, "ledgerctl transcript: %s: %s\n", a->target,
			why.msg);
		free(text);
		return NULL;
	}
	free(text);
	if (ambiguous)
		fprintf(stderr,
			"ledgerctl transcript: %s: no tool call or result tells the form apart; read as %s\n",
			a->target, transcript_form_name(transcript_form(t)));
	return t;
}

/* Exit 1 with the offences on stderr and the host evidence on stdout. */
static int gate_failed(const struct ev_args *a, const json_t *problems,
		       const json_t *events)
{
	size_t i;

	/* Nothing the host recorded is dropped because the gate failed. */
	for (i = 0; i < json_array_size(problems); i++)
		fprintf(stderr, "ledgerctl transcript: %s\n",
			json_string_value(json_array_get(problems, i)));
	if (a->turn)
		fprintf(stderr,
			"ledgerctl transcript: only host rows of turn %lu were counted\n",
			a->turn);
	fprintf(stderr,
		"ledgerctl transcript: gate failed: %zu offence(s); the host evidence follows on stdout\n",
		json_array_size(problems));
	return print_json(events) == EV_OK ? EV_GATE : EV_USAGE_ERR;
}

/* --replace: ASSERT's gate; what it replaced goes to stderr. */
static int replace_gate(const struct ev_args *a, const struct transcript *t,
			const json_t *events, json_t **out)
{
	struct lf_why why = {{0}};
	json_t *replaced = NULL, *one;
	enum lf_err e;
	size_t i;
	int rc;

	e = transcript_replace(t, events, out, &replaced, &why);
	if (e == LF_VERIFY) {
		one = json_pack("[s]", why.msg);
		rc = one ? gate_failed(a, one, events) : EV_USAGE_ERR;
		json_decref(one);
		return rc;
	}
	if (e != LF_OK) {
		fprintf(stderr, "ledgerctl transcript: %s\n", why.msg);
		return EV_USAGE_ERR;
	}
	json_array_foreach(replaced, i, one) fprintf(
		stderr, "ledgerctl transcript: %s\n", json_string_value(one));
	fprintf(stderr,
		"ledgerctl transcript: --replace: %zu target tool event(s) dropped, %zu host call(s) inserted, %zu replacement(s) listed\n",
		transcript_events_shown(t), json_array_size(events),
		json_array_size(replaced));
	json_decref(replaced);
	return EV_OK;
}

int ctl_transcript_main(int argc, char **argv)
{
	struct ev_args a = {.cmd = "transcript"};
	struct lf_why why = {{0}};
	struct transcript *t = NULL;
	enum transcript_shape shape;
	json_t *doc = NULL, *events = NULL, *problems = NULL, *out = NULL;
	int rc = EV_USAGE_ERR;

	if (argc > 1 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(TR_USAGE, stdout);
		return EV_OK;
	}
	if (parse_args(argc, argv, &a, true) < 0)
		return EV_USAGE_ERR;
	chain_init();
	t = load_transcript(&a, &doc, &shape);
	if (!t)
		goto out;
	rc = load_events(&a, &events);
	if (rc != EV_OK)
		goto out;
	rc = EV_USAGE_ERR;
	if (a.replace) {
		rc = replace_gate(&a, t, events, &out);
		if (rc != EV_OK)
			goto out;
	} else {
		if (transcript_gate(t, events, &problems, &why) != LF_OK) {
			fprintf(stderr, "ledgerctl transcript: %s\n", why.msg);
			goto out;
		}
		if (json_array_size(problems)) {
			rc = gate_failed(&a, problems, events);
			goto out;
		}
		if (transcript_rewrite(t, events, &out, &why) != LF_OK) {
			fprintf(stderr, "ledgerctl transcript: %s\n", why.msg);
			goto out;
		}
	}
	rc = shape == TRANSCRIPT_SHAPE_JSON ? print_json(out)
					    : print_jsonl(out);
out:
	json_decref(out);
	json_decref(problems);
	json_decref(events);
	transcript_free(t);
	json_decref(doc);
	return rc;
}
