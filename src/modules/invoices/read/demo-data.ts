/**
 * Demo mode (the published demo token): a built-in sample document and fixed links, and
 * writes that are validated and answered in full but never stored.
 */
export const DEMO_SHARE_TOKENS = { buyer: 'demo-buyer', colleague: 'demo-colleague' } as const;

/** The domain reference's VAT vector: subtotal 16499.99, VAT 3290.00, total 19789.99. */
export const DEMO_SAMPLE_PAYLOAD = {
  number: '15',
  date: '2026-03-02',
  currency: 'RUB',
  invoice_direction: 'outgoing',
  seller: { inn: '7707083893' },
  buyer: {
    name: 'ООО «Три кита»',
    inn: '7701234560',
    kpp: '770101001',
    email: 'buyer@three-whales.example',
    address: 'г. Москва, ул. Тестовая, д. 2',
  },
  items: [
    { name: 'Консультационные услуги', qty: 3, unit: 'ч', price: 1500, vat_pct: 22 },
    { name: 'Лицензия на программное обеспечение', qty: 1, unit: 'шт', price: 9999.99, vat_pct: 22 },
    { name: 'Доставка', qty: 2.5, unit: 'кг', price: 400, vat_pct: 10 },
    { name: 'Обучение персонала', qty: 1, unit: 'усл. ед', price: 1000, vat_pct: null },
  ],
  api_recipients: [{ email: 'accounting@three-whales.example', name: 'Бухгалтерия', position: 'Главный бухгалтер' }],
} as const;

export const DEMO_CREATED_AT = '2026-03-02T09:00:00.000Z';
