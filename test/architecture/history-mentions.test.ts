/**
 * Code and docs describe the system as it is (CONVENTIONS rule 17): no "Session N" or "issue N"
 * in `src/`, `test/` or `docs/` (the exceptions below aside). The allow-list is empty and stays
 * so: a mention added anywhere fails, and so does an entry whose line is gone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/process.js';
import { againstAllowList, showFindings, type Finding } from './source-files.js';

const HISTORY = /\b[Ss]ession \d+|\b[Ii]ssue \d+/;
/**
 * Not read: this file (it holds the pattern's examples) and the landed migrations, which are
 * never edited.
 */
const EXCEPTED = (file: string) => file === 'test/architecture/history-mentions.test.ts' || file.startsWith('src/db/migrations/');

/** Lines that still name a session or an issue, in files others are rewriting: none left. */
const NOT_YET_REWRITTEN: Record<string, string[]> = {};

/** Every text file under `dir` (binary files, with a NUL byte, left out). */
function textFilesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(REPO_ROOT, rel), { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile() && !fs.readFileSync(path.join(REPO_ROOT, child)).includes(0)) out.push(child);
    }
  };
  walk(dir);
  return out.sort();
}

function historyMentions(text: string, file: string): Finding[] {
  return text.split('\n').flatMap((line, i) => (HISTORY.test(line) ? [{ file, line: i + 1, text: line.trim() }] : []));
}

describe('history mentions', () => {
  it('names no session or issue in src/, test/ or docs/', () => {
    const files = ['src', 'test', 'docs'].flatMap(textFilesUnder).filter((file) => !EXCEPTED(file));
    const found = files.flatMap((file) => historyMentions(fs.readFileSync(path.join(REPO_ROOT, file), 'utf8'), file));
    const { unexpected, allowed, stale } = againstAllowList(found, NOT_YET_REWRITTEN);
    console.info(`history mentions left in files being rewritten: ${allowed.length}`);
    expect(showFindings(unexpected), 'state the invariant or the reason instead (the history is in the commit messages)').toBe('');
    expect(stale, 'these allowed lines are gone: delete them from the list').toEqual([]);
  });

  it('sees "Session N" and "issue N" in either case, and nothing else', () => {
    const text = ['a (issue 12) b', 'Session 5: PUT', 'see session 14', 'Issue 10, item 1', 'the issue is 12 ms', 'sessions', 'issues 3'].join('\n');
    expect(historyMentions(text, 'x').map((f) => f.line)).toEqual([1, 2, 3, 4]);
  });
});
