/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * make cross-test runs this under qemu-user before the unit suite: Criterion's runner starts a
 * thread (nanomsg's worker) before its first test, and where qemu-user cannot run a thread of a
 * target program (Debian 12's qemu 7.2 on the CI machine, kernel 6.18: the guest spins before
 * clone) the suite hangs without a word.  This asks the same question in a second.
 */
#include <pthread.h>
#include <stdio.h>

static void *echo(void *arg)
{
	return arg;
}

int main(void)
{
	static int token;
	pthread_t t;
	void *back = NULL;
	int rc = pthread_create(&t, NULL, echo, &token);

	if (rc == 0)
		rc = pthread_join(t, &back);
	if (rc != 0 || back != &token) {
		fprintf(stderr, "qemu-thread-probe: pthread_create/join failed: %d\n", rc);
		return 1;
	}
	return 0;
}
