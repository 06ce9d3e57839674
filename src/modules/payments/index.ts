/**
 * Payments: the pure core of bank-statement reconciliation (operating contract §6.1): the
 * 1CClientBankExchange parser, a payment's direction, date and deduplication key, the request
 * amount rule, the purpose's tokens and the matching of a payment to documents. docs/payments.md.
 */
export * from './statement/statement-types.js';
export { parseStatement, parseStatementBuffer, StatementParser, type StatementInput, type StatementParserStats } from './statement/statement-parser.js';
export { detectEncoding } from './statement/encoding-detection.js';
export * from './rules/payment-direction.js';
export * from './rules/payment-dedup-key.js';
export * from './rules/request-amount.js';
export * from './rules/purpose-tokens.js';
export * from './rules/payment-matching.js';
