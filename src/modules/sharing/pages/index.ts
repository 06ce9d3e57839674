/** Share and portal pages: pure templates (view model → HTML) and the static assets they link. */
export { PAGE_ASSETS, STATIC_ASSETS, type StaticAsset } from './assets.js';
export {
  EDIT_FORM_KEYS,
  NUMBER_FORMAT_MESSAGE,
  editFormValues,
  mergeEditedDocument,
  parseDecimalInput,
  parseEditForm,
  parseEditFormDetailed,
  type EditFormState,
  type FormValues,
  type ParsedEditForm,
  type PostedFields,
} from './edit-form.js';
export { renderMessagePage, renderNotFoundPage, renderShareDisabledPage, type MessagePageInput } from './error-pages.js';
export { fieldLabel } from './field-labels.js';
export { escapeHtml, html, safeUrl, SafeHtml, trustedHtml } from './html.js';
export { renderPortalEditPage, type EditPageInput } from './portal-edit-page.js';
export { formatTimestampRu, portalViewInput, renderPortalViewPage, type PortalLink, type PortalMeta, type PortalViewPageInput } from './portal-view-page.js';
export { renderSharePage, type SharePageInput } from './share-page.js';
