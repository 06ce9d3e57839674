export { AuthService, DEMO_AUTH, DEMO_TEAM_ID, LEGACY_DEMO_TEAM_ID, type AuthContext, type CallerSource } from './auth.service.js';
export { DEFAULT_TARIFF, tariffFromRow, type Tariff } from './tariffs.js';
