/**
 * Russian labels for the document's field paths, shared by the edit form's controls and its
 * error summary, so "Позиция 3 — Цена" means the same field in both places.
 */
import type { FormValues } from './edit-form.js';
import { fieldId } from './html.js';

const TOP: Record<string, string> = {
  number: 'Номер счёта',
  date: 'Дата счёта',
  currency: 'Валюта',
  invoice_direction: 'Направление',
  due_date: 'Оплатить до',
  seller_status: 'Статус счёта',
  purpose: 'Назначение платежа',
  comment: 'Комментарий',
  buyer_edo_id: 'Идентификатор покупателя в ЭДО',
  prices_include_vat: 'Цены включают НДС',
  public_share_enabled: 'Открывать счёт по ссылке',
  show_payment_qr: 'Показывать QR-код для оплаты',
  seller: 'Поставщик',
  buyer: 'Покупатель',
  items: 'Позиции',
  api_recipients: 'Получатели уведомлений',
  signers: 'Подписанты',
  public_id: 'Идентификатор документа',
};

const PARTY: Record<string, string> = {
  name: 'Наименование',
  inn: 'ИНН',
  kpp: 'КПП',
  address: 'Адрес',
  email: 'E-mail',
  bank_name: 'Банк',
  bik: 'БИК',
  account: 'Расчётный счёт',
  corr_account: 'Корр. счёт',
};

const ROWS: Record<string, { noun: string; fields: Record<string, string> }> = {
  items: { noun: 'Позиция', fields: { name: 'Наименование', qty: 'Количество', unit: 'Единица', price: 'Цена', vat_pct: 'Ставка НДС' } },
  api_recipients: { noun: 'Получатель', fields: { email: 'E-mail', name: 'Имя', position: 'Должность' } },
  signers: { noun: 'Подписант', fields: { role: 'Роль', name: 'ФИО', position: 'Должность' } },
};

const get = (map: Record<string, string>, key: string) => (Object.hasOwn(map, key) ? map[key] : undefined);

/** "seller.inn" → "Поставщик — ИНН"; "items[2].price" → "Позиция 3 — Цена"; unknown paths as is. */
export function fieldLabel(path: string): string {
  const top = get(TOP, path);
  if (top) return top;
  const party = /^(seller|buyer)\.(\w+)$/.exec(path);
  if (party) {
    const field = get(PARTY, party[2] as string);
    return `${TOP[party[1] as string]} — ${field ?? party[2]}`;
  }
  const row = /^(items|api_recipients|signers)\[(\d+)\](?:\.(\w+))?$/.exec(path);
  if (row) {
    const group = ROWS[row[1] as string] as { noun: string; fields: Record<string, string> };
    const n = String(Number(row[2]) + 1);
    const field = row[3] === undefined ? undefined : (get(group.fields, row[3]) ?? row[3]);
    return field === undefined ? `${group.noun} ${n}` : `${group.noun} ${n} — ${field}`;
  }
  const template = /^(items|api_recipients|signers)\[__i__\]\.(\w+)$/.exec(path);
  if (template) {
    const group = ROWS[template[1] as string] as { noun: string; fields: Record<string, string> };
    return `${group.noun} __n__ — ${get(group.fields, template[2] as string) ?? template[2]}`;
  }
  return path;
}

/** The label beside a control inside its fieldset, where the legend names the party: "ИНН". */
export function partyFieldLabel(field: string): string {
  return get(PARTY, field) ?? field;
}

/**
 * The anchor an error summary entry links to: the field's control when the form has one,
 * otherwise the fieldset of its group, otherwise the form.
 */
export function groupOf(path: string, values: FormValues): string {
  if (Object.hasOwn(values, path)) return fieldId(path);
  const head = /^(\w+)/.exec(path)?.[1] ?? '';
  if (['seller', 'buyer', 'items', 'api_recipients', 'signers'].includes(head)) return `${head}-group`;
  if (['number', 'date', 'currency', 'invoice_direction', 'due_date', 'seller_status'].includes(head)) return 'document-group';
  return 'edit-form';
}
