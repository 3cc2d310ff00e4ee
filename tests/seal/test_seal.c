/* SPDX-License-Identifier: MIT */
/*
 * test_seal.c - sealpath's rules, one row per rule: an image tree is built
 * under a fresh root-owned folder, changed by the row's shell commands,
 * audited with seal_audit(--root) and the exact finding lines compared.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seal.h"

/* A sealed merged-/usr image: every row starts from this. */
static const char base_tree[] =
	"set -e; umask 022;"
	"mkdir -p usr/bin usr/sbin usr/lib usr/local/bin usr/local/sbin "
	"etc/alternatives;"
	"ln -s usr/bin bin; ln -s usr/sbin sbin;"
	"printf '#!/bin/sh\\n' > usr/bin/tool; chmod 0755 usr/bin/tool;"
	"cp usr/bin/tool usr/bin/mawk; cp usr/bin/tool usr/sbin/stool;"
	"ln -s /etc/alternatives/awk usr/bin/awk;"
	"ln -s /usr/bin/mawk etc/alternatives/awk;"
	"chown -R 0:0 .";

static char image[64];

static void remove_image(void)
{
	char cmd[256];

	if (!image[0])
		return;
	/* Undo ACLs and modes that could keep rm from working. */
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx %s 2>/dev/null; rm -rf %s",
		 image, image);
	if (system(cmd) != 0)
		cr_log_warn("could not remove %s", image);
	image[0] = '\0';
}

TestSuite(seal, .fini = remove_image, .timeout = 60);

/* Build the base tree, then run setup (a shell snippet) inside it. */
static void make_image(const char *setup)
{
	char *cmd;

	snprintf(image, sizeof(image), "/tmp/sealtest.XXXXXX");
	cr_assert(mkdtemp(image), "mkdtemp");
	/* With --root the image root is "/" and is judged too. */
	cr_assert_eq(chmod(image, 0755), 0);
	cr_assert(asprintf(&cmd, "cd %s && { %s; } && { %s; }", image,
			   base_tree, setup ? setup : ":") > 0);
	cr_assert_eq(system(cmd), 0, "setup failed: %s", setup);
	free(cmd);
}

/*
 * Audit path (NULL: the default PATH) in the image and compare: the
 * verdict, and the finding lines as a set (entries come in readdir order).
 */
static void check(const char *path, int verdict, const char *const *lines)
{
	struct seal_report rep;
	char buf[SEAL_PATH_MAX + 64];
	size_t i, j, n = 0;
	bool found;

	seal_audit(path, image, &rep);
	for (i = 0; i < rep.n_findings; i++) {
		seal_finding_line(&rep.findings[i], buf, sizeof(buf));
		cr_log_info("finding: %s", buf);
	}
	if (rep.verdict == SEAL_ERROR)
		cr_log_info("error: %s", rep.error);
	cr_expect_eq(rep.verdict, verdict, "verdict %d, expected %d",
		     rep.verdict, verdict);
	while (lines && lines[n])
		n++;
	cr_expect_eq(rep.n_findings, n, "%zu findings, expected %zu",
		     rep.n_findings, n);
	for (j = 0; j < n; j++) {
		found = false;
		for (i = 0; i < rep.n_findings && !found; i++) {
			seal_finding_line(&rep.findings[i], buf, sizeof(buf));
			found = !strcmp(buf, lines[j]);
		}
		cr_expect(found, "missing finding: %s", lines[j]);
	}
	seal_report_free(&rep);
}

#define LINES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE	   NULL

/* One row of the table: a rule, the tree change, the PATH, the verdict. */
#define ROW(rule, setup, path, verdict, lines)                                 \
	Test(seal, rule)                                                       \
	{                                                                      \
		make_image(setup);                                             \
		check(path, verdict, lines);                                   \
	}

#define CHAIN(n)                                                               \
	"i=1; while [ $i -lt " #n " ]; do ln -s l$((i+1)) usr/bin/l$i; "       \
	"i=$((i+1)); done; ln -s tool usr/bin/l" #n

/* clang-format off */
ROW(clean_merged_usr_tree_is_sealed, NULL, NULL, SEAL_SEALED, NONE)
ROW(other_writable_path_folder_fails, "chmod 0777 usr/local/bin", NULL,
    SEAL_UNSEALED, LINES("/usr/local/bin: writable by group",
		"/usr/local/bin: writable by others"))
ROW(sticky_bit_does_not_excuse_other_write, "chmod 1777 usr/local/bin",
    NULL, SEAL_UNSEALED, LINES("/usr/local/bin: writable by group",
		"/usr/local/bin: writable by others"))
ROW(group_writable_folder_above_fails, "chmod 0775 usr", NULL,
    SEAL_UNSEALED, LINES("/usr: writable by group"))
