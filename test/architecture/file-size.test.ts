/**
 * Small files (CONVENTIONS rule 16): every `.ts` file of `src/`, `test/` and `bench/` has at most
 * 400 lines. The files of the modules being split (invoices, notifications, edo, and the table
 * types they share) are listed with their length today: they may only shrink, and an entry goes
 * once its file is within the bound (the test says so).
 */
import { describe, expect, it } from 'vitest';
import { readSource, tsFilesUnder } from './source-files.js';

const MAX_LINES = 400;

/** Files not yet split, with the most lines each may have. */
const NOT_YET_SPLIT: Record<string, number> = {};

/** Lines of a text as an editor counts them (a final line break ends the last line, it starts none). */
function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

describe('file size', () => {
  const sizes = ['src', 'test', 'bench'].flatMap(tsFilesUnder).map((file) => ({ file, lines: lineCount(readSource(file)) }));

  it(`keeps every .ts file of src/, test/ and bench/ within ${MAX_LINES} lines`, () => {
    const over = sizes.filter(({ file, lines }) => lines > (NOT_YET_SPLIT[file] ?? MAX_LINES));
    const waiting = sizes.filter(({ file, lines }) => NOT_YET_SPLIT[file] !== undefined && lines > MAX_LINES);
    console.info(`files still over ${MAX_LINES} lines, waiting to be split: ${waiting.length}`);
    expect(over.map(({ file, lines }) => `${file}: ${lines} lines`), `split these along a real seam (at most ${MAX_LINES} lines)`).toEqual([]);
  });

  it('lists only files that are still over the bound (the list only shrinks)', () => {
    const byFile = new Map(sizes.map((s) => [s.file, s.lines]));
    const done = Object.keys(NOT_YET_SPLIT).filter((file) => (byFile.get(file) ?? 0) <= MAX_LINES);
    expect(done, 'within the bound now: delete them from NOT_YET_SPLIT').toEqual([]);
  });

  it('counts lines as an editor does', () => {
    expect(lineCount('')).toBe(0);
    expect(lineCount('a')).toBe(1);
    expect(lineCount('a\n')).toBe(1);
    expect(lineCount('a\nb')).toBe(2);
    expect(lineCount('a\n\n')).toBe(2);
  });
});
