/** Creating and deactivating API keys (the CLI's `keys` commands). Secrets are shown once, stored hashed. */
import type { Db } from '../../db/database.js';
import { isoNow, type Clock } from '../../shared/clock.js';
import { hashSecret, newApiKeySecret } from '../../shared/tokens.js';
import { tariffFromRow } from './tariffs.js';
import { countActiveKeysBefore, findTariff, findTeam, insertApiKey, nextApiKeyId, setApiKeyActive } from './teams.repository.js';

export class KeyCommandError extends Error {}

export interface CreatedKey {
  id: number;
  teamId: string;
  name: string;
  secret: string;
  /** False when the team's tariff already has max_api_keys active keys: this one is refused until one goes. */
  withinTariff: boolean;
  maxApiKeys: number;
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
        const team = await findTeam(trx, input.teamId);
        if (!team) throw new KeyCommandError(`there is no team "${input.teamId}"`);
        const id = await nextApiKeyId(trx);
        await insertApiKey(trx, { id, teamId: input.teamId, name, secretHash: hashSecret(secret), now });
        const tariff = tariffFromRow(team.tariff_id ? await findTariff(trx, team.tariff_id) : undefined);
        const rank = await countActiveKeysBefore(trx, input.teamId, id);
        return { id, teamId: input.teamId, name, secret, withinTariff: rank < tariff.max_api_keys, maxApiKeys: tariff.max_api_keys };
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
