/* SPDX-License-Identifier: MIT */
/*
 * ctl_verify.c - `ledgerctl verify LEDGER [--key FILE] [--head ROWS:HEX]`:
 * offline check of a ledger file or backing case folder, naming the first
 * bad row; a checkpoint from `status` makes a later truncation visible.
 */
#include "ctl_verify.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "ledger.h"
#include "ledger_hashes.h"
#include "merkle.h"
#include "optarg.h"

#define CTL_VERIFY_USAGE                                                           \
	"usage: ledgerctl verify LEDGER|FILE.tar [--key FILE] [--head ROWS:HEX]\n" \
	"       [--seal-key K0FILE] [--json] [--require-mac]\n"

/* A parsed "ROWS:HEX" checkpoint. */
struct ctl_checkpoint {
	unsigned long long rows;
	char hex[CHAIN_HEX_LEN + 1];
};

static int ctl_parse_head(const char *arg, struct ctl_checkpoint *cp)
{
	const char *colon = strchr(arg, ':');
	unsigned long long v = 0;
	const char *p;
	size_t i;

	if (!colon || colon == arg || colon - arg > 19)
		return -1;
	for (p = arg; p < colon; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (unsigned long long)(*p - '0');
	}
	if (strlen(colon + 1) != CHAIN_HEX_LEN)
		return -1;
	for (i = 0; i < CHAIN_HEX_LEN; i++) {
		char c = colon[1 + i];

		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -1;
		cp->hex[i] = c;
	}
	cp->hex[CHAIN_HEX_LEN] = '\0';
	cp->rows = v;
	return 0;
}

/* What ctl_line_hash's walk carries. */
struct line_hash {
	unsigned long long line, want;
	char *out;
};

static bool line_hash_one(void *ctx, const char *s, size_t n)
{
	struct line_hash *h = ctx;

	if (++h->line < h->want)
		return false;
	chain_sha256_hex(s, n, h->out);
	return true;
}

/*
 * SHA-256 of line `want` (1-based) of fd into out.  Only called on a
 * ledger that verified, so lines are bounded.  0, or -1 (errno).
 */
static int ctl_line_hash(int fd, unsigned long long want,
			 char out[CHAIN_HEX_LEN + 1])
{
	struct line_hash h = {.want = want, .out = out};
	struct lf_why why = {{0}};
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	if (merkle_each_line(fd, st.st_size, line_hash_one, &h, &why) !=
		    LF_OK ||
	    h.line < want) {
		errno = ENODATA;
		return -1;
	}
	return 0;
}

/*
 * The fingerprint recorded in row 1 (case_opened) into fp, or "" when the
 * ledger predates it or row 1 cannot be read.
 */
static void ctl_sealed_fingerprint(int fd, char fp[CHAIN_FP_LEN + 1],
				   char seal_fp[CHAIN_FP_LEN + 1])
{
	char buf[4096];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	const char *v;
	json_t *row;
	char *nl;

	fp[0] = '\0';
	seal_fp[0] = '\0';
	if (n <= 0)
		return;
	buf[n] = '\0';
	nl = strchr(buf, '\n');
	if (!nl)
		return;
	*nl = '\0';
	row = json_loads(buf, 0, NULL);
	v = json_string_value(json_object_get(row, "key_fingerprint"));
	if (v && strlen(v) == CHAIN_FP_LEN)
		memcpy(fp, v, CHAIN_FP_LEN + 1);
	v = json_string_value(json_object_get(row, "seal_fingerprint"));
	if (v && strlen(v) == CHAIN_FP_LEN)
		memcpy(seal_fp, v, CHAIN_FP_LEN + 1);
	json_decref(row);
}

int ctl_verify_check(int fd, const unsigned char *key, const char *head_arg,
		     struct ctl_verdict *v)
{
	return ctl_verify_check_sealed(fd, key, NULL, head_arg, v);
}

