export { AuthService, type AuthContext } from './auth.service.js';
export { DEFAULT_TARIFF, tariffFromRow, type Tariff } from './tariffs.js';
