// SPDX-License-Identifier: LGPL-2.1-or-later
/** The kinds of docs/serve.md, plus `server-exited` when the server died with the request pending. */
export type FenceErrorKind =
  | 'denied' | 'not-found' | 'conflict' | 'not-regular-file' | 'too-large' | 'invalid' | 'io'
  | 'not-text' | 'server-exited';

/** A failed fence operation: `kind`, the canonical `path`, and for `denied` the deciding `rule`. */
export class FenceError extends Error {
  name: 'FenceError';
  kind: FenceErrorKind;
  op: string | null;
  /** The canonical path; `"?"` when it is not UTF-8 (then `pathBytes` holds it). */
  path: string | null;
  pathBytes?: Buffer;
  mode: string | null;
  /** The deciding rule as written (`-- **\/*.pem`), `mode read-only`, or null. */
  rule: string | null;
}

/** dshbox itself failed (could not start, bad policy): not a verdict on a path. */
export class DshboxError extends Error {
  name: 'DshboxError';
  exitCode?: number | null;
  stderr?: string;
}