int ctl_verify_check_sealed(int fd, const unsigned char *key,
			    const struct ratchet_keys *seal,
			    const char *head_arg, struct ctl_verdict *v)
{
	struct ctl_checkpoint cp;
	struct ledger_report rep;
	struct lf_why why = {{0}};
	char hex[CHAIN_HEX_LEN + 1];
	enum lf_err rc;

	memset(v, 0, sizeof(*v));
	v->status = 2;
	v->verdict = "error";
	v->checkpoints = -1;
	if (key)
		chain_key_fingerprint(key, CHAIN_KEY_BYTES, v->key_fp);
	if (head_arg && ctl_parse_head(head_arg, &cp) < 0) {
		snprintf(
			v->reason, sizeof(v->reason),
			"--head wants ROWS:HEX (a row count and a 64-digit SHA-256 from status), not '%.100s'",
			head_arg);
		return 2;
	}
	ctl_sealed_fingerprint(fd, v->sealed_fp, v->seal_fp);
	if (seal && seal->mode == RATCHET_KEYS_ALL)
		chain_key_fingerprint(seal->key, CHAIN_KEY_BYTES,
				      v->seal_key_fp);
	rc = ledger_verify_sealed(fd, NULL, key, seal, NULL, NULL, &rep, &why);
	ctl_verdict_seal(v, &rep, seal);
	if (rc == LF_IO || rc == LF_NOMEM) {
		snprintf(v->reason, sizeof(v->reason), "%s", why.msg);
		return 2;
	}
	v->macs_checked = rep.macs_checked;
	v->rows = rep.head.rows;
	v->good_bytes = rep.good_bytes;
	memcpy(v->head, rep.head.head, sizeof(v->head));
	/* Every ledger begins with its case_opened row (ledgerfs-ledger(5)). */
	if (rc == LF_OK && rep.head.rows == 0) {
		rc = LF_VERIFY;
		v->macs_checked = false;
		snprintf(
			why.msg, sizeof(why.msg),
			"the ledger has no rows: every ledger begins with its case_opened row");
	}
	if (rc != LF_OK) {
		v->status = 1;
		v->verdict = "bad";
		v->bad_row = rep.bad_row;
		snprintf(v->reason, sizeof(v->reason), "%s", why.msg);
		/*
		 * A row that fails only with the key failed on its MAC: the
		 * recorded fingerprint says whether the key was the wrong
		 * one or the MAC was forged.
		 */
		if (ctl_wrong_seal_key(fd, v))
			return v->status;
		if (key && v->sealed_fp[0] && strcmp(v->sealed_fp, v->key_fp))
			ctl_verdict_wrong_key(fd, v, "key", v->sealed_fp,
					      v->key_fp);
		return v->status;
	}
	if (head_arg) {
		v->status = 1;
		v->verdict = "bad";
		if (rep.head.rows < cp.rows) {
			snprintf(
				v->reason, sizeof(v->reason),
				"checkpoint row %llu: ledger has only %llu rows (truncated)",
				cp.rows, rep.head.rows);
			return 1;
		}
		if (cp.rows == 0) {
			memset(hex, '0', CHAIN_HEX_LEN);
			hex[CHAIN_HEX_LEN] = '\0';
		} else if (cp.rows == rep.head.rows) {
			memcpy(hex, rep.head.head, sizeof(hex));
		} else if (ctl_line_hash(fd, cp.rows, hex) < 0) {
			v->status = 2;
			v->verdict = "error";
			snprintf(v->reason, sizeof(v->reason),
				 "cannot read row %llu: %s", cp.rows,
				 strerror(errno));
			return 2;
		}
		if (strcmp(hex, cp.hex) != 0) {
			snprintf(
				v->reason, sizeof(v->reason),
				"checkpoint row %llu: hash %s does not match the checkpoint %s",
				cp.rows, hex, cp.hex);
			return 1;
		}
	}
	/*
	 * The daemon's own check at load (ratchet_resume): the seal key file
	 * is for the epoch of the ledger's next row, or one behind it when
	 * the daemon stopped between a row that ended an epoch and its
	 * ratchet.  Anything else is rows missing from the end, or another
	 * ledger's seal key file.
	 */
	if (seal && seal->mode == RATCHET_KEYS_CURRENT &&
	    seal->epoch != rep.walk.epoch &&
	    !(rep.head.rows && seal->epoch + 1 == rep.walk.epoch &&
	      rep.walk.rows_in_epoch == 0)) {
		v->status = 1;
		v->verdict = "bad";
		snprintf(
			v->reason, sizeof(v->reason),
			"the seal key file is for epoch %llu but the ledger's next row is in epoch %llu (rows missing from its end, or another ledger's seal key file)",
			seal->epoch, rep.walk.epoch);
		return 1;
	}
	/*
	 * A key that is not the one the ledger records is the wrong key even
	 * where it reached no MAC (a closed epoch, an export).
	 */
	if (key && v->sealed_fp[0] && strcmp(v->sealed_fp, v->key_fp) &&
	    ctl_verdict_wrong_key(fd, v, "key", v->sealed_fp, v->key_fp))
		return v->status;
	v->status = 0;
	v->verdict = "ok";
	return 0;
}

