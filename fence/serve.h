/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_FENCE_SERVE_H
#define DSH_FENCE_SERVE_H

/*
 * The JSON-lines protocol of `dshbox serve --stdio` (docs/serve.md): one request object in, one
 * answer object out.  Pure apart from the fence operation the request asks for; no I/O of its own.
 */

#include <stddef.h>

#include "dshbox/dshbox.h"
#include "dshbox/error.h"

/* Longest request line the server reads (a 64 MiB write, base64-encoded, fits). */
#define DSH_SERVE_MAX_LINE (96u * 1024 * 1024)

/*
 * Answer one request line (without its newline).  The answer is one compact JSON object without a
 * newline; a malformed request gets an error answer, never a failure.  Fails only when out of memory.
 */
int dsh_serve_answer(const struct dsh_policy *p, const char *line, size_t len, char **ret,
		     struct dsh_error **err);
/*
 * The same in two steps, for a server answering requests in parallel: parse (a malformed line
 * becomes a request whose answer is its error), the key that orders it (the path it names, made
 * absolute and normalised lexically; NULL when it names none: it touches no file), then answer.
 */
struct dsh_serve_request;
int dsh_serve_parse(const struct dsh_policy *p, const char *line, size_t len, struct dsh_serve_request **ret,
		    struct dsh_error **err);
const char *dsh_serve_request_key(const struct dsh_serve_request *r);
int dsh_serve_request_answer(const struct dsh_policy *p, struct dsh_serve_request *r, char **ret,
			     struct dsh_error **err);
void dsh_serve_request_free(struct dsh_serve_request *r);

/* The error answer for a line that was too long (it was not parsed; its id is unknown). */
char *dsh_serve_answer_too_long(size_t limit);

/* Base64 (RFC 4648, padded), as the protocol carries bytes that are not UTF-8. */
char *dsh_base64_encode(const unsigned char *s, size_t n, size_t *ret_len);
int dsh_base64_decode(const char *s, size_t n, unsigned char **ret, size_t *ret_len);

#endif
