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

/** Every table the application reads or writes, by its SQL name. */
export interface Database {
  tenants: TenantsTable;
  users: UsersTable;
  organizations: OrganizationsTable;
  organization_members: OrganizationMembersTable;
  api_keys: ApiKeysTable;
  worker_heartbeats: WorkerHeartbeatsTable;
}

export type TenantRow = Selectable<TenantsTable>;
export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type OrganizationRow = Selectable<OrganizationsTable>;
export type OrganizationUpdate = Updateable<OrganizationsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
