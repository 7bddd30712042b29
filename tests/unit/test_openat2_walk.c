/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dsh_openat2_walk, the resolution dshbox does by hand where openat2 answers ENOSYS (inside a
 * sandbox whose runtime broker refuses it), held to the kernel's own openat2: for every path of a
 * tree with relative, absolute, looping and procfs links, every combination of the RESOLVE_ flags
 * it emulates and a few open flags, both succeed on the same file or fail with the same errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/resolve.h"
#include "tests/lib/harness.h"

static int kernel_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = { .flags = flags | O_CLOEXEC, .resolve = resolve };
	int fd;
	/* EAGAIN: a ".." under RESOLVE_BENEATH raced a rename or mount elsewhere (a busy machine): again. */
	for (int tries = 0; (fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how))) < 0 && errno == EAGAIN &&
			    tries < 100;
	     tries++)
		;
	return fd;
}

static void link_at(const char *root, const char *target, const char *name)
{
	_cleanup_free_ char *p = NULL;
	cr_assert(asprintf(&p, "%s/%s", root, name) > 0);
	cr_assert_eq(symlink(target, p), 0, "symlink %s", p);
}

Test(openat2_walk, agrees_with_the_kernel)
{
	_cleanup_free_ char *root = dsh_test_mkdtemp(), *p = NULL, *abs = NULL;
	cr_assert(asprintf(&p, "%s/a/b/f", root) > 0);
	dsh_test_write_file(p, "x");
	cr_assert(asprintf(&abs, "%s/a", root) > 0);
	link_at(root, "a/b", "rel");
	link_at(root, abs, "absl");
	link_at(root, "a/b/f", "tofile");
	link_at(root, "loop1", "loop2");
	link_at(root, "loop2", "loop1");
	link_at(root, "/proc/self/fd/0", "magic");
	link_at(root, "/proc/self", "procself");
	link_at(root, "../..", "up");
	link_at(root, "missing", "dangling");

	static const char *const paths[] = {
		"a", "a/b", "a/b/f", "a/b/f/", "a/./b//f", "a/b/../b/f", "rel", "rel/f", "rel/", "absl/b/f", "tofile",
		"loop1", "loop1/x", "magic", "procself", "procself/status", "up", "up/x", "..", "../x", "dangling",
		"a/missing", "a/b/f/x", ".", "", "/", "/proc/self/status", "a/b/../../a/b/f",
	};
	static const uint64_t resolves[] = {
		0,
		RESOLVE_NO_SYMLINKS,
		RESOLVE_NO_MAGICLINKS,
		RESOLVE_NO_XDEV,
		RESOLVE_BENEATH,
		RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
		RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
		RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH,
	};
	static const uint64_t flags[] = { O_PATH, O_RDONLY, O_PATH | O_NOFOLLOW, O_PATH | O_DIRECTORY, O_RDONLY | O_NOFOLLOW };
	_cleanup_close_ int dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(dir, 0);
	if (kernel_openat2(dir, ".", O_PATH, 0) < 0 && errno == ENOSYS) {
		dsh_test_rmtree(root);
		DSH_SKIP("openat2 answers ENOSYS here (inside a dshbox sandbox): no kernel answer to compare with");
	}
	int cases = 0;
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
		for (size_t k = 0; k < ARRAY_SIZE(resolves); k++)
			for (size_t f = 0; f < ARRAY_SIZE(flags); f++) {
				errno = 0;
				int kfd = kernel_openat2(dir, paths[i], flags[f], resolves[k]);
				int ke = kfd < 0 ? errno : 0;
				errno = 0;
				int wfd = dsh_openat2_walk(dir, paths[i], flags[f], 0, resolves[k]);
				int we = wfd < 0 ? errno : 0;
				cr_expect_eq(we, ke, "'%s' resolve %#llx flags %#llx: the walk says %s, the kernel %s", paths[i],
					     (unsigned long long)resolves[k], (unsigned long long)flags[f], strerror(we),
					     strerror(ke));
				if (kfd >= 0 && wfd >= 0) {
					struct stat a, b;
					cr_assert_eq(fstat(kfd, &a), 0);
					cr_assert_eq(fstat(wfd, &b), 0);
					cr_expect(a.st_dev == b.st_dev && a.st_ino == b.st_ino,
						  "'%s' resolve %#llx: another file than the kernel's", paths[i],
						  (unsigned long long)resolves[k]);
				}
				if (kfd >= 0)
					close(kfd);
				if (wfd >= 0)
					close(wfd);
				cases++;
			}
	cr_log_info("openat2_walk: %d cases agree with the kernel", cases);
	dsh_test_rmtree(root);
}
