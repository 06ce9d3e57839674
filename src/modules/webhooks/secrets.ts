/**
 * Signing secrets. Standard Webhooks signs with HMAC, so the service must be able to recover a
 * secret (a hash would not do): secrets are stored encrypted (AES-256-GCM) under a key derived
 * from the service secret (INVOICING_SECRET or the one kept in the database). They are shown
 * once, at creation and rotation, and never logged.
 */
import crypto from 'node:crypto';

/** `whsec_` + base64 of 32 random bytes (the standard asks for 24 to 64). */
export function newSigningSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

export class SecretBox {
  private readonly key: Buffer;

  constructor(serviceSecret: string) {
    this.key = crypto.createHmac('sha256', serviceSecret).update('invoicing webhook signing secrets v1').digest();
  }

  seal(secret: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  open(sealed: string): string {
    if (!sealed.startsWith('v1.')) throw new Error('unknown sealed secret format');
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/** One Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. */
export function signPayload(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  return `v1,${crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
}
