/**
 * Teams: tariffs, API keys and authentication, the team's reference data (organizations, bank
 * accounts, managers, signers), bootstrap files and the demo team. A bottom module: it imports
 * no other module.
 */
export { AuthService, DEMO_AUTH, DEMO_TEAM_ID, LEGACY_DEMO_TEAM_ID, type AuthContext, type CallerSource, type PresentedCredentials } from './auth.service.js';
export { createApiKey, deactivateApiKey, KeyCommandError, type CreatedKey } from './api-keys.service.js';
export { applyBootstrap, BootstrapError, seedDemoTeamIfEmpty, type BootstrapSummary, type DemoTeam } from './bootstrap.js';
export { BootstrapFileUnreadableError, importBootstrapFile } from './bootstrap-file.js';
export { DEMO_CATALOG_DATA } from './demo-organization.js';
export { loadCatalogData, organizationsWithinLimit, type CatalogData } from './organizations.js';
export { requireAuth } from './request-auth.js';
export { DEFAULT_TARIFF, tariffFromRow, type Tariff } from './tariffs.js';
export { ensureSetting, getSetting, listBankAccounts, listOrganizations, lockTeam } from './teams.repository.js';
export type { TeamStore } from './store/index.js';
export { createSqliteTeamStore } from './store/sqlite.js';
export { createPostgresTeamStore } from './store/postgres.js';