ROW(image_root_owned_by_user_fails, "chown 1000 .", NULL, SEAL_UNSEALED,
    LINES("/: owned by uid 1000"))
ROW(entry_owned_by_user_fails, "chown 1000 usr/bin/tool", NULL,
    SEAL_UNSEALED, LINES("/usr/bin/tool: owned by uid 1000"))
ROW(group_writable_entry_fails, "chmod 0775 usr/bin/tool", NULL,
    SEAL_UNSEALED, LINES("/usr/bin/tool: writable by group"))
ROW(entry_folder_owned_by_user_fails, "mkdir usr/bin/sub; chown 1000 usr/bin/sub",
    NULL, SEAL_UNSEALED, LINES("/usr/bin/sub: owned by uid 1000"))
ROW(sealed_link_chain_passes, NULL, "/usr/bin", SEAL_SEALED, NONE)
ROW(link_chain_through_group_writable_folder_fails,
    "chmod 0775 etc/alternatives", "/usr/bin", SEAL_UNSEALED,
    LINES("/etc/alternatives: writable by group"))
ROW(link_chain_target_owned_by_user_fails,
    "mkdir -p opt; cp usr/bin/tool opt/awk; chown 1000 opt/awk;"
    "ln -sfn /opt/awk etc/alternatives/awk", "/usr/bin", SEAL_UNSEALED,
    LINES("/opt/awk: owned by uid 1000"))
ROW(link_into_user_owned_folder_fails,
    "mkdir -p home/user/bin; cp usr/bin/tool home/user/bin/prog;"
    "chown 1000 home/user/bin; ln -s /home/user/bin/prog usr/bin/prog",
    NULL, SEAL_UNSEALED, LINES("/home/user/bin: owned by uid 1000"))
ROW(link_owned_by_user_fails,
    "ln -s tool usr/bin/alias; chown -h 1000 usr/bin/alias", NULL,
    SEAL_UNSEALED, LINES("/usr/bin/alias: owned by uid 1000"))
ROW(link_mode_is_not_judged_but_its_folder_is,
    "mkdir -p opt/w; chmod 0777 opt/w; ln -s /usr/bin/tool opt/w/t;"
    "ln -s /opt/w/t usr/bin/t", "/usr/bin", SEAL_UNSEALED,
    LINES("/opt/w: writable by group",
		"/opt/w: writable by others"))
ROW(relative_link_is_followed_from_its_folder,
    "cp usr/bin/tool usr/lib/x; chown 1000 usr/lib/x;"
    "ln -s ../lib/x usr/bin/x", "/usr/bin", SEAL_UNSEALED,
    LINES("/usr/lib/x: owned by uid 1000"))
ROW(sealed_relative_link_passes,
    "cp usr/bin/tool usr/lib/x; ln -s ../lib/x usr/bin/x", "/usr/bin",
    SEAL_SEALED, NONE)
ROW(dangling_link_fails, "ln -s ../lib/nothing usr/bin/gone", NULL,
    SEAL_UNSEALED, LINES("/usr/bin/gone: dangling symbolic link"))
ROW(dangling_link_is_named_where_it_dangles,
    "ln -sfn /usr/bin/nothing etc/alternatives/awk", "/usr/bin",
    SEAL_UNSEALED, LINES("/etc/alternatives/awk: dangling symbolic link"))
ROW(link_through_a_file_dangles, "ln -s tool/x usr/bin/through", "/usr/bin",
    SEAL_UNSEALED, LINES("/usr/bin/through: dangling symbolic link"))
ROW(link_to_a_file_with_a_trailing_slash_dangles,
    "ln -s tool/ usr/bin/slash", "/usr/bin", SEAL_UNSEALED,
    LINES("/usr/bin/slash: dangling symbolic link"))
ROW(link_loop_fails, "ln -s b usr/bin/a; ln -s a usr/bin/b", "/usr/bin",
    SEAL_UNSEALED, LINES("/usr/bin/a: symbolic link loop",
			 "/usr/bin/b: symbolic link loop"))
ROW(self_link_loop_fails, "ln -s /usr/bin/me usr/bin/me", "/usr/bin",
    SEAL_UNSEALED, LINES("/usr/bin/me: symbolic link loop"))
ROW(more_than_40_links_fail, CHAIN(41), "/usr/bin", SEAL_UNSEALED,
    LINES("/usr/bin/l1: more than 40 symbolic links"))
ROW(forty_links_pass, CHAIN(40), "/usr/bin", SEAL_SEALED, NONE)
ROW(missing_folder_under_sealed_parent_passes, "rmdir usr/local/sbin",
    NULL, SEAL_SEALED, NONE)
ROW(missing_folder_under_writable_parent_fails,
    "rmdir usr/local/sbin; chmod 0777 usr/local", "/usr/local/sbin",
    SEAL_UNSEALED, LINES("/usr/local: writable by group",
		"/usr/local: writable by others"))
