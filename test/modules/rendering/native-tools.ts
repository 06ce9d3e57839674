/**
 * The real decoders the rendering tests check output with: zbarimg (Debian zbar-tools) for
 * QR codes, pdftotext / pdfinfo / pdftoppm (poppler-utils) for PDFs. They are required, not
 * optional: a missing tool fails the test with the package to install.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

const PACKAGES: Record<string, string> = { zbarimg: 'zbar-tools', pdftotext: 'poppler-utils', pdfinfo: 'poppler-utils', pdftoppm: 'poppler-utils' };

async function run(tool: string, args: string[]): Promise<Buffer> {
  try {
    const { stdout } = await exec(tool, args, { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
    if (e.code === 'ENOENT') throw new Error(`${tool} is not installed: apt-get install ${PACKAGES[tool] ?? tool}`);
    throw new Error(`${tool} ${args.join(' ')} failed: ${e.message} ${e.stderr?.toString('utf8') ?? ''}`);
  }
}

/** Runs `fn` with `data` written to a fresh temporary file, then removes the directory. */
async function withFile<T>(data: Buffer, name: string, fn: (file: string, dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'invoicing-render-'));
  try {
    const file = path.join(dir, name);
    await writeFile(file, data);
    return await fn(file, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Decodes every QR symbol in a PNG and returns the exact bytes as UTF-8. `--raw` drops the
 * "QR-Code:" prefix, `-Sbinary` stops zbar from guessing a charset and converting (and from
 * appending a newline), so the result is byte for byte what the symbol holds.
 */
export async function decodeQrPng(png: Buffer): Promise<string> {
  return withFile(png, 'qr.png', async (file) => (await run('zbarimg', ['--quiet', '--raw', '-Sbinary', file])).toString('utf8'));
}

/** Like {@link decodeQrPng}, but the symbol's raw bytes, for payloads not in UTF-8 (ST00011). */
export async function decodeQrPngBytes(png: Buffer): Promise<Buffer> {
  return withFile(png, 'qr.png', async (file) => run('zbarimg', ['--quiet', '--raw', '-Sbinary', file]));
}

/** The raw bytes of the QR symbol in a PNG, or null when zbarimg finds none (its exit code 4). */
export async function findQrPngBytes(png: Buffer): Promise<Buffer | null> {
  return withFile(png, 'qr.png', async (file) => {
    try {
      return (await exec('zbarimg', ['--quiet', '--raw', '-Sbinary', file], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 })).stdout;
    } catch (err) {
      if ((err as { code?: unknown }).code === 4) return null;
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('zbarimg is not installed: apt-get install zbar-tools');
      throw err;
    }
  });
}

/** The PDF's text in layout mode, with runs of spaces collapsed to one. */
export async function pdfText(pdf: Buffer): Promise<string> {
  return withFile(pdf, 'doc.pdf', async (file) => {
    const text = (await run('pdftotext', ['-enc', 'UTF-8', '-layout', file, '-'])).toString('utf8');
    return text.replace(/[ \t]+/g, ' ');
  });
}

export async function pdfPageCount(pdf: Buffer): Promise<number> {
  return withFile(pdf, 'doc.pdf', async (file) => {
    const info = (await run('pdfinfo', [file])).toString('utf8');
    const m = /^Pages:\s+(\d+)/m.exec(info);
    if (!m) throw new Error(`pdfinfo printed no page count:\n${info}`);
    return Number(m[1]);
  });
}

/** Rasterizes one page of the PDF to PNG (at `dpi`) and returns the image. */
export async function pdfPagePng(pdf: Buffer, page: number, dpi = 200): Promise<Buffer> {
  return withFile(pdf, 'doc.pdf', async (file, dir) => {
    await run('pdftoppm', ['-r', String(dpi), '-png', '-f', String(page), '-l', String(page), file, path.join(dir, 'page')]);
    const png = (await readdir(dir)).find((f) => f.startsWith('page') && f.endsWith('.png'));
    if (!png) throw new Error('pdftoppm produced no image');
    return readFile(path.join(dir, png));
  });
}
