/** Reference values every module shares: currencies, directions, VAT rates and OKEI units. */

export const CURRENCIES = {
  RUB: 'Российский рубль',
  USD: 'Доллар США',
  EUR: 'Евро',
  CNY: 'Китайский юань',
  KZT: 'Казахстанский тенге',
  BYN: 'Белорусский рубль',
} as const;
export type Currency = keyof typeof CURRENCIES;
export const CURRENCY_CODES = Object.keys(CURRENCIES) as Currency[];

export const INVOICE_DIRECTIONS = {
  outgoing: 'Исходящий',
  incoming: 'Входящий',
} as const;

/** Russian VAT rates in 2026; `null` is "без НДС" (not a VAT payer). */
export const VAT_RATES: Array<{ value: number | null; label: string }> = [
  { value: 22, label: '22%' },
  { value: 20, label: '20% (ставка до 2026 года)' },
  { value: 10, label: '10%' },
  { value: 7, label: '7%' },
  { value: 5, label: '5%' },
  { value: 0, label: '0%' },
  { value: null, label: 'Без НДС' },
];
export const STANDARD_VAT_PCTS = [22, 20, 10, 7, 5, 0];

/** Common units with their OKEI codes. */
export const UNITS: Array<{ code: string; okei: string; name: string }> = [
  { code: 'шт', okei: '796', name: 'Штука' },
  { code: 'ч', okei: '356', name: 'Час' },
  { code: 'усл. ед', okei: '876', name: 'Условная единица' },
  { code: 'кг', okei: '166', name: 'Килограмм' },
  { code: 'м', okei: '006', name: 'Метр' },
  { code: 'ед', okei: '642', name: 'Единица' },
  { code: 'компл', okei: '839', name: 'Комплект' },
  { code: 'м²', okei: '055', name: 'Квадратный метр' },
  { code: 'л', okei: '112', name: 'Литр' },
  { code: 'мес', okei: '362', name: 'Месяц' },
];
