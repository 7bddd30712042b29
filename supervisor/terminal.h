/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef DSH_SUPERVISOR_TERMINAL_H
#define DSH_SUPERVISOR_TERMINAL_H

/*
 * The caller's terminal around a sandboxed run (SPEC 3.8).  The sandbox (init and the command) is a
 * process group of its own, so that kill(0) inside reaches only the sandbox and a signal sent to
 * dshbox's group reaches the command once, through dshbox.  When dshbox held the terminal's
 * foreground, the sandbox's group gets it for the run and dshbox takes it back after, as a shell
 * does for a job; the terminal's settings are restored after the run.
 *
 *   dsh_terminal_begin    before the spawn: which terminal, is dshbox in its foreground, its settings
 *   dsh_terminal_enter    in init: a group of its own and, when told to, the terminal's foreground
 *   dsh_terminal_stopped  the command stopped for job control: dshbox stops the same way, and on
 *                         SIGCONT hands the foreground back (when it has it) and continues the sandbox
 *   dsh_terminal_end      after the run: the foreground back to dshbox's group, the settings restored
 */

#include <stdbool.h>
#include <sys/types.h>
#include <termios.h>

struct dsh_terminal {
	int fd;               /* stdin, stdout or stderr when one is a terminal; -1: none */
	bool ctty;            /* it is dshbox's controlling terminal */
	bool handed;          /* the sandbox's group has (or is given) the foreground */
	bool have_modes;
	struct termios modes; /* the settings before the run */
	pid_t pgid;           /* the sandbox's group (init's pid), 0 before the spawn */
};

/* Never fails: without a terminal there is nothing to do. */
void dsh_terminal_begin(struct dsh_terminal *t);

/* In init, before the command is cloned: its own group; fd >= 0: it takes the foreground too. */
void dsh_terminal_enter(int fd);

/* sig is the command's stop signal; only SIGTSTP, SIGTTIN and SIGTTOU (job control) are followed. */
void dsh_terminal_stopped(struct dsh_terminal *t, int sig);

void dsh_terminal_end(struct dsh_terminal *t);

#endif
