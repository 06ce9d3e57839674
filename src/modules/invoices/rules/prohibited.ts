/**
 * Media never enter through the API (spec 1.9 and 2.2, operating contract §4 "Documents"):
 * logos, stamps, facsimiles and QR images come from the organization data and the service
 * settings. A document carrying a URL or image data is refused as a whole with 400
 * `prohibited_field`, naming every offending path, so the client fixes everything in one go.
 *
 * What is prohibited, anywhere in the document:
 * - a property whose name ends in `_url`, `_uri` or `_link` (any letter case), whatever its
 *   value, even null: the spec forbids the fields, not only their content. This covers the six
 *   fields the spec names, which are listed explicitly only to give them a clearer message;
 * - a string that is, once trimmed, a whole `http://`, `https://` or `data:` URL (a sentence that
 *   merely mentions a URL is text, not a link field);
 * - base64 image data: at least 32 base64 characters whose decoded bytes start with the magic
 *   number of an image format. Decoding and checking the magic bytes, rather than matching text
 *   prefixes such as `Qk`, keeps ordinary text, account numbers and ids from being mistaken
 *   for images.
 *
 * Walks are iterative (an explicit stack), so a deeply nested body cannot overflow the call
 * stack, and stop at a depth limit, so even a cyclic in-memory object terminates.
 */
import { Buffer } from 'node:buffer';
import type { ValidationIssue } from '../model/invoice.model.js';

/** The six fields the spec names; `[]` stands for any array index. */
export const NAMED_PROHIBITED_FIELDS = [
  'seller_logo_url',
  'seller_stamp_url',
  'payment_qr_url',
  'signers[].facsimile_url',
  'manager.contact_qr_url',
  'buyer_contact.contact_qr_url',
] as const;

const PROHIBITED_NAME = /_(?:url|uri|link)$/i;

/**
 * Something host-like must follow the scheme and nothing may be whitespace: the value is one
 * link, not prose. One leading class then `\S*` keeps the match linear on megabyte strings.
 */
const HTTP_URL = /^https?:\/\/[^\s/?#]\S*$/i;

/**
 * RFC 2397: `data:[<mediatype>][;param]*,<data>`. The media type and parameters are token
 * characters, so prose such as "Data: see the contract" is not matched.
 */
const TOKEN = "[a-z0-9!#$&^_.+'-]+";
const DATA_URL = new RegExp(`^data:(?:${TOKEN}/${TOKEN})?(?:;${TOKEN}(?:=[^;,\\s]*)?)*,`, 'i');

/** A data URL with its `data:` cut off (`image/png;base64,...`) still carries an image. */
const MEDIA_TYPE_PREFIX = new RegExp(`^${TOKEN}/${TOKEN};base64,`, 'i');

/** Standard or URL-safe alphabet, optional padding; line breaks are removed before the test. */
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
export const MIN_BASE64_IMAGE_LENGTH = 32;
/** Base64 characters decoded to look for a signature; enough to find `<svg` after an XML prolog. */
const BASE64_HEAD_CHARS = 4096;

export function isWholeUrl(value: string): boolean {
  const s = value.trim();
  return HTTP_URL.test(s) || DATA_URL.test(s);
}

function startsWith(bytes: Buffer, signature: readonly number[], offset = 0): boolean {
  if (bytes.length < offset + signature.length) return false;
  return signature.every((b, i) => bytes[offset + i] === b);
}

function ascii(text: string): number[] {
  return [...text].map((c) => c.charCodeAt(0));
}

const DIB_HEADER_SIZES = new Set([12, 40, 52, 56, 64, 108, 124]);
const ISO_BMFF_IMAGE_BRANDS = new Set(['avif', 'avis', 'heic', 'heix', 'heim', 'heis', 'mif1', 'msf1']);

/** Magic numbers of the image formats a client could plausibly paste; the checks beyond the first bytes keep short signatures honest. */
function hasImageSignature(bytes: Buffer): boolean {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return true; // PNG
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return true; // JPEG
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return true;
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return true;
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return true; // TIFF
  if (startsWith(bytes, ascii('ftyp'), 4) && ISO_BMFF_IMAGE_BRANDS.has(bytes.toString('latin1', 8, 12))) return true; // AVIF, HEIC
  // BMP: "BM" alone is two letters of text; the reserved bytes are zero and the DIB header has a known size.
  if (startsWith(bytes, ascii('BM')) && bytes.length >= 18 && bytes.readUInt32LE(6) === 0 && DIB_HEADER_SIZES.has(bytes.readUInt32LE(14))) {
    return true;
  }
  // ICO / CUR: reserved 0, type 1 or 2, at least one image, and the first entry's reserved byte is 0.
  if ((startsWith(bytes, [0, 0, 1, 0]) || startsWith(bytes, [0, 0, 2, 0])) && bytes.length >= 10 && bytes.readUInt16LE(4) > 0 && bytes[9] === 0) {
    return true;
  }
  // SVG: "<svg", or an XML prolog / doctype followed by an <svg> element (a base64 XML document that is not an image passes).
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '').trimStart().toLowerCase();
  if (text.startsWith('<svg')) return true;
  return (text.startsWith('<?xml') || text.startsWith('<!doctype')) && text.includes('<svg');
}

