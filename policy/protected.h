/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_POLICY_PROTECTED_H
#define DSH_POLICY_PROTECTED_H

/*
 * What a command must not rewrite because something acts on it outside the sandbox later (SPEC 1.6,
 * 16): the names protected in each writable root, and the dshbox program in use.  docs/policy.md
 * shows the same table; tests/unit/test_protected.c holds the two equal.
 */

#include <stddef.h>

#include "dshbox/dshbox.h"

struct dsh_protected_name {
	const char *name; /* relative to a writable root */
	const char *acts; /* what acts on it outside the sandbox */
	const char *peer; /* the SPEC section or the peer sandbox that protects it too */
};

extern const struct dsh_protected_name dsh_protected_names[];
extern const size_t dsh_n_protected_names;

/* The table's entry for name (as unprotect: spells it), or NULL. */
const struct dsh_protected_name *dsh_protected_name_find(const char *name);

/*
 * The files that enforce this process's next run, canonical and de-duplicated: the executable it
 * started from (first) and, when the library was loaded from a file of its own, that file.  *ret is
 * NULL-terminated (possibly empty); a path the kernel reports deleted is given by its name, which
 * a replacement would take.
 */
int dsh_program_in_use(char ***ret, struct dsh_error **err);

#endif
