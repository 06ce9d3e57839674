/**
 * The source tree as the architecture checks read it: the `.ts` files under a folder, each line
 * with its comments blanked out (so a check on code never trips over prose, and a check on prose
 * can read the comments alone), and an allow-list that can only shrink.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from '../helpers/process.js';

/** Every `.ts` file under `dir` (relative to the repository), as repository-relative paths with `/`, sorted. */
export function tsFilesUnder(dir: string): string[] {
  const root = path.join(REPO_ROOT, dir);
  if (!fs.existsSync(root)) return [];
  const out: string[] = [];
  const walk = (abs: string): void => {
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const child = path.join(abs, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile() && entry.name.endsWith('.ts')) out.push(path.relative(REPO_ROOT, child).split(path.sep).join('/'));
    }
  };
  walk(root);
  return out.sort();
}

export function readSource(file: string): string {
  return fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
}

/**
 * The comment ranges of a TypeScript text, found by the compiler's own parser (so `//` inside a
 * string, a template or a regular expression is never taken for a comment). Every comment lies
 * in the trivia after some node's or node list's start or end, which is where they are collected.
 */
function commentRanges(text: string): Array<[number, number]> {
  const source = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const seen = new Set<number>();
  const ranges: Array<[number, number]> = [];
  const collect = (pos: number): void => {
    if (seen.has(pos)) return;
    seen.add(pos);
    for (const r of ts.getLeadingCommentRanges(text, pos) ?? []) ranges.push([r.pos, r.end]);
  };
  const visit = (node: ts.Node): void => {
    collect(node.pos);
    collect(node.end);
    ts.forEachChild(node, visit, (list) => {
      collect(list.pos);
      collect(list.end);
      list.forEach(visit);
    });
  };
  collect(0);
  visit(source);
  return ranges;
}

/** The text's lines: `code` with every comment blanked, `comments` with only the comments kept. */
export function splitCodeAndComments(text: string): { code: string[]; comments: string[] } {
  const code = text.split('');
  const comments = text.replace(/[^\n]/g, ' ').split('');
  for (const [from, to] of commentRanges(text)) {
    for (let i = from; i < to; i++) {
      if (text[i] === '\n') continue;
      comments[i] = text[i] as string;
      code[i] = ' ';
    }
  }
  return { code: code.join('').split('\n'), comments: comments.join('').split('\n') };
}

/** A line a check found: where, and its text (trimmed). */
export interface Finding {
  file: string;
  line: number;
  text: string;
}

/**
 * Findings checked against an allow-list of `file → exact trimmed lines` (a line listed twice
 * allows it twice). The allowed ones are kept apart; `stale` are listed lines no longer found,
 * which the list should lose (it only shrinks).
 */
export function againstAllowList(
  findings: readonly Finding[],
  allowed: Readonly<Record<string, readonly string[]>>,
): { unexpected: Finding[]; allowed: Finding[]; stale: string[] } {
  const left = new Map<string, number>();
  for (const [file, lines] of Object.entries(allowed)) for (const line of lines) left.set(`${file}\u0000${line}`, (left.get(`${file}\u0000${line}`) ?? 0) + 1);
  const unexpected: Finding[] = [];
  const kept: Finding[] = [];
  for (const f of findings) {
    const key = `${f.file}\u0000${f.text}`;
    const n = left.get(key) ?? 0;
    if (n > 0) {
      left.set(key, n - 1);
      kept.push(f);
    } else {
      unexpected.push(f);
    }
  }
  const stale = [...left.entries()].flatMap(([key, n]) => Array.from({ length: n }, () => key.replace('\u0000', ': ')));
  return { unexpected, allowed: kept, stale };
}

export const showFindings = (findings: readonly Finding[]): string => findings.map((f) => `${f.file}:${f.line}: ${f.text}`).join('\n');
