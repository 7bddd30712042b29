// SPDX-License-Identifier: LGPL-2.1-or-later
// One error type for the fence: the answer's error object, as dshbox serve sent it.

export class FenceError extends Error {
  /**
   * @param {{ kind: string, op?: string|null, path?: string|null, path_base64?: string,
   *           mode?: string|null, rule?: string|null, message?: string }} e
   */
  constructor(e) {
    super(e.message ?? e.kind);
    this.name = 'FenceError';
    this.kind = e.kind;
    this.op = e.op ?? null;
    this.path = e.path ?? null;
    if (e.path_base64 !== undefined) this.pathBytes = Buffer.from(e.path_base64, 'base64');
    this.mode = e.mode ?? null;
    this.rule = e.rule ?? null;
  }
}

/** dshbox could not start or ended unexpectedly: not a verdict on a path. */
export class DshboxError extends Error {
  constructor(message, details = {}) {
    super(message);
    this.name = 'DshboxError';
    Object.assign(this, details);
  }
}
