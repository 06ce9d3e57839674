/**
 * The PDF of a document for the background jobs: the attachment of its e-mails (notifications'
 * `AttachmentProvider`) and the file of its EDO sends (edo's `EdoFileProvider`). A
 * composition-root adapter: the invoices module's print model of the document as it is now
 * (`DocumentPrints`, which needs only the invoices store), rendered by the PDF renderer through
 * the render cache the share pages use. So notifications and edo get their sources when they
 * are built, and nothing above them (the documents service, the pages) is needed first
 * (docs/architecture.md, "Attachments").
 */
import type { EdoFileProvider } from './modules/edo/index.js';
import { pdfFilenames, type DocumentPrints } from './modules/invoices/index.js';
import type { AttachmentProvider } from './modules/notifications/index.js';
import { renderKey, type PdfRenderer, type RenderCache } from './modules/rendering/index.js';
import type { AuthService } from './modules/teams/index.js';

export interface DocumentFiles {
  attachments: AttachmentProvider;
  edoFiles: EdoFileProvider;
}

export function documentFiles(deps: { auth: AuthService; prints: DocumentPrints; pdf: PdfRenderer; cache: RenderCache }): DocumentFiles {
  /** The document's PDF now, with its revision; null when the team or the document is gone. */
  const currentPdf = async (teamId: string, publicId: string, requestId: string) => {
    const auth = await deps.auth.signedLinkContext(teamId, 'mail');
    if (!auth) return null;
    const current = await deps.prints.current(auth, publicId, requestId);
    if (!current) return null;
    const { model } = current;
    // The background lane: share-page traffic filling the public queue never refuses it.
    const body = await deps.cache.get(renderKey('pdf', model), () => deps.pdf.render(model, 'background'));
    return { revision: current.revision, body, name: pdfFilenames(model).name };
  };
  return {
    // The PDF of the e-mail's own revision; none when the document has moved on since.
    attachments: async (email) => {
      const pdf = await currentPdf(email.teamId, email.publicId, `mail:${email.publicId}:${email.revision}`);
      return pdf && pdf.revision === email.revision ? [{ filename: pdf.name, content: pdf.body, contentType: 'application/pdf' }] : [];
    },
    edoFiles: async (job) => {
      const pdf = await currentPdf(job.teamId, job.publicId, `edo:${job.jobId}`);
      if (!pdf) return null;
      return { revision: pdf.revision, file: { name: pdf.name, contentType: 'application/pdf', content: pdf.body } };
    },
  };
}
