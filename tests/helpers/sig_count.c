/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Counts the signals that reach it, one line per delivery, written by the handler itself (a shell's
 * trap runs once for signals that came while it waited, which would hide a duplicate):
 *   sig_count DIR MS [kill0]
 * appends "INT", "TERM", "HUP" or "USR1" to DIR/count per delivery, creates DIR/ready once the
 * handlers are in place, with kill0 then sends SIGUSR1 to its own process group (kill(0)), and
 * exits 0 after MS milliseconds, however many signals came.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int count_fd = -1;

static void on_signal(int sig)
{
	const char *s = sig == SIGINT ? "INT\n" : sig == SIGTERM ? "TERM\n" : sig == SIGHUP ? "HUP\n" : "USR1\n";
	(void)!write(count_fd, s, strlen(s));
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	char path[4096];
	snprintf(path, sizeof(path), "%s/count", argv[1]);
	count_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (count_fd < 0)
		return 2;
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1 };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa = { .sa_handler = on_signal };
		sigemptyset(&sa.sa_mask);
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return 2;
	}
	snprintf(path, sizeof(path), "%s/ready", argv[1]);
	int r = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (r < 0)
		return 2;
	close(r);
	if (argc > 3 && strcmp(argv[3], "kill0") == 0)
		kill(0, SIGUSR1);
	struct timespec left = { atol(argv[2]) / 1000, (atol(argv[2]) % 1000) * 1000000 };
	while (nanosleep(&left, &left) < 0 && errno == EINTR)
		;
	return 0;
}