/* Did `verify --json` print its object (ctl_verify_any_main asks)? */
bool ctl_verify_json_printed;

void ctl_verify_json_print(json_t *o)
{
	if (o)
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
	putchar('\n');
	json_decref(o);
	ctl_verify_json_printed = true;
}

json_t *ctl_verdict_json(const struct ctl_verdict *v, const char *ledger,
			 const char *key_path, const char *key_source)
{
	json_t *o =
		json_pack("{s:s, s:s, s:I, s:s, s:b}", "ledger", ledger,
			  "verdict", v->verdict, "rows", (json_int_t)v->rows,
			  "head", v->head, "macs_checked", v->macs_checked);

	if (!o)
		return NULL;
	json_object_set_new(o, "key_fingerprint",
			    v->key_fp[0] ? json_string(v->key_fp)
					 : json_null());
	json_object_set_new(o, "key_file",
			    key_path ? json_string(key_path) : json_null());
	json_object_set_new(o, "key_source",
			    key_source ? json_string(key_source) : json_null());
	json_object_set_new(o, "sealed_with",
			    v->sealed_fp[0] ? json_string(v->sealed_fp)
					    : json_null());
	if (v->sealed) {
		static const char *const modes[] = {"none", "current", "all"};

		json_object_set_new(o, "seal_keys",
				    json_string(modes[v->seal_mode]));
		json_object_set_new(o, "mac_rows",
				    json_integer((json_int_t)v->mac_rows));
		json_object_set_new(o, "epochs",
				    json_integer((json_int_t)v->epochs));
		json_object_set_new(o, "seal_fingerprint",
				    v->seal_fp[0] ? json_string(v->seal_fp)
						  : json_null());
	}
	json_object_set_new(o, "checkpoints",
			    v->checkpoints >= 0 ? json_integer(v->checkpoints)
						: json_null());
	if (v->status != 0) {
		json_object_set_new(o, "reason", json_string(v->reason));
		if (v->bad_row)
			json_object_set_new(
				o, "bad_row",
				json_integer((json_int_t)v->bad_row));
	}
	return o;
}

int ctl_verify_require_mac(struct ctl_verdict *v)
{
	if (v->status != 0 || v->macs_checked || v->mac_rows)
		return v->status;
	v->status = 2;
	v->verdict = "error";
	snprintf(
		v->reason, sizeof(v->reason),
		"no MAC checked (--require-mac): %s",
		v->sealed
			? "the key reaches no row of this ledger (closed epochs need --seal-key K0FILE)"
			: "no key");
	return 2;
}

/* The verdict as ledgerfs-ledger(5) LEDGERCTL VERIFY prints it. */
int ctl_verdict_print(const struct ctl_verdict *v, const char *label)
{
	if (v->status == 0 && v->sealed && !v->macs_checked && v->mac_rows)
		printf("ok: %llu rows, head %s, MACs of epoch %llu checked\n",
		       v->rows, v->head, v->seal_epoch);
	else if (v->status == 0)
		printf("ok: %llu rows, head %s, MACs %s\n", v->rows, v->head,
		       v->macs_checked ? "checked" : "not checked");
	else if (!strcmp(v->verdict, "wrong_key"))
		printf("wrong key: %s\n", v->reason);
	else if (v->status == 1)
		printf("bad: %s\n", v->reason);
	else
		fprintf(stderr, "ledgerctl verify: %s: %s\n", label, v->reason);
	if (v->status == 0 && v->checkpoints > 0)
		fprintf(stderr,
			"ledgerctl verify: %lld signed checkpoint(s) match the ledger (the latest at %llu rows)\n",
			v->checkpoints, v->checkpoint_rows);
	if (v->status == 1 && (v->macs_checked || v->mac_rows) &&
	    strstr(v->reason, "mac")) {
		if (v->sealed_fp[0])
			fprintf(stderr,
				"ledgerctl verify: the key matches the one that sealed the ledger (%s): the row was forged or altered\n",
				v->sealed_fp);
		else
			fprintf(stderr,
				"ledgerctl verify: the ledger does not record its key's fingerprint: a wrong key and a forged MAC look alike\n");
	}
	return v->status;
}

