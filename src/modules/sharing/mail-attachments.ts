/**
 * The invoice PDF for background jobs, rendered by the same code as the share pages: attached
 * to e-mails (of their revision) and sent through EDO.
 */
import type { EdoFileProvider } from '../edo/index.js';
import type { AttachmentProvider } from '../notifications/index.js';
import type { SharingService } from './sharing.service.js';

export function pdfAttachments(sharing: SharingService): AttachmentProvider {
  return async (email) => {
    const pdf = await sharing.revisionPdf(email.teamId, email.publicId, email.revision);
    return pdf ? [{ filename: pdf.filename.name, content: pdf.body, contentType: 'application/pdf' }] : [];
  };
}

export function edoDocumentFiles(sharing: SharingService): EdoFileProvider {
  return async (job) => {
    const current = await sharing.currentPdf(job.teamId, job.publicId, `edo:${job.jobId}`);
    if (!current) return null;
    return { revision: current.revision, file: { name: current.file.filename.name, contentType: 'application/pdf', content: current.file.body } };
  };
}
