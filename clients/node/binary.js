// SPDX-License-Identifier: LGPL-2.1-or-later
// Where the dshbox program is: an explicit option, then $DSHBOX, then the PATH.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * @param {{ binary?: string, env?: NodeJS.ProcessEnv }} [options]
 * @returns {string}
 */
export function findBinary(options = {}) {
  const env = options.env ?? process.env;
  const given = options.binary ?? env.DSHBOX;
  if (given) {
    // A name without a slash is looked up on the PATH like a command; a path is taken as is.
    if (given.includes('/')) {
      const file = isAbsolute(given) ? given : resolve(given);
      if (!executable(file))
        throw new Error(`dshbox: '${file}' is not an executable file`);
      return file;
    }
    return onPath(given, env) ?? fail(`'${given}' not found on the PATH`);
  }
  return onPath('dshbox', env) ?? fail('not found on the PATH; set DSHBOX or pass { binary }');
}

function onPath(name, env) {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    if (executable(file)) return file;
  }
  return undefined;
}

function fail(why) {
  throw new Error(`dshbox: ${why}`);
}
