/** The three status indicators of a document, their Russian labels and the seller transitions. */

export const SELLER_STATUSES = {
  draft: 'Черновик',
  issued: 'Выставлен',
  paid: 'Оплачен',
  cancelled: 'Отменён',
} as const;

export const BUYER_STATUSES = {
  not_sent: 'Не отправлен',
  sent: 'Отправлен',
  viewed: 'Просмотрен',
  payment_reported: 'Сообщил об оплате',
} as const;

export const SERVICE_STATUSES = {
  active: 'Активен',
  restricted: 'Ограничен',
} as const;

export type SellerStatus = keyof typeof SELLER_STATUSES;
export type BuyerStatus = keyof typeof BUYER_STATUSES;
export type ServiceStatus = keyof typeof SERVICE_STATUSES;

/** Allowed seller-status moves besides staying put. */
const SELLER_TRANSITIONS: Record<SellerStatus, readonly SellerStatus[]> = {
  draft: ['issued', 'cancelled'],
  issued: ['paid', 'cancelled'],
  paid: [],
  cancelled: [],
};

export function canMoveSellerStatus(from: SellerStatus, to: SellerStatus): boolean {
  return from === to || SELLER_TRANSITIONS[from].includes(to);
}

/** A paid or cancelled document accepts no other change. */
export function isLocked(status: SellerStatus): boolean {
  return status === 'paid' || status === 'cancelled';
}

export function labelled<T extends Record<string, string>>(map: T): Array<{ value: keyof T & string; label: string }> {
  return Object.entries(map).map(([value, label]) => ({ value: value as keyof T & string, label }));
}
