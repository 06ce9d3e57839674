/** Creating and deactivating API keys (the CLI's `keys` commands). Secrets are shown once, stored hashed. */
import type { Db } from '../../db/database.js';
import { isoNow, type Clock } from '../../shared/clock.js';
import { hashSecret, newApiKeySecret } from '../../shared/tokens.js';
import { findTeam, insertApiKey, nextApiKeyId, setApiKeyActive } from './teams.repository.js';

export class KeyCommandError extends Error {}

export interface CreatedKey {
  id: number;
  teamId: string;
  name: string;
  secret: string;
}

export async function createApiKey(db: Db, clock: Clock, input: { teamId: string; name: string }): Promise<CreatedKey> {
  const name = input.name.trim();
  if (name === '' || name.length > 200) throw new KeyCommandError('the key name must be 1-200 characters');
  const secret = newApiKeySecret();
  const now = isoNow(clock);
  // Retried because two concurrent creations may pick the same next id.
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
        if (!(await findTeam(trx, input.teamId))) throw new KeyCommandError(`there is no team "${input.teamId}"`);
        const id = await nextApiKeyId(trx);
        await insertApiKey(trx, { id, teamId: input.teamId, name, secretHash: hashSecret(secret), now });
        return { id, teamId: input.teamId, name, secret };
      });
    } catch (err) {
      if (err instanceof KeyCommandError || attempt >= 4) throw err;
    }
  }
}

export async function deactivateApiKey(db: Db, clock: Clock, keyId: number): Promise<void> {
  const updated = await setApiKeyActive(db, keyId, false, isoNow(clock));
  if (updated === 0) throw new KeyCommandError(`there is no API key ${keyId}`);
}
