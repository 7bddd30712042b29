/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSHBOX_FENCE_H
#define DSHBOX_FENCE_H

/*
 * The file fence (SPEC 5): read, write, edit and list a path on behalf of an agent host, with the
 * policy's verdict taken on the path the kernel actually resolved.
 *
 * Every operation: the path is made absolute against the policy's cwd (dsh_policy_cwd()) and
 * normalised lexically; the parent (or, for read and list, the path itself) is opened with
 * openat2(RESOLVE_NO_MAGICLINKS); the canonical path is read back from the descriptor
 * (/proc/self/fd); the verdict is taken on that; the operation then acts through the descriptor,
 * never by a second lookup of the name.  A write follows a symlink at the last component only by
 * resolving its target again from the start (every hop is re-checked), and never follows a
 * dangling one.
 *
 * A failure is a struct dsh_error whose kind (denied, not-found, conflict, not-regular-file,
 * too-large, invalid, not-text, io), path (canonical where it was resolved) and rule (denied: the
 * deciding rule text, or "mode read-only" ...) say what happened, with a one-line message.  Never
 * printed here.
 *
 * The caller owns each answer: an operation overwrites *ret whole (no need to zero it first), and
 * the matching _clear function frees what it holds, whether the operation succeeded or not.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dshbox/dshbox.h"
#include "dshbox/error.h"
#include "dshbox/export.h"

/* Largest content the fence reads into memory or writes in one operation. */
#define DSH_FENCE_MAX_CONTENT (64u * 1024 * 1024)
/* Most entries one list answer holds; more sets `truncated`. */
#define DSH_FENCE_MAX_ENTRIES 100000u

enum dsh_fence_op {
	DSH_FENCE_OP_READ,
	DSH_FENCE_OP_WRITE,
	DSH_FENCE_OP_EDIT,
	DSH_FENCE_OP_LIST,
};

DSH_PUBLIC const char *dsh_fence_op_to_string(enum dsh_fence_op op);

/*
 * A file's version: its size, mtime in nanoseconds and inode, as the string "SIZE:MTIME_NS:INODE".
 * Every read answer carries one; a write or edit given it back fails with a conflict when the file
 * has changed since (another writer, an editor's save, a rename over it).
 */
#define DSH_FENCE_VERSION_MAX 64

struct dsh_fence_read_result {
	char *path;         /* canonical */
	char *data;         /* NUL-terminated for convenience; len bytes */
	size_t len;
	uint64_t size;      /* the file's size */
	uint64_t offset;
	bool eof;           /* the read reached the end of the file */
	char version[DSH_FENCE_VERSION_MAX]; /* of the file the bytes were read from */
};
DSH_PUBLIC void dsh_fence_read_result_clear(struct dsh_fence_read_result *r);

struct dsh_fence_write_result {
	char *path;         /* canonical */
	bool created;       /* there was no file before */
	size_t bytes;       /* bytes now in the file */
	size_t replacements; /* edit: how many occurrences were replaced */
	char *diff;         /* unified diff old -> new for a text overwrite within the limit; else NULL */
	bool diff_skipped;  /* an overwrite had no diff: binary or larger than diff_basis_max_bytes */
	char version[DSH_FENCE_VERSION_MAX]; /* of the file as written */
	bool in_place;      /* written into the file itself, not atomically: its directory refuses
			       new entries (no temporary can be made there) but the file is writable */
};

struct dsh_fence_write_opts {
	/* NULL, or the version the caller last read: the file must still have it, else conflict
	   (checked on the file at the name right before the rename). */
	const char *expect_version;
};
DSH_PUBLIC void dsh_fence_write_result_clear(struct dsh_fence_write_result *r);

enum dsh_fence_entry_type {
	DSH_FENCE_ENTRY_FILE,
	DSH_FENCE_ENTRY_DIR,
	DSH_FENCE_ENTRY_SYMLINK,
	DSH_FENCE_ENTRY_OTHER,
};
DSH_PUBLIC const char *dsh_fence_entry_type_to_string(enum dsh_fence_entry_type t);

struct dsh_fence_entry {
	char *name;
	enum dsh_fence_entry_type type;
	uint64_t size;      /* 0 for a denied entry (nothing about it is revealed but its name) */
	bool denied;        /* the policy forbids reading it */
	bool writable;      /* the policy allows writing it */
};

struct dsh_fence_list_result {
	char *path;         /* canonical */
	struct dsh_fence_entry *entries; /* sorted by name (bytewise) */
	size_t n_entries;
	bool truncated;
};
DSH_PUBLIC void dsh_fence_list_result_clear(struct dsh_fence_list_result *r);

/*
 * Read up to limit bytes (0: to the end) from offset.  A file larger than DSH_FENCE_MAX_CONTENT
 * read without a limit, or a limit above it, is too-large.
 */
DSH_PUBLIC int dsh_fence_read(const struct dsh_policy *p, const char *path, uint64_t offset, uint64_t limit,
			      struct dsh_fence_read_result *ret, struct dsh_error **err);

/*
 * Replace (or create) the file atomically with data; an existing file keeps its mode and owner.
 * Missing parent directories are made, inside the writable roots only, never through a symlink.
 */
DSH_PUBLIC int dsh_fence_write(const struct dsh_policy *p, const char *path, const char *data, size_t len,
			       struct dsh_fence_write_result *ret, struct dsh_error **err);

/*
 * Replace an exact string: the only occurrence, or every one with all.  Absent, ambiguous without
 * all, or old empty: invalid.  The file must not change between the read and the rename: conflict.
 * Only text files (no NUL, valid UTF-8; else not-text).  In a CRLF file the LFs of old and new
 * that lack a CR are read as CRLF, so an old string with LF line ends matches and CRLF is kept.
 */
DSH_PUBLIC int dsh_fence_edit(const struct dsh_policy *p, const char *path, const char *old_s, size_t old_len,
			      const char *new_s, size_t new_len, bool all, struct dsh_fence_write_result *ret,
			      struct dsh_error **err);

/* The same, with options (opts may be NULL). */
DSH_PUBLIC int dsh_fence_write_ex(const struct dsh_policy *p, const char *path, const char *data, size_t len,
				  const struct dsh_fence_write_opts *opts, struct dsh_fence_write_result *ret,
				  struct dsh_error **err);
DSH_PUBLIC int dsh_fence_edit_ex(const struct dsh_policy *p, const char *path, const char *old_s,
				 size_t old_len, const char *new_s, size_t new_len, bool all,
				 const struct dsh_fence_write_opts *opts, struct dsh_fence_write_result *ret,
				 struct dsh_error **err);

DSH_PUBLIC int dsh_fence_list(const struct dsh_policy *p, const char *path, struct dsh_fence_list_result *ret,
			      struct dsh_error **err);

#endif
