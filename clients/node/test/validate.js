// SPDX-License-Identifier: LGPL-2.1-or-later
// The subset of JSON Schema (2020-12) that schema/*.json use: type, enum, const, properties,
// required, additionalProperties, items, minimum, minLength, pattern, oneOf, anyOf, allOf and
// local $ref.  Returns the list of errors (empty: valid).
function typeOf(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

export function validate(schema, value, root = schema, at = '$') {
  const errors = [];
  const sub = (s, v, where) => validate(s, v, root, where);
  if (schema.$ref) {
    const target = schema.$ref.replace(/^#\//, '').split('/').reduce((o, k) => o[k], root);
    errors.push(...sub(target, value, at));
  }
  if (schema.type) {
    const types = [].concat(schema.type);
    const t = typeOf(value);
    if (!types.includes(t) && !(t === 'integer' && types.includes('number')))
      return [...errors, `${at}: expected ${types.join('|')}, got ${t}`];
  }
  if ('const' in schema && value !== schema.const) errors.push(`${at}: expected ${JSON.stringify(schema.const)}`);
  if (schema.enum && !schema.enum.includes(value)) errors.push(`${at}: ${JSON.stringify(value)} not in ${JSON.stringify(schema.enum)}`);
  if (typeof value === 'number' && schema.minimum !== undefined && value < schema.minimum) errors.push(`${at}: below ${schema.minimum}`);
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) errors.push(`${at}: shorter than ${schema.minLength}`);
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) errors.push(`${at}: does not match ${schema.pattern}`);
  }
  if (typeOf(value) === 'object') {
    for (const k of schema.required ?? []) if (!(k in value)) errors.push(`${at}: missing ${k}`);
    for (const [k, v] of Object.entries(value)) {
      if (schema.properties && k in schema.properties) errors.push(...sub(schema.properties[k], v, `${at}.${k}`));
      else if (schema.additionalProperties === false) errors.push(`${at}: unknown key ${k}`);
      else if (typeof schema.additionalProperties === 'object') errors.push(...sub(schema.additionalProperties, v, `${at}.${k}`));
    }
    for (const [k, s] of Object.entries(schema.dependentSchemas ?? {})) if (k in value) errors.push(...sub(s, value, at));
  }
  if (Array.isArray(value) && schema.items) value.forEach((v, i) => errors.push(...sub(schema.items, v, `${at}[${i}]`)));
  for (const s of schema.allOf ?? []) errors.push(...sub(s, value, at));
  if (schema.anyOf && !schema.anyOf.some((s) => sub(s, value, at).length === 0)) errors.push(`${at}: matches none of anyOf`);
  if (schema.oneOf) {
    const n = schema.oneOf.filter((s) => sub(s, value, at).length === 0).length;
    if (n !== 1) errors.push(`${at}: matches ${n} of oneOf, not exactly one`);
  }
  return errors;
}
