import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** A jsonb column with a database default: optional on insert. */
type JsonWithDefault<T = unknown> = ColumnType<T, string | T | undefined, string | T>;

export interface TenantsTable {
  id: Generated<string>;
  name: string;
  features: JsonWithDefault<Record<string, boolean>>;
  created_at: CreatedAt;
}

export interface UsersTable {
  id: Generated<string>;
  tenant_id: string;
  email: string;
  name: string;
  password_hash: string | null;
  is_platform_admin: Generated<boolean>;
  created_at: CreatedAt;
}

export type OrganizationRole = 'owner' | 'admin' | 'member' | 'customer';

export interface OrganizationsTable {
  id: Generated<string>;
  tenant_id: string;
  name: string;
  slug: string;
  display_name: string | null;
  owner_id: string;
  settings: JsonWithDefault<Record<string, unknown>>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface OrganizationMembersTable {
  id: Generated<string>;
  tenant_id: string;
  organization_id: string;
  user_id: string;
  role: OrganizationRole;
  joined_at: CreatedAt;
}

export interface ApiKeysTable {
  id: Generated<string>;
  tenant_id: string;
  user_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: CreatedAt;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface WorkerHeartbeatsTable {
  worker_id: string;
  started_at: CreatedAt;
  last_seen_at: Timestamp;
}

export type ProjectStatus = 'active' | 'completed' | 'archived';
export type ProjectPhase = 'CREATED' | 'DISCOVERY' | 'FEATURE_SELECTION' | 'PLAN_GENERATION' | 'PLANNING' | 'VISUAL_DISCOVERY' | 'SPECIFICATION';

export interface ProjectsTable {
  id: Generated<string>;
  tenant_id: string;
  organization_id: string | null;
  name: string;
  description: string | null;
  template: string | null;
  status: ColumnType<ProjectStatus, ProjectStatus | undefined, ProjectStatus>;
  phase: ColumnType<ProjectPhase, ProjectPhase | undefined, ProjectPhase>;
  progress: JsonWithDefault<Record<string, number>>;
  metadata: JsonWithDefault<Record<string, unknown>>;
  discovery_output: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  selected_features: JsonWithDefault<unknown[]>;
  ontology_coverage: ColumnType<number, number | undefined, number>;
  discovery_started_at: Date | null;
  discovery_completed_at: Date | null;
  feature_selection_started_at: Date | null;
  feature_selection_completed_at: Date | null;
  plan_generation_started_at: Date | null;
  created_by: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export type InvitationStatus = 'pending' | 'accepted' | 'revoked';

export interface CustomerInvitationsTable {
  id: Generated<string>;
  tenant_id: string;
  organization_id: string;
  email: string;
  role: ColumnType<Exclude<OrganizationRole, 'owner'>, Exclude<OrganizationRole, 'owner'> | undefined, never>;
  message: string | null;
  token_hash: string;
  status: ColumnType<InvitationStatus, InvitationStatus | undefined, InvitationStatus>;
  expires_at: Date;
  invited_by: string;
  accepted_by: string | null;
  accepted_at: Date | null;
  revoked_at: Date | null;
  created_at: CreatedAt;
}

export interface AgencyProjectAssignmentsTable {
  id: Generated<string>;
  tenant_id: string;
  organization_id: string;
  project_id: string;
  customer_user_id: string;
  created_at: CreatedAt;
}

/** Every table the application reads or writes, by its SQL name. */
export interface Database {
  tenants: TenantsTable;
  users: UsersTable;
  organizations: OrganizationsTable;
  organization_members: OrganizationMembersTable;
  api_keys: ApiKeysTable;
  worker_heartbeats: WorkerHeartbeatsTable;
  projects: ProjectsTable;
  customer_invitations: CustomerInvitationsTable;
  agency_project_assignments: AgencyProjectAssignmentsTable;
}

export type TenantRow = Selectable<TenantsTable>;
export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type OrganizationRow = Selectable<OrganizationsTable>;
export type OrganizationUpdate = Updateable<OrganizationsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ProjectRow = Selectable<ProjectsTable>;
export type CustomerInvitationRow = Selectable<CustomerInvitationsTable>;
export type AgencyProjectAssignmentRow = Selectable<AgencyProjectAssignmentsTable>;
