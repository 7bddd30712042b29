/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The ClientHello reader the relays hold the server name to (SPEC 12.2): what it finds, and that
 * truncated, oversized or malformed input never reads past what it was given. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "net/sni.h"

struct buf {
	unsigned char b[40000];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	cr_assert_leq(b->n + n, sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}
static void u8(struct buf *b, unsigned v) { unsigned char c = v; put(b, &c, 1); }
static void u16(struct buf *b, unsigned v) { u8(b, v >> 8); u8(b, v & 0xff); }
static void u24(struct buf *b, size_t v) { u8(b, v >> 16); u16(b, v & 0xffff); }

/* A ClientHello with the given server names (NULL-terminated; none: no extension), in records of
 * at most frag bytes. */
static void hello(struct buf *out, const char *const *names, size_t frag)
{
	struct buf body = { .n = 0 }, ext = { .n = 0 }, hs = { .n = 0 };
	u16(&body, 0x0303);
	for (int i = 0; i < 32; i++)
		u8(&body, i);
	u8(&body, 0);        /* session id */
	u16(&body, 2);       /* cipher suites */
	u16(&body, 0x1301);
	u8(&body, 1);        /* compression */
	u8(&body, 0);
	u16(&ext, 0x002b);   /* supported_versions, before the name */
	u16(&ext, 3);
	u8(&ext, 2);
	u16(&ext, 0x0304);
	for (const char *const *n = names; n && *n; n++) {
		size_t l = strlen(*n);
		u16(&ext, 0);
		u16(&ext, l + 5);
		u16(&ext, l + 3);
		u8(&ext, 0);
		u16(&ext, l);
		put(&ext, *n, l);
	}
	u16(&body, ext.n);
	put(&body, ext.b, ext.n);
	u8(&hs, 1);
	u24(&hs, body.n);
	put(&hs, body.b, body.n);
	out->n = 0;
	for (size_t off = 0; off < hs.n; off += frag) {
		size_t k = hs.n - off < frag ? hs.n - off : frag;
		u8(out, 22);
		u16(out, 0x0301);
		u16(out, k);
		put(out, hs.b + off, k);
	}
}

Test(sni, finds_the_host_name)
{
	static struct buf b;
	char name[256];
	hello(&b, (const char *const[]){ "registry.npmjs.org", NULL }, 16384);
	cr_assert_eq(dsh_sni_parse(b.b, b.n, name, sizeof(name)), DSH_SNI_FOUND);
	cr_assert_str_eq(name, "registry.npmjs.org");
}

Test(sni, a_hello_split_over_records_and_reads)
{
	static struct buf b;
	char name[256];
	hello(&b, (const char *const[]){ "a.example", NULL }, 7);
	for (size_t k = 0; k < b.n; k++)
		cr_assert_eq(dsh_sni_parse(b.b, k, name, sizeof(name)), DSH_SNI_NEED_MORE, "prefix %zu", k);
	cr_assert_eq(dsh_sni_parse(b.b, b.n, name, sizeof(name)), DSH_SNI_FOUND);
	cr_assert_str_eq(name, "a.example");
}

Test(sni, no_server_name)
{
	static struct buf b;
	char name[256];
	hello(&b, NULL, 16384);
	cr_assert_eq(dsh_sni_parse(b.b, b.n, name, sizeof(name)), DSH_SNI_NONE);
}

Test(sni, two_server_names_are_refused)
{
	static struct buf b;
	char name[256];
	hello(&b, (const char *const[]){ "a.example", "b.example", NULL }, 16384);
	cr_assert_eq(dsh_sni_parse(b.b, b.n, name, sizeof(name)), DSH_SNI_NOT_TLS);
}

Test(sni, plain_http_is_not_tls)
{
	const char *req = "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n";
	char name[256];
	cr_assert_eq(dsh_sni_parse((const unsigned char *)req, strlen(req), name, sizeof(name)), DSH_SNI_NOT_TLS);
	cr_assert_eq(dsh_sni_parse((const unsigned char *)req, 1, name, sizeof(name)), DSH_SNI_NOT_TLS);
}

Test(sni, a_name_too_long_for_the_room_is_refused)
{
	static struct buf b;
	char name[8];
	hello(&b, (const char *const[]){ "long.example", NULL }, 16384);
	cr_assert_eq(dsh_sni_parse(b.b, b.n, name, sizeof(name)), DSH_SNI_NOT_TLS);
}

/* Every byte flipped in turn: any verdict, but never a read outside the buffer (ASan) and a found
 * name is always NUL-terminated within the room. */
Test(sni, corrupted_bytes_stay_in_bounds)
{
	static struct buf b;
	char name[256];
	hello(&b, (const char *const[]){ "x.example", NULL }, 100);
	for (size_t i = 0; i < b.n; i++) {
		unsigned char *copy = malloc(b.n);
		cr_assert_not_null(copy);
		memcpy(copy, b.b, b.n);
		copy[i] ^= 0xff;
		if (dsh_sni_parse(copy, b.n, name, sizeof(name)) == DSH_SNI_FOUND)
			cr_assert_lt(strlen(name), sizeof(name));
		free(copy);
	}
}