int ctl_verify_fd(int fd, const char *label, const unsigned char *key,
		  const char *head_arg)
{
	struct ctl_verdict v;

	ctl_verify_check(fd, key, head_arg, &v);
	return ctl_verdict_print(&v, label);
}

/*
 * The key to check MACs with: the one given, else the default one when
 * it can be read, said on stderr with its fingerprint so the caller
 * knows which key vouched.  0 key loaded, 1 no key, 2 error (said).
 */
static int ctl_pick_key(const char *path, unsigned char key[CHAIN_KEY_BYTES],
			const char **source)
{
	char fp[CHAIN_FP_LEN + 1];
	int rc;

	if (path) {
		rc = ctl_read_key("verify", path, key);
		if (rc == 1)
			fprintf(stderr,
				"ledgerctl verify: cannot read key %s: %s\n",
				path, strerror(errno));
		*source = "given";
		return rc ? 2 : 0;
	}
	rc = ctl_read_key("verify", CTL_DEFAULT_KEY, key);
	if (rc < 0)
		return 2;
	if (rc == 1) {
		if (errno == EACCES)
			fprintf(stderr,
				"ledgerctl verify: cannot read %s: %s\n",
				CTL_DEFAULT_KEY, strerror(EACCES));
		return 1;
	}
	*source = "default";
	chain_key_fingerprint(key, CHAIN_KEY_BYTES, fp);
	fprintf(stderr,
		"ledgerctl verify: no --key given: checking MACs with the default key %s (fingerprint %s)\n",
		CTL_DEFAULT_KEY, fp);
	return 0;
}