/** True when `value` is base64 (optionally line-wrapped, optionally after `type/subtype;base64,`) that decodes to an image. */
export function isBase64Image(value: string): boolean {
  let s = value.trim();
  const prefix = MEDIA_TYPE_PREFIX.exec(s);
  if (prefix) s = s.slice(prefix[0].length);
  // MIME and PEM wrap base64 at 64–76 characters; spaces are not removed, so prose never turns into base64.
  s = s.replace(/[\r\n]+/g, '');
  if (s.length < MIN_BASE64_IMAGE_LENGTH || !BASE64.test(s)) return false;
  const head = s.slice(0, BASE64_HEAD_CHARS).replace(/=+$/, '');
  return hasImageSignature(Buffer.from(head.slice(0, head.length - (head.length % 4)), 'base64'));
}

/** A path segment: `a.b` for plain names, `a["odd.key"]` for names a reader could not split unambiguously. */
const PLAIN_KEY = /^[^.[\]"'\s]+$/;
/** A key longer than this is quoted cut short in a path, so a report stays small whatever the key. */
export const PATH_KEY_MAX_CHARS = 100;

export function childPath(parent: string, key: string): string {
  const shown = key.length > PATH_KEY_MAX_CHARS ? `${key.slice(0, PATH_KEY_MAX_CHARS)}…` : key;
  if (shown !== key || !PLAIN_KEY.test(key)) return `${parent}[${JSON.stringify(shown)}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

/**
 * A node of the document. Its path is not built during the walk: copying the parent's path for
 * every child costs the length of the path per node (quadratic for a long key over many
 * children), so a node links to its parent and `pathOf` builds the path only for offenders.
 */
export interface JsonNode {
  parent: JsonNode | null;
  /** Property name for object members, `null` for the root and array elements. */
  key: string | null;
  /** Index for array elements, -1 otherwise. */
  index: number;
  value: unknown;
  /** 0 for the root, 1 for its members, and so on. */
  depth: number;
}

/** `items[2].name`; `''` for the root. Costs the depth of the node, paid only for reported nodes. */
export function pathOf(node: JsonNode): string {
  const chain: JsonNode[] = [];
  for (let n: JsonNode | null = node; n !== null && n.parent !== null; n = n.parent) chain.push(n);
  let path = '';
  for (let i = chain.length - 1; i >= 0; i--) {
    const n = chain[i] as JsonNode;
    path = n.key === null ? `${path}[${n.index}]` : childPath(path, n.key);
  }
  return path;
}

/**
 * Visits every node in document order, depth-first, without recursion, once each: the walk is
 * linear in the size of the document. `visit` returns false to skip a node's children. Nodes
 * deeper than `maxDepth` are visited but never descended into.
 */
export function walkJson(root: unknown, maxDepth: number, visit: (node: JsonNode) => boolean): void {
  const stack: JsonNode[] = [{ parent: null, key: null, index: -1, value: root, depth: 0 }];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (!visit(node) || node.depth >= maxDepth) continue;
    const { value, depth } = node;
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ parent: node, key: null, index: i, value: value[i], depth: depth + 1 });
    } else {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i] as string;
        stack.push({ parent: node, key: k, index: -1, value: (value as Record<string, unknown>)[k], depth: depth + 1 });
      }
    }
  }
}

/** `signers[3].facsimile_url` → `signers[].facsimile_url`, to compare with the spec's list. */
function pathPattern(path: string): string {
  return path.replace(/\[\d+\]/g, '[]');
}

const NAMED = new Set<string>(NAMED_PROHIBITED_FIELDS);

/** How many offenders a refusal lists; the rest are counted, so a report stays small. */
export const MAX_REPORTED_ISSUES = 100;

type Offence = 'name' | 'url' | 'image';

function offenceOf(node: JsonNode): Offence | null {
  if (node.key !== null && PROHIBITED_NAME.test(node.key)) return 'name';
  if (typeof node.value !== 'string') return null;
  if (isWholeUrl(node.value)) return 'url';
  if (isBase64Image(node.value)) return 'image';
  return null;
}

function prohibitedIssue(node: JsonNode, offence: Offence): ValidationIssue {
  const path = pathOf(node);
  switch (offence) {
    case 'name': {
      const message = NAMED.has(pathPattern(path))
        ? `${path} is not accepted through the API: images come from the organization data and service settings`
        : `${path} is prohibited: no URL or link fields (names ending in _url, _uri or _link) are accepted`;
      return { field: path, code: 'prohibited_field', message };
    }
    case 'url':
      return { field: path, code: 'prohibited_field', message: `${path} is a URL; URLs and media are not accepted through the API` };
    case 'image':
      return { field: path, code: 'prohibited_field', message: `${path} contains base64 image data; media are not accepted through the API` };
  }
}

export interface ProhibitedReport {
  /** The first MAX_REPORTED_ISSUES offenders, in document order. */
  issues: ValidationIssue[];
  /** Every offender, listed or not. */
  total: number;
}

/**
 * The prohibited paths of the document, in document order: the first MAX_REPORTED_ISSUES
 * listed, all counted. A prohibited property is reported once and not searched further: its
 * whole value goes away with it.
 */
export function findProhibitedFields(doc: Record<string, unknown>, maxDepth: number): ProhibitedReport {
  const issues: ValidationIssue[] = [];
  let total = 0;
  walkJson(doc, maxDepth, (node) => {
    const offence = node.depth === 0 ? null : offenceOf(node);
    if (offence === null) return true;
    total++;
    if (issues.length < MAX_REPORTED_ISSUES) issues.push(prohibitedIssue(node, offence));
    return false;
  });
  return { issues, total };
}

/** The first path nested deeper than `maxDepth`, or null. */
export function findTooDeepPath(doc: unknown, maxDepth: number): string | null {
  let found: JsonNode | null = null;
  walkJson(doc, maxDepth + 1, (node) => {
    if (found === null && node.depth > maxDepth) found = node;
    return found === null;
  });
  return found === null ? null : pathOf(found);
}
