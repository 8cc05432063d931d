import { z } from 'zod';

/**
 * A uuid a caller sends (in the path, the query or the body), taken in lower case. PostgreSQL reads
 * a uuid in any letter case, but services compare the ids callers send with the ones they read
 * (`project.organizationId !== orgId`) and answers repeat them: an id in capitals becomes the
 * stored spelling here, at the door, so everything after it sees one spelling.
 */
export const uuidInput = () => z.uuid().toLowerCase();
