/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "net/sni.h"

#include <stdint.h>
#include <string.h>

/* A cursor over bytes that are all there: every read checks what is left first. */
struct rd {
	const unsigned char *p;
	size_t n;
};

static int rd_skip(struct rd *r, size_t k)
{
	if (r->n < k)
		return -1;
	r->p += k;
	r->n -= k;
	return 0;
}

static int rd_u8(struct rd *r, unsigned *v)
{
	if (r->n < 1)
		return -1;
	*v = r->p[0];
	return rd_skip(r, 1);
}

static int rd_u16(struct rd *r, unsigned *v)
{
	if (r->n < 2)
		return -1;
	*v = (unsigned)r->p[0] << 8 | r->p[1];
	return rd_skip(r, 2);
}

static int rd_u24(struct rd *r, size_t *v)
{
	if (r->n < 3)
		return -1;
	*v = (size_t)r->p[0] << 16 | (size_t)r->p[1] << 8 | r->p[2];
	return rd_skip(r, 3);
}

/* A length-prefixed vector as a cursor of its own. */
static int rd_vec(struct rd *r, unsigned lenbytes, struct rd *ret)
{
	unsigned l;
	if (lenbytes == 1 ? rd_u8(r, &l) : rd_u16(r, &l))
		return -1;
	if (r->n < l)
		return -1;
	*ret = (struct rd){ r->p, l };
	return rd_skip(r, l);
}

/* The server_name extension's body: a list of (type, name); only host_name (0) counts. */
static enum dsh_sni_result parse_server_name(struct rd ext, char *ret_name, size_t name_size)
{
	struct rd list;
	if (rd_vec(&ext, 2, &list) || ext.n != 0)
		return DSH_SNI_NOT_TLS;
	while (list.n > 0) {
		unsigned type;
		struct rd name;
		if (rd_u8(&list, &type) || rd_vec(&list, 2, &name))
			return DSH_SNI_NOT_TLS;
		if (type != 0)
			continue;
		/* RFC 6066: one host_name at most, ASCII, no trailing dot, no NUL; and as a host
		 * name, no empty label (no leading or doubled dot either). */
		if (name.n == 0 || name.n > 253 || name.n + 1 > name_size)
			return DSH_SNI_NOT_TLS;
		for (size_t i = 0; i < name.n; i++) {
			if (name.p[i] <= 0x20 || name.p[i] >= 0x7f)
				return DSH_SNI_NOT_TLS;
			if (name.p[i] == '.' && (i == 0 || i == name.n - 1 || name.p[i - 1] == '.'))
				return DSH_SNI_NOT_TLS;
		}
		memcpy(ret_name, name.p, name.n);
		ret_name[name.n] = '\0';
		return DSH_SNI_FOUND;
	}
	return DSH_SNI_NOT_TLS; /* a server_name extension naming no host */
}

static enum dsh_sni_result parse_hello(struct rd h, char *ret_name, size_t name_size)
{
	struct rd v, exts;
	unsigned major, minor;
	/* legacy_version, random, session id, cipher suites, compression methods */
	if (rd_u8(&h, &major) || rd_u8(&h, &minor) || major != 3 || rd_skip(&h, 32) || rd_vec(&h, 1, &v) ||
	    v.n > 32 || rd_vec(&h, 2, &v) || rd_vec(&h, 1, &v))
		return DSH_SNI_NOT_TLS;
	if (h.n == 0)
		return DSH_SNI_NONE; /* no extensions at all (SSL 3.0 style) */
	if (rd_vec(&h, 2, &exts) || h.n != 0)
		return DSH_SNI_NOT_TLS;
	enum dsh_sni_result found = DSH_SNI_NONE;
	while (exts.n > 0) {
		unsigned type;
		struct rd body;
		if (rd_u16(&exts, &type) || rd_vec(&exts, 2, &body))
			return DSH_SNI_NOT_TLS;
		if (type != 0)
			continue;
		if (found != DSH_SNI_NONE)
			return DSH_SNI_NOT_TLS; /* two server_name extensions: which one would the server read? */
		found = parse_server_name(body, ret_name, name_size);
		if (found != DSH_SNI_FOUND)
			return DSH_SNI_NOT_TLS;
	}
	return found;
}

enum dsh_sni_result dsh_sni_parse(const unsigned char *buf, size_t len, char *ret_name, size_t name_size)
{
	/* The handshake may span records: gather the fragments of consecutive handshake records
	 * (content type 22) until the ClientHello's own length is there.  Bounded by the limit. */
	static const size_t rec_hdr = 5;
	unsigned char hs[DSH_SNI_MAX_HELLO + 4];
	size_t hs_len = 0, off = 0;

	if (name_size == 0)
		return DSH_SNI_NOT_TLS;
	for (;;) {
		if (len - off < rec_hdr) {
			if (len > off && buf[off] != 22)
				return DSH_SNI_NOT_TLS;
			return DSH_SNI_NEED_MORE;
		}
		const unsigned char *r = buf + off;
		size_t rlen = (size_t)r[3] << 8 | r[4];
		if (r[0] != 22 || r[1] != 3 || rlen == 0 || rlen > 16384)
			return DSH_SNI_NOT_TLS;
		if (len - off - rec_hdr < rlen)
			return DSH_SNI_NEED_MORE;
		if (hs_len + rlen > sizeof(hs))
			return DSH_SNI_NOT_TLS;
		memcpy(hs + hs_len, r + rec_hdr, rlen);
		hs_len += rlen;
		off += rec_hdr + rlen;

		struct rd h = { hs, hs_len };
		unsigned type;
		size_t body_len;
		if (rd_u8(&h, &type) || rd_u24(&h, &body_len)) {
			continue; /* the handshake header itself spans records */
		}
		if (type != 1 || body_len > DSH_SNI_MAX_HELLO)
			return DSH_SNI_NOT_TLS;
		if (h.n < body_len)
			continue;
		h.n = body_len;
		return parse_hello(h, ret_name, name_size);
	}
}
