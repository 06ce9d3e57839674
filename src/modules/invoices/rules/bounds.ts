/**
 * Bounds on every part of a document, known or not (docs/security.md, "Input bounds").
 * Known fields have their own limits in validation.ts; this one linear walk bounds everything
 * else a client can send as additional properties (`manager.*`, `buyer_contact.*`,
 * `signers[].*`, extra item properties, `basis`, `document_title`...), so no part of a stored
 * document, and so of the PDF and e-mail built from it, is unbounded:
 * - nesting deeper than `maxDepth`: `too_deep` (reported once, at the first such path);
 * - a string longer than its field's limit (FIELD_MAX_LENGTH by name, else `anyStringMaxLength`):
 *   `too_long`; a property name longer than `keyMaxLength`: `too_long`;
 * - an array with more than `anyArrayMaxItems` elements: `too_many_items`; an object with more
 *   than `objectMaxProperties` properties: `too_many_properties`;
 * - U+0000 in any string or property name: `invalid_character` (PostgreSQL text cannot hold it).
 * Issues are returned in document order; the walk never builds a path it does not report.
 */
import { longerThan } from './validation-fields.js';
import { FIELD_MAX_LENGTH, INVOICE_LIMITS as L } from './limits.js';
import { pathOf, walkJson, type JsonNode } from './prohibited.js';
import type { ValidationIssue } from '../model/invoice.model.js';


export { FIELD_MAX_LENGTH };

function stringLimit(node: JsonNode): number {
  // An item's name (`items[i].name`) has its own, longer limit.
  const owner = node.parent?.parent;
  if (node.key === 'name' && owner?.key === 'items' && owner.depth === 1) return L.itemNameMaxLength;
  return (node.key !== null && FIELD_MAX_LENGTH[node.key]) || L.anyStringMaxLength;
}

/**
 * Every bound the document breaks, in document order. Linear in the document's size: each
 * node is visited once, a key or string is scanned at most once, and a path is built only for
 * a reported node.
 */
export function findBoundViolations(doc: Record<string, unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  let tooDeepReported = false;
  const report = (node: JsonNode, code: string, message: (path: string) => string) => {
    const path = pathOf(node);
    issues.push({ field: path, code, message: message(path) });
  };
  walkJson(doc, L.maxDepth + 1, (node) => {
    if (node.depth > L.maxDepth) {
      if (!tooDeepReported) report(node, 'too_deep', (p) => `${p} is nested deeper than ${L.maxDepth} levels`);
      tooDeepReported = true;
      return false;
    }
    const { key, value } = node;
    if (key !== null) {
      if (key.includes('\u0000')) report(node, 'invalid_character', (p) => `the property name at ${p} must not contain the NUL character (U+0000)`);
      else if (longerThan(key, L.keyMaxLength)) report(node, 'too_long', (p) => `the property name at ${p} is longer than ${L.keyMaxLength} characters`);
    }
    if (typeof value === 'string') {
      if (value.includes('\u0000')) report(node, 'invalid_character', (p) => `${p} must not contain the NUL character (U+0000)`);
      else {
        const max = stringLimit(node);
        if (longerThan(value, max)) report(node, 'too_long', (p) => `${p} must be at most ${max} characters`);
      }
    } else if (Array.isArray(value)) {
      if (value.length > L.anyArrayMaxItems) {
        report(node, 'too_many_items', (p) => `${p} has ${value.length} entries; at most ${L.anyArrayMaxItems} are allowed`);
        return false;
      }
    } else if (typeof value === 'object' && value !== null) {
      const count = Object.keys(value).length;
      if (count > L.objectMaxProperties) {
        report(node, 'too_many_properties', (p) => `${p || 'the document'} has ${count} properties; at most ${L.objectMaxProperties} are allowed`);
        return false;
      }
    }
    return true;
  });
  return issues;
}
