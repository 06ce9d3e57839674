/** The invoice PDF as an e-mail attachment, rendered by the same code as the share pages. */
import type { AttachmentProvider } from '../notifications/index.js';
import type { SharingService } from './sharing.service.js';

export function pdfAttachments(sharing: SharingService): AttachmentProvider {
  return async (email) => {
    const pdf = await sharing.revisionPdf(email.teamId, email.publicId, email.revision);
    return pdf ? [{ filename: pdf.filename.name, content: pdf.body, contentType: 'application/pdf' }] : [];
  };
}
