// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * The dshbox program's path: `options.binary` (a path, or a name looked up on the PATH), else
 * `$DSHBOX`, else `dshbox` on the PATH.  Throws an Error when none is an executable file.
 */
export function findBinary(options?: { binary?: string; env?: NodeJS.ProcessEnv }): string;
