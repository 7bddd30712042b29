/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_FENCE_SERVE_POOL_H
#define DSH_FENCE_SERVE_POOL_H

/*
 * Answering serve requests on N threads (fence/serve_pool.c): requests naming one path in the
 * order sent, requests on different paths in parallel; each answer one line on out_fd.
 */

#include <stddef.h>

#include "dshbox/dshbox.h"
#include "dshbox/error.h"
#include "fence/serve.h"

struct dsh_serve_pool;

/* Start n workers answering for p on out_fd.  Start it after the process confined itself: the
   threads inherit Landlock and no_new_privs from the thread that creates them. */
int dsh_serve_pool_new(const struct dsh_policy *p, int out_fd, size_t n, struct dsh_serve_pool **ret,
		       struct dsh_error **err);
/* Queue a parsed request (taken); waits while its worker's queue is full.  -EPIPE (or another
   -errno) once an answer could not be written: stop reading. */
int dsh_serve_pool_submit(struct dsh_serve_pool *pool, struct dsh_serve_request *req);
/* Write one answer line (line[n] must be writable: the newline goes there during the write). */
int dsh_serve_pool_write(struct dsh_serve_pool *pool, char *line, size_t n);
/* Answer what is queued, end the workers, free the pool; the first failure to answer, or 0. */
int dsh_serve_pool_finish(struct dsh_serve_pool *pool);

#endif