ROW(acl_user_write_fails, "setfacl -m u:1000:rwx usr/bin", NULL,
    SEAL_UNSEALED, LINES("/usr/bin: ACL grants write to uid 1000"))
ROW(acl_group_write_fails, "setfacl -m g:1000:rw usr/bin/tool", NULL,
    SEAL_UNSEALED, LINES("/usr/bin/tool: ACL grants write to gid 1000"))
ROW(acl_read_only_passes, "setfacl -m u:1000:rx usr/bin", NULL,
    SEAL_SEALED, NONE)
ROW(acl_write_masked_out_passes,
    "setfacl -m u:1000:rwx usr/bin; setfacl -m m::rx usr/bin", NULL,
    SEAL_SEALED, NONE)
ROW(acl_owning_group_write_fails, "setfacl -m u:1000:r,g::rwx usr/bin",
    NULL, SEAL_UNSEALED, LINES("/usr/bin: writable by group"))
ROW(empty_path_entry_fails, NULL, "/usr/bin::/bin", SEAL_UNSEALED,
    LINES(": empty entry in PATH"))
ROW(dot_path_entry_fails, NULL, "/usr/bin:.", SEAL_UNSEALED,
    LINES(".: relative entry in PATH"))
ROW(relative_path_entry_fails, NULL, "bin:/usr/bin", SEAL_UNSEALED,
    LINES("bin: relative entry in PATH"))
ROW(absolute_link_to_slash_stays_inside_root,
    "rmdir usr/local/bin; ln -s / usr/local/bin; touch evil;"
    "chown 1000 evil", "/usr/local/bin", SEAL_UNSEALED,
    LINES("/evil: owned by uid 1000"))
ROW(dotdot_link_stays_inside_root,
    "rmdir usr/local/bin; ln -s ../../../../.. usr/local/bin; touch evil;"
    "chown 1000 evil", "/usr/local/bin", SEAL_UNSEALED,
    LINES("/evil: owned by uid 1000"))
ROW(dotdot_path_stays_inside_root, "touch evil; chown 1000 evil",
    "/../../..", SEAL_UNSEALED, LINES("/evil: owned by uid 1000"))
ROW(path_folder_that_is_a_file_is_judged_as_a_file,
    "chmod 0757 usr/bin/tool", "/usr/bin/tool", SEAL_UNSEALED,
    LINES("/usr/bin/tool: writable by others"))
ROW(folder_reached_twice_reports_once, "chown 1000 usr/sbin/stool",
    "/sbin:/usr/sbin:/usr/../usr/sbin", SEAL_UNSEALED,
    LINES("/usr/sbin/stool: owned by uid 1000"))
/* clang-format on */

Test(seal, root_that_is_not_a_folder_is_an_error)
{
	struct seal_report rep;

	cr_assert_eq(seal_audit(NULL, "/etc/passwd", &rep), SEAL_ERROR);
	cr_expect_str_eq(rep.error, "/etc/passwd: not a folder");
	seal_report_free(&rep);
}

Test(seal, missing_root_is_an_error)
{
	struct seal_report rep;

	cr_assert_eq(seal_audit(NULL, "/nonexistent/image", &rep), SEAL_ERROR);
	cr_expect_str_eq(rep.error, "/nonexistent/image: No such file or "
				    "directory");
	seal_report_free(&rep);
}

Test(seal, findings_past_the_cap_are_counted_not_kept)
{
	struct seal_report rep;

	make_image("mkdir usr/bin/many; cd usr/bin/many;"
		   "seq 1 1500 | xargs touch; chown -R 1000 .");
	/* Only the folder's own entries are judged, never deeper ones. */
	cr_assert_eq(seal_audit("/usr/bin/many", image, &rep), SEAL_UNSEALED);
	cr_expect_eq(rep.n_findings, SEAL_MAX_FINDINGS);
	cr_expect_eq(rep.dropped, 1501 - SEAL_MAX_FINDINGS);
	seal_report_free(&rep);
}

Test(seal, finding_line_escapes_control_bytes)
{
	struct seal_finding f = {
		.path = "/a\nb\\c", .problem = SEAL_OWNER, .id = 7};
	char buf[64];

	seal_finding_line(&f, buf, sizeof(buf));
	cr_expect_str_eq(buf, "/a\\x0ab\\\\c: owned by uid 7");
}

Test(seal, audit_path_without_entries_judges_only_the_walk)
{
	struct seal_report rep;

	make_image("chown 1000 usr/bin/tool");
	cr_expect_eq(seal_audit_path("/bin", image, 0, &rep), SEAL_SEALED);
	seal_report_free(&rep);
	cr_expect_eq(seal_audit_path("/bin", image, SEAL_ENTRIES, &rep),
		     SEAL_UNSEALED);
	seal_report_free(&rep);
}
