import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseWriteEnvelope, type WriteMethod } from '../../../src/modules/invoices/rules/envelope.js';
import { ApiError } from '../../../src/shared/errors.js';

const doc = { number: '1', date: '2026-03-02', currency: 'RUB', items: [] };

function refusal(body: unknown, method: WriteMethod): ApiError {
  try {
    parseWriteEnvelope(body, method);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('parseWriteEnvelope: where the document is', () => {
  it('POST: takes the document from `invoice` and the options from the root', () => {
    expect(parseWriteEnvelope({ invoice: doc, actor_login: 'ivan', notify_recipients: true, extra: 1 }, 'POST')).toEqual({
      document: doc,
      actorLogin: 'ivan',
      notify: true,
    });
  });

  it('POST: takes the root as the document, without the envelope keys', () => {
    const result = parseWriteEnvelope({ ...doc, actor_login: 'ivan', send_notifications: true, notify_recipients: false, erp: 'x' }, 'POST');
    expect(result).toEqual({ document: { ...doc, erp: 'x' }, actorLogin: 'ivan', notify: true });
  });

  it('PUT: takes the document from `invoice`', () => {
    expect(parseWriteEnvelope({ invoice: doc }, 'PUT')).toEqual({ document: doc, actorLogin: null, notify: false });
  });

  it('returns a copy: the body is never changed', () => {
    const body = { ...doc, actor_login: 'ivan' };
    const result = parseWriteEnvelope(body, 'POST');
    expect(body.actor_login).toBe('ivan');
    expect(result.document).not.toBe(body);
  });

  it('keeps envelope-like keys inside `invoice` as document properties', () => {
    expect(parseWriteEnvelope({ invoice: { ...doc, actor_login: 'x' } }, 'PUT').document).toHaveProperty('actor_login', 'x');
  });

  it.each([null, [], 'text', 42, true])('refuses the body %j with invalid_request', (body) => {
    for (const method of ['POST', 'PUT'] as const) {
      const err = refusal(body, method);
      expect(err.status).toBe(400);
      expect(err.body.error).toBe('invalid_request');
    }
  });

  it.each([null, 'x', [doc], 1])('refuses `invoice` = %j with invalid_request, POST and PUT', (invoice) => {
    for (const method of ['POST', 'PUT'] as const) expect(refusal({ invoice }, method).body.error).toBe('invalid_request');
  });

  it('PUT without `invoice` says the full document goes in `invoice`', () => {
    const err = refusal(doc, 'PUT');
    expect(err.body.error).toBe('invalid_request');
    expect(err.body.details).toContain('`invoice`');
  });
});

describe('parseWriteEnvelope: partial updates', () => {
  it.each([
    [{ partial_update: true, invoice: doc }, 'PUT'],
    [{ patch: false, invoice: doc }, 'PUT'],
    [{ patch: null }, 'PUT'],
    [{ invoice: { ...doc, partial_update: true } }, 'PUT'],
    [{ ...doc, patch: true }, 'POST'],
    [{ invoice: { ...doc, patch: 'yes' } }, 'POST'],
    [{ partial_update: 0, invoice: 'not even an object' }, 'POST'],
  ] as const)('refuses %j (%s) with partial_update_not_supported', (body, method) => {
    const err = refusal(body, method);
    expect(err.status).toBe(400);
    expect(err.body.error).toBe('partial_update_not_supported');
  });

  it('names where the flag was found', () => {
    expect(refusal({ patch: true, invoice: { partial_update: true } }, 'PUT').body.details).toContain('patch, invoice.partial_update');
  });
});

describe('parseWriteEnvelope: envelope options', () => {
  it.each([
    [{}, false],
    [{ notify_recipients: true }, true],
    [{ send_notifications: true }, true],
    [{ notify_recipients: false, send_notifications: true }, true],
    [{ notify_recipients: false, send_notifications: false }, false],
    [{ notify_recipients: null }, false],
  ])('%j notifies: %s', (flags, notify) => {
    expect(parseWriteEnvelope({ invoice: doc, ...flags }, 'PUT').notify).toBe(notify);
  });

  it('trims actor_login; blank or null is not given; 200 characters are allowed', () => {
    expect(parseWriteEnvelope({ invoice: doc, actor_login: '  ivan ' }, 'PUT').actorLogin).toBe('ivan');
    expect(parseWriteEnvelope({ invoice: doc, actor_login: '  ' }, 'PUT').actorLogin).toBeNull();
    expect(parseWriteEnvelope({ invoice: doc, actor_login: null }, 'PUT').actorLogin).toBeNull();
    expect(parseWriteEnvelope({ invoice: doc, actor_login: 'я'.repeat(200) }, 'PUT').actorLogin).toHaveLength(200);
  });

  it('refuses wrong envelope types with validation_failed, listing each', () => {
    const err = refusal({ invoice: doc, actor_login: 5, notify_recipients: 'yes', send_notifications: 1 }, 'PUT');
    expect(err.status).toBe(400);
    expect(err.body).toMatchObject({ ok: false, error: 'validation_failed', missing_fields: [] });
    expect(err.body.errors?.map((e) => [e.field, e.code])).toEqual([
      ['actor_login', 'invalid_type'],
      ['notify_recipients', 'invalid_type'],
      ['send_notifications', 'invalid_type'],
    ]);
    expect(err.body.details).toMatch(/^3 fields are invalid: /);
  });

  it('refuses an actor_login over 200 characters', () => {
    const err = refusal({ ...doc, actor_login: 'x'.repeat(201) }, 'POST');
    expect(err.body.errors).toEqual([expect.objectContaining({ field: 'actor_login', code: 'too_long' })]);
  });
});

describe('parseWriteEnvelope: properties', () => {
  const envelope = fc.record(
    {
      invoice: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.jsonValue()),
      actor_login: fc.oneof(fc.string({ maxLength: 250 }), fc.jsonValue()),
      notify_recipients: fc.oneof(fc.boolean(), fc.jsonValue()),
      send_notifications: fc.oneof(fc.boolean(), fc.jsonValue()),
      partial_update: fc.jsonValue(),
      patch: fc.jsonValue(),
      extra: fc.jsonValue(),
    },
    { requiredKeys: [] },
  );

  it('returns the documented shape or throws an ApiError, for any input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), envelope, fc.dictionary(fc.string(), fc.jsonValue())), fc.constantFrom<WriteMethod>('POST', 'PUT'), (body, method) => {
        let result;
        try {
          result = parseWriteEnvelope(body, method);
        } catch (err) {
          expect(err).toBeInstanceOf(ApiError);
          const { body: errorBody, status } = err as ApiError;
          expect(status).toBe(400);
          expect(['invalid_request', 'partial_update_not_supported', 'validation_failed']).toContain(errorBody.error);
          expect(typeof errorBody.details).toBe('string');
          return;
        }
        expect(typeof result.document === 'object' && result.document !== null && !Array.isArray(result.document)).toBe(true);
        expect(result.actorLogin === null || (typeof result.actorLogin === 'string' && result.actorLogin.length <= 200)).toBe(true);
        expect(typeof result.notify).toBe('boolean');
        for (const key of ['partial_update', 'patch']) expect(Object.hasOwn(result.document, key)).toBe(false);
        if (method === 'PUT') expect(Object.hasOwn(body as object, 'invoice')).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
