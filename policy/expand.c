/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "policy/glob.h"
#include "common/strv.h"
#include "policy/rule.h"

static bool name_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

int dsh_expand_env(const char *s, char *const *envp, bool escape, char **ret, struct dsh_error **err)
{
	struct dsh_buf b = { 0 };
	const char *p = s;

	while (*p) {
		const char *open = strstr(p, "{{");
		if (!open) {
			dsh_buf_add(&b, p);
			break;
		}
		dsh_buf_addn(&b, p, (size_t)(open - p));
		const char *q = open + 2;
		const char *close = strstr(q, "}}");
		if (!close) {
			dsh_buf_free(&b);
			return dsh_err(err, DSH_ERR_POLICY, EINVAL, "'{{' is not closed by '}}'");
		}
		while (*q == ' ')
			q++;
		if (strncmp(q, "env.", 4) != 0 || !name_start(q[4])) {
			dsh_buf_free(&b);
			return dsh_err(err, DSH_ERR_POLICY, EINVAL,
				       "'%.*s' may only hold env.NAME", (int)(close + 2 - open), open);
		}
		const char *name = q + 4, *e = name;
		while (name_char(*e))
			e++;
		const char *after = e;
		while (*after == ' ')
			after++;
		if (after != close) {
			dsh_buf_free(&b);
			return dsh_err(err, DSH_ERR_POLICY, EINVAL,
				       "'%.*s' may only hold env.NAME", (int)(close + 2 - open), open);
		}
		char nm[256];
		if ((size_t)(e - name) >= sizeof(nm)) {
			dsh_buf_free(&b);
			return dsh_err(err, DSH_ERR_POLICY, EINVAL, "variable name is too long");
		}
		memcpy(nm, name, (size_t)(e - name));
		nm[e - name] = '\0';
		const char *val = dsh_env_get(envp, nm);
		if (!val || !*val) {
			dsh_buf_free(&b);
			return dsh_err(err, DSH_ERR_POLICY, EINVAL, "environment variable %s is %s", nm,
				       val ? "empty" : "not set");
		}
		if (escape) {
			/* A value is a name, never a pattern: its wildcards match themselves. */
			char *esc = dsh_glob_escape(val);
			if (!esc) {
				dsh_buf_free(&b);
				return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
			}
			dsh_buf_add(&b, esc);
			free(esc);
		} else {
			dsh_buf_add(&b, val);
		}
		p = close + 2;
	}
	char *out = dsh_buf_steal(&b);
	if (!out)
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "out of memory");
	*ret = out;
	return 0;
}
