// The framework floor of rest-latency: the stack DESIGN.md fixes — express, a tRPC procedure
// projected to REST by trpc-to-openapi, zod on input and output, Kysely over pg with prepared
// statements — answering the same GET /projects/{projectId} with the service's own schemas and
// mapping, and nothing of the service's request rules: no authentication, rate counting, tenant
// transaction, envelope, security headers or request log. What it costs beside the bare handler is
// what the shape itself costs, whatever the service does on top.
import { initTRPC, TRPCError } from '@trpc/server';
import express from 'express';
import { Kysely, PostgresDialect } from 'kysely';
import { createOpenApiExpressMiddleware, type OpenApiMeta } from 'trpc-to-openapi';
import type { Database } from '../control-plane/db/database.ts';
import { preparingPool } from '../control-plane/db/prepared-statements.ts';
import { projectDetailOutput, projectIdInput } from '../control-plane/domains/projects/projects.schema.ts';
import { findProject } from '../control-plane/domains/projects/projects.repository.ts';
import { projectRowToDetail } from '../control-plane/domains/projects/projects.service.ts';
import { benchPool, listenOnLoopback, type LoopbackServer } from './loopback-server.ts';

export async function startFrameworkFloor(ownerUrl: string, tenantId: string): Promise<LoopbackServer> {
  // The database owner's connection: row-level security does not apply, as for the bare handler.
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(benchPool({ connectionString: ownerUrl, max: 10 })) }) });
  const t = initTRPC.meta<OpenApiMeta>().create();
  const router = t.router({
    get: t.procedure
      .meta({ openapi: { method: 'GET', path: '/projects/{projectId}' } })
      .input(projectIdInput)
      .output(projectDetailOutput)
      .query(async ({ input }) => {
        const row = await findProject(db, { tenantId }, input.projectId);
        if (!row) throw new TRPCError({ code: 'NOT_FOUND' });
        return projectRowToDetail(row);
      }),
  });
  const app = express();
  app.use(createOpenApiExpressMiddleware({ router, createContext: () => ({}) }));
  return listenOnLoopback(app, () => db.destroy());
}
