/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bubblewrap's argv (bwrap/args.c): the input is NUL-separated arguments up to an empty one (two
 * NULs in a row); what follows is the data every `--args FD` reads, NUL-separated as bubblewrap
 * reads it.  A parse that succeeds is validated, its capabilities, environment and rendering made.
 */
#include <errno.h>

#include "bwrap/args.h"
#include "tests/fuzz/fuzz.h"

struct fd_data {
	const uint8_t *p;
	size_t n;
};

static int read_fd(int fd, char **ret_buf, size_t *ret_len, void *userdata)
{
	const struct fd_data *d = userdata;
	if (fd < 0 || fd > 1000)
		return -EBADF;
	char *b = malloc(d->n + 1);
	if (!b)
		return -ENOMEM;
	if (d->n)
		memcpy(b, d->p, d->n);
	b[d->n] = '\0';
	*ret_buf = b;
	*ret_len = d->n;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 16384)
		return 0;
	size_t argv_len = size;
	struct fd_data d = { NULL, 0 };
	for (size_t i = 0; i + 1 < size; i++)
		if (data[i] == 0 && data[i + 1] == 0) {
			argv_len = i;
			d.p = data + i + 2;
			d.n = size - i - 2;
			break;
		}
	char *buf = fuzz_cstr(data, argv_len);
	int argc = 0;
	char **argv = malloc((argv_len + 2) * sizeof(char *));
	if (!argv)
		abort();
	if (argv_len)
		for (char *q = buf; q <= buf + argv_len; q += strlen(q) + 1)
			argv[argc++] = q;
	argv[argc] = NULL;
	struct dsh_bwrap_args a;
	struct dsh_error *err = NULL;
	if (dsh_bwrap_parse(argc, argv, read_fd, &d, &a, &err) == 0) {
		struct dsh_error *verr = NULL;
		(void)dsh_bwrap_validate(&a, 1000, 1000, &verr);
		dsh_error_free(verr);
		(void)dsh_bwrap_caps(&a, ~0ull);
		char *envp[] = { "HOME=/home/u", "PATH=/usr/bin", NULL };
		char **env = NULL;
		verr = NULL;
		if (dsh_bwrap_apply_env(&a, envp, &env, &verr) == 0)
			for (char **e = env; e && *e; e++)
				free(*e);
		free(env);
		dsh_error_free(verr);
		free(dsh_bwrap_render(&a));
		dsh_bwrap_args_clear(&a);
	} else {
		FUZZ_CHECK_ERROR(err);
	}
	dsh_error_free(err);
	free(argv);
	free(buf);
	return 0;
}