/* Open LEDGER: a ledger file, or a backing case folder's ledger.jsonl. */
static int ctl_open_ledger(const char *path)
{
	struct stat st;
	int fd, lfd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		lfd = openat(fd, "ledger.jsonl",
			     O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		close(fd);
		return lfd;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* Whatever the verdict: the reader learns why rows may be missing. */
void ctl_note_commit_journal(const char *cmd, const char *ledger)
{
	char *real = realpath(ledger, NULL), *slash, path[PATH_MAX + 32];
	struct stat st;
	int up;

	if (!real)
		return;
	/* BACKING/cases/CASE[/ledger.jsonl]: up to BACKING. */
	up = stat(real, &st) == 0 && S_ISREG(st.st_mode) ? 3 : 2;
	while (up-- > 0 && (slash = strrchr(real, '/')) && slash != real) {
		if (up == 0 && strcmp(slash, "/cases") != 0)
			goto out;
		*slash = '\0';
	}
	if (up < 0) {
		snprintf(path, sizeof(path), "%s/commit.journal", real);
		if (stat(path, &st) == 0)
			fprintf(stderr,
				"ledgerctl %s: %s is present: rows acknowledged under --sync=journal may reach this ledger only when ledgerfs next starts\n",
				cmd, path);
	}
out:
	free(real);
}

int ctl_verify_main(int argc, char **argv)
{
	struct stat mst;
	struct ctl_verdict v;
	char probe[4096];
	const char *ledger = NULL, *key_path = NULL, *head_arg = NULL;
	const char *key_source = NULL, *seal_path = NULL;
	struct ratchet_keys seal;
	char seal_where[4200];
	unsigned char key[CHAIN_KEY_BYTES];
	bool have_key = false, json = false, require_mac = false;
	long ncpu;
	int i, fd, rc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(CTL_VERIFY_USAGE, stdout);
			return 0;
		} else if (opt_value(argc, argv, &i, "--key", &key_path) ||
			   opt_value(argc, argv, &i, "--head", &head_arg) ||
			   opt_value(argc, argv, &i, "--seal-key",
				     &seal_path)) {
			continue;
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--require-mac")) {
			require_mac = true;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr,
				"ledgerctl verify: unknown option %s\n%s", a,
				CTL_VERIFY_USAGE);
			return 2;
		} else if (!ledger) {
			ledger = a;
		} else {
			fprintf(stderr, "ledgerctl verify: one LEDGER only\n%s",
				CTL_VERIFY_USAGE);
			return 2;
		}
	}
	if (!ledger) {
		fputs(CTL_VERIFY_USAGE, stderr);
		return 2;
	}
	/* One ledger, many rows: its chain links hash on the other CPUs. */
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ledger_verify_set_threads(ncpu > 1 ? (unsigned)ncpu : 1);
	snprintf(probe, sizeof(probe), "%s/status", ledger);
	if (stat(probe, &mst) == 0 && S_ISREG(mst.st_mode)) {
		if (require_mac) {
			fprintf(stderr,
				"ledgerctl verify: %s is a mounted case, checked against the daemon without a key; --require-mac needs the backing case folder and --key\n",
				ledger);
			return 2;
		}
		if (key_path)
			fprintf(stderr,
				"ledgerctl verify: %s is a mounted case: --key not used\n",
				ledger);
		memset(&seal, 0, sizeof(seal));
		if (seal_path && ctl_seal_read_k0(seal_path, &seal) != 0)
			return 2;
		rc = ctl_verify_mounted(ledger, head_arg, json, &seal);
		explicit_bzero(&seal, sizeof(seal));
		return rc;
	}
	rc = ctl_pick_key(key_path, key, &key_source);
	if (rc == 2)
		return 2;
	have_key = rc == 0;
	if (!have_key && require_mac && !seal_path) {
		fprintf(stderr,
			"ledgerctl verify: no key to check MACs with (--require-mac): give --key FILE\n");
		return 2;
	}
	if (!have_key && !seal_path)
		fputs("ledgerctl verify: MACs not checked (no key)\n", stderr);
	ctl_note_commit_journal("verify", ledger);
	fd = ctl_open_ledger(ledger);
	if (fd < 0) {
		fprintf(stderr, "ledgerctl verify: cannot open %s: %s\n",
			ledger, strerror(errno));
		rc = 2;
		goto out;
	}
	memset(&seal, 0, sizeof(seal));
	rc = ctl_pick_seal(ledger, seal_path, have_key ? key : NULL, &seal,
			   seal_where, sizeof(seal_where));
	if (rc == 2) {
		close(fd);
		goto out;
	}
	rc = ctl_verify_check_sealed(fd, have_key ? key : NULL, &seal, head_arg,
				     &v);
	explicit_bzero(&seal, sizeof(seal));
	if (!key_path && have_key)
		key_path = CTL_DEFAULT_KEY;
	/* A backing case folder's signed checkpoints (ledgerctl(1) verify). */
	if (have_key && stat(ledger, &mst) == 0 && S_ISDIR(mst.st_mode))
		rc = ctl_verify_own_checkpoints(ledger, NULL, 0, NULL, fd,
						key_path, &v);
	/* After the checkpoints, which say more of a cut ledger. */
	if (have_key && !seal_path) {
		ctl_seal_file_required(ledger, fd, seal_where, &v);
		rc = v.status;
	}
	if (require_mac)
		rc = ctl_verify_require_mac(&v);
	close(fd);
	ctl_say_seal(&v, seal_where);
	if (json) {
		json_t *o = ctl_verdict_json(
			&v, ledger, have_key ? key_path : NULL, key_source);

		if (o)
			ctl_verify_json_print(o);
	} else {
		rc = ctl_verdict_print(&v, ledger);
		if (have_key)
			fprintf(stderr,
				"ledgerctl verify: key %s (%s, %s)%s%s\n",
				v.key_fp, key_path, key_source,
				v.sealed_fp[0] ? "; sealed with key " : "",
				v.sealed_fp);
	}
out:
	explicit_bzero(key, sizeof(key));
	return rc;
}
