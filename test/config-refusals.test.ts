/** loadConfig against the operating contract, section 2: one clear line per bad value, naming the variable and never a secret. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/config.js';

const CWD = '/srv/invoicing';

describe('loadConfig refuses bad values with one line naming the variable', () => {
  const bad: Array<[string, string]> = [
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80\n80'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'sqlite:'],
    ['INVOICING_PUBLIC_URL', 'ftp://x'],
    ['INVOICING_PUBLIC_URL', 'not a url'],
    ['INVOICING_PUBLIC_URL', 'https://x.example/?a=1'],
    ['INVOICING_SHARE_URL', 'ftp://x'],
    ['INVOICING_PORTAL_URL', 'portal'],
    ['INVOICING_TRUST_PROXY', 'maybe'],
    ['INVOICING_IP_RATE_PER_SEC', '0'],
    ['INVOICING_IP_RATE_PER_SEC', '1.5'],
    ['INVOICING_DEMO_RATE_PER_SEC', '0'],
    ['REDIS_URL', 'http://x'],
    ['REDIS_URL', 'nope'],
    ['SMTP_URL', 'nope'],
    ['SMTP_URL', 'http://mail.example'],
    ['INVOICING_SECRET', 'short'],
    ['INVOICING_MAIL_FROM', 'bad'],
    ['INVOICING_DEMO_PUBLIC_ID', 'has space'],
    ['LOG_LEVEL', 'loud'],
    ['INVOICING_IN_PROCESS_WORKER', 'sometimes'],
    ['INVOICING_EDO_OPERATOR', 'diadoc'],
    ['INVOICING_EDO_URL', 'ftp://edo'],
    ['INVOICING_EDO_TIMEOUT_MS', '10'],
    ['INVOICING_EDO_POLL_INTERVAL_MS', 'often'],
    ['INVOICING_EDO_MAX_ATTEMPTS', '0'],
    ['INVOICING_EDO_SANDBOX_DELIVERY_MS', '-5'],
  ];

  it('needs the URL and the token for the http EDO operator', () => {
    expect(() => loadConfig({ INVOICING_EDO_OPERATOR: 'http', INVOICING_EDO_TOKEN: 't' }, CWD)).toThrow(/INVOICING_EDO_URL is required/);
    expect(() => loadConfig({ INVOICING_EDO_OPERATOR: 'http', INVOICING_EDO_URL: 'https://gw' }, CWD)).toThrow(/INVOICING_EDO_TOKEN is required/);
  });

  it.each(bad)('%s=%j', (variable, value) => {
    let error: unknown;
    try {
      loadConfig({ [variable]: value }, CWD);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { message } = error as ConfigError;
    expect((error as ConfigError).variable).toBe(variable);
    expect(message).toContain(variable);
    expect(message).not.toMatch(/[\r\n]/);
    expect(message.length).toBeLessThan(300);
  });

  it('never echoes a secret or credentials in the message', () => {
    const messages = [
      { INVOICING_SECRET: 'tooshort-but-secret' },
      { INVOICING_PUBLIC_URL: 'https://user:hunter2@x.example' },
      { DATABASE_URL: 'mysql://root:hunter2@db' },
      { REDIS_URL: 'http://:hunter2@cache' },
      { INVOICING_EDO_TOKEN: 'hunter2 with space' },
      { INVOICING_EDO_URL: 'https://gw:hunter2@edo.example' },
    ].map((env) => {
      try {
        loadConfig(env, CWD);
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    });
    for (const m of messages) {
      expect(m).not.toBe('');
      expect(m).not.toContain('hunter2');
      expect(m).not.toContain('tooshort-but-secret');
    }
  });
});
