/**
 * What the edit page shows when the API's service refuses the posted document: the status of
 * the re-shown form, the messages next to fields, and a message for the whole form. Pure: the
 * service decides, this maps its closed error codes to the page.
 */
import type { ApiError } from '../../shared/errors.js';
import { validateInvoice } from '../invoices/index.js';
import { errorMessageRu, messagesByField } from './form-messages.js';

export interface RefusedEdit {
  status: 400 | 409;
  errors: Record<string, string>;
  formError?: string;
  /** The document changed meanwhile: show the form over the current revision (its ETag). */
  reloadRevision?: boolean;
}

export const REVISION_CONFLICT_MESSAGE =
  'Пока вы редактировали, документ изменили в другом месте. Ниже — ваши значения: проверьте их и сохраните ещё раз, ' +
  'чтобы заменить ими новую версию, или нажмите «Отмена», чтобы посмотреть её.';

/**
 * The form's answer to a refusal, or null for a code the form cannot explain (the caller
 * rethrows it). `parserErrors` (numbers the form could not read) win over validation's message
 * for the same field, as they say what to type.
 */
export function refusedEdit(err: ApiError, document: Record<string, unknown>, parserErrors: Record<string, string>): RefusedEdit | null {
  switch (err.body.error) {
    case 'validation_failed':
      return { status: 400, errors: { ...messagesByField(err.body.errors ?? [], errorMessageRu), ...parserErrors } };
    case 'prohibited_field': {
      // The API reports prohibited values alone; the form also shows what else is wrong, as
      // the same validation sees the document with those values blanked.
      const issues = err.body.errors ?? [];
      const rest = validateInvoice(blankPaths(document, issues.map((i) => i.field)));
      const others = rest.ok ? {} : messagesByField(rest.errors, errorMessageRu);
      return { status: 400, errors: { ...others, ...messagesByField(issues, errorMessageRu), ...parserErrors } };
    }
    case 'seller_org_not_allowed':
      return { status: 400, errors: { 'seller.inn': 'ИНН не совпадает ни с одной действующей организацией команды' } };
    case 'seller_org_over_tariff_limit':
      return { status: 400, errors: { 'seller.inn': 'Эта организация за пределами лимита организаций тарифа' } };
    case 'invalid_status_transition':
      return { status: 409, errors: { seller_status: 'Из текущего статуса счёта в выбранный перейти нельзя' } };
    case 'document_locked':
      return { status: 409, errors: {}, formError: 'Счёт оплачен или отменён, изменить его нельзя.' };
    case 'revision_conflict':
      return { status: 409, errors: {}, formError: REVISION_CONFLICT_MESSAGE, reloadRevision: true };
    default:
      return null;
  }
}

/** A copy of `doc` with the string at each path (`comment`, `items[2].name`) replaced by ''. */
export function blankPaths(doc: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  const copy = structuredClone(doc);
  for (const path of paths) {
    const keys = path.match(/[^.[\]]+/g) ?? [];
    const last = keys.pop();
    let holder: unknown = copy;
    for (const key of keys) holder = typeof holder === 'object' && holder !== null ? (holder as Record<string, unknown>)[key] : undefined;
    if (last === undefined || typeof holder !== 'object' || holder === null || !Object.hasOwn(holder, last)) continue;
    const record = holder as Record<string, unknown>;
    if (typeof record[last] === 'string') record[last] = '';
  }
  return copy;
}
