export { AuthService, DEMO_AUTH, type AuthContext, type CallerSource } from './auth.service.js';
export { DEFAULT_TARIFF, tariffFromRow, type Tariff } from './tariffs.js';
