import { agentsRouter } from './domains/agents/agents.router.ts';
import { tasksRouter } from './domains/tasks/tasks.router.ts';
import { exportsRouter } from './domains/exports/exports.router.ts';
import { agencyProjectsRouter } from './domains/agency-projects/agency-projects.router.ts';
import { apiKeysRouter } from './domains/api-keys/api-keys.router.ts';
import { flowRouter } from './domains/flow/flow.router.ts';
import { healthRouter } from './domains/health/health.router.ts';
import { customerInvitationsRouter } from './domains/invitations/invitations.router.ts';
import { meRouter } from './domains/me/me.router.ts';
import { organizationsRouter } from './domains/organizations/organizations.router.ts';
import { projectsRouter } from './domains/projects/projects.router.ts';
import { kitCredentialsRouter } from './domains/kit-credentials/kit-credentials.router.ts';
import { kitExecutionsRouter } from './domains/kit-executions/kit-executions.router.ts';
import { kitsRouter } from './domains/kits/kits.router.ts';
import { specificationsRouter } from './domains/specifications/specifications.router.ts';
import { adminRouter } from './domains/tenants/tenants.router.ts';
import { authRouter } from './domains/users/users.router.ts';
import { router } from './trpc/init.ts';

/** The whole API. `/trpc` serves it as is; `/api` is its REST projection. */
export const appRouter = router({
  health: healthRouter,
  me: meRouter,
  apiKeys: apiKeysRouter,
  admin: adminRouter,
  auth: authRouter,
  organizations: organizationsRouter,
  customerInvitations: customerInvitationsRouter,
  agencyProjects: agencyProjectsRouter,
  projects: projectsRouter,
  flow: flowRouter,
  specification: specificationsRouter,
  agents: agentsRouter,
  tasks: tasksRouter,
  exports: exportsRouter,
  // REST matches routes in this order: the static /{orgId}/kits/credentials and /executions paths
  // must come before /{orgId}/kits/{kitId}.
  kitCredentials: kitCredentialsRouter,
  kitExecutions: kitExecutionsRouter,
  kits: kitsRouter,
});

export type AppRouter = typeof appRouter;
