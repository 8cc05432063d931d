import type { ColumnType, Generated, Selectable, Updateable } from 'kysely';

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
  /** When a bearer token (an identity provider's or a session token) first authenticated the user. */
  first_bearer_authenticated_at: Date | null;
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
  /** Made by the platform for a tenant's owner (at the tenant's creation, or reissued), not by its user (migration 0022). */
  issued_by_platform: Generated<boolean>;
}

export interface WorkerHeartbeatsTable {
  worker_id: string;
  started_at: CreatedAt;
  last_seen_at: Timestamp;
  /** graphile-worker's id for this process's pool: what its job locks name (`locked_by`). */
  job_pool_id: string | null;
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
  selected_features: JsonWithDefault<Array<{ key: string; name: string }>>;
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

export interface FlowQuestionsTable {
  id: Generated<string>;
  tenant_id: string;
  project_id: string;
  phase: Exclude<ProjectPhase, 'CREATED'>;
  key: string;
  position: number;
  text: string;
  description: string;
  variants: ColumnType<Array<{ type: 'original' | 'simplified'; text: string }>, string, string>;
  answer_type: 'text' | 'select' | 'multiselect' | 'boolean' | 'number';
  options: JsonWithDefault<Array<{ value: string; label: string; exclusive?: true }>>;
  bounds: ColumnType<{ min: number; max: number; integer: boolean } | null, string | null, string | null>;
  required: boolean;
  weight: number;
  prefill: ColumnType<{ value: string | string[] | boolean | number; confidence: number; source: string; explanation: string } | null, string | null, string | null>;
  suppressed: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: CreatedAt;
}

export interface FlowAnswersTable {
  id: Generated<string>;
  tenant_id: string;
  project_id: string;
  question_id: string;
  value: ColumnType<string | string[] | boolean | number, string, string>;
  selected_variant: 'original' | 'simplified' | null;
  confidence: number | null;
  notes: string | null;
  answered_by: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface SpecificationsTable {
  id: Generated<string>;
  tenant_id: string;
  project_id: string;
  version: number;
  status: ColumnType<'compiling' | 'completed' | 'failed', 'compiling' | undefined, 'completed' | 'failed'>;
  options: ColumnType<Record<string, unknown>, string, string>;
  input: ColumnType<Record<string, unknown>, string, string>;
  spec: ColumnType<Record<string, unknown> | null, never, string | null>;
  validation: ColumnType<Record<string, unknown> | null, never, string | null>;
  error_message: ColumnType<string | null, never, string | null>;
  created_by: string | null;
  created_at: CreatedAt;
  compiled_at: ColumnType<Date | null, never, Date | string | null>;
}

export type AgentStrategy = 'sequential' | 'parallel' | 'hierarchical' | 'debate';
export type AgentExecutionStatus = 'running' | 'completed' | 'failed' | 'paused';
export type AgentTask = 'plan' | 'draft' | 'revise' | 'review';
/** numeric(15, 9) comes back from pg as text, kept exact until it is read. */
type Dollars = ColumnType<string, number | string | undefined, number | string>;

export interface AgentExecutionsTable {
  id: Generated<string>;
  tenant_id: string;
  project_id: string;
  strategy: AgentStrategy;
  agents: string[];
  status: ColumnType<AgentExecutionStatus, undefined, AgentExecutionStatus>;
  options: ColumnType<Record<string, unknown>, string, never>;
  input: ColumnType<Record<string, unknown>, string, never>;
  token_limit: number;
  cost_limit_usd: Dollars;
  tokens_used: ColumnType<number, undefined, number>;
  cost_usd: ColumnType<string, undefined, number | string>;
  total_steps: number;
  completed_steps: ColumnType<number, undefined, number>;
  current_step: ColumnType<string | null, undefined, string | null>;
  specification_id: ColumnType<string | null, undefined, string | null>;
  validation_passed: ColumnType<boolean | null, undefined, boolean | null>;
  error_code: ColumnType<string | null, undefined, string | null>;
  error_message: ColumnType<string | null, undefined, string | null>;
  checkpoint: ColumnType<string | null, undefined, string | null>;
  created_by: string | null;
  started_at: CreatedAt;
  updated_at: ColumnType<Date, undefined, Date | string>;
  completed_at: ColumnType<Date | null, undefined, Date | string | null>;
}

export interface AgentCallsTable {
  id: Generated<string>;
  tenant_id: string;
  execution_id: string;
  step: number;
  agent: string;
  task: AgentTask;
  provider: string;
  model: string;
  prompt_hash: string;
  input_tokens: number;
  output_tokens: number;
  cost_usd: Dollars;
  finish_reason: 'stop' | 'length' | 'error';
  output: ColumnType<unknown, string | null, never>;
  created_at: CreatedAt;
}

export type TaskType = 'PROVIDE' | 'DECIDE' | 'REVIEW' | 'CONNECT';
export type TaskStatus = 'pending' | 'in_progress' | 'completed' | 'cancelled' | 'blocked';
export type TaskPriority = 'low' | 'medium' | 'high' | 'urgent';
export type TaskActionType = 'FORM_SUBMIT' | 'SINGLE_SELECT' | 'APPROVE_REJECT';
export interface TaskAction {
  id: string;
  type: TaskActionType;
  label: string;
  config: Record<string, unknown>;
}

export interface TasksTable {
  id: Generated<string>;
  tenant_id: string;
  project_id: string;
  type: TaskType;
  title: string;
  description: string;
  status: TaskStatus;
  priority: TaskPriority;
  assignee_type: 'user' | 'agent' | null;
  assignee_id: string | null;
  actions: ColumnType<TaskAction[], string, never>;
  targets: ColumnType<Array<{ type: string; id: string }>, string, never>;
  /** What in the flow's answers the task stands for (`integration:stripe`); null for a task made through POST /tasks. */
  origin: ColumnType<string | null, string | null | undefined, never>;
  due_date: ColumnType<Date | null, Date | string | null, never>;
  created_by: string | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, undefined, Date | string>;
  completed_at: ColumnType<Date | null, undefined, Date | string | null>;
}

export interface TaskDependenciesTable {
  tenant_id: string;
  task_id: string;
  depends_on: string;
}

export interface TaskSubmissionsTable {
  id: Generated<string>;
  tenant_id: string;
  task_id: string;
  action_id: string;
  idempotency_key: string;
  request_hash: string;
  response: ColumnType<Record<string, unknown>, string, never>;
  submitted_by: string | null;
  created_at: CreatedAt;
}

export type UserStoryPriority = 'low' | 'medium' | 'high' | 'critical';
export type UserStoryStatus = 'draft' | 'ready' | 'in_progress' | 'done';

export interface UserStoriesTable {
  id: Generated<string>;
  tenant_id: string;
  project_id: ColumnType<string, string, never>;
  title: string;
  description: string | null;
  priority: ColumnType<UserStoryPriority, UserStoryPriority | undefined, UserStoryPriority>;
  status: ColumnType<UserStoryStatus, UserStoryStatus | undefined, UserStoryStatus>;
  acceptance_criteria: ColumnType<string[], string, string>;
  created_by: ColumnType<string | null, string | null, never>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, undefined, Date | string>;
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

export type KitType = 'file' | 'platform' | 'api' | 'hybrid' | 'composite';
export type KitStatus = 'active' | 'deprecated' | 'draft';
export type KitExecutionStatus = 'pending' | 'running' | 'completed' | 'failed' | 'partial';
export type KitExecutionLogEntry = { phase: string; level: 'debug' | 'info' | 'warn' | 'error'; message: string };

export interface KitsTable {
  id: Generated<string>;
  tenant_id: string | null;
  organization_id: string | null;
  kit_id: string;
  display_name: string;
  description: ColumnType<string, string | undefined, string>;
  kit_type: KitType;
  platform_name: string;
  platform_category: string;
  status: ColumnType<KitStatus, KitStatus | undefined, KitStatus>;
  latest_version_id: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface KitVersionsTable {
  id: Generated<string>;
  tenant_id: string | null;
  kit_row_id: string;
  version: string;
  manifest: ColumnType<Record<string, unknown>, string, never>;
  files: ColumnType<Record<string, string>, string, never>;
  checksum: string;
  created_at: CreatedAt;
}

export interface BlobsTable {
  id: Generated<string>;
  tenant_id: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  content: Buffer;
  created_at: CreatedAt;
}

/** One step of a run: how it ended, how long it took, and why it was skipped (`detail`). */
export type KitExecutionPhase = { phase: string; status: string; durationMs: number; detail?: string };

export interface KitExecutionsTable {
  id: Generated<string>;
  tenant_id: string;
  organization_id: string;
  project_id: string;
  kit_row_id: string;
  kit_version_id: string;
  status: ColumnType<KitExecutionStatus, KitExecutionStatus | undefined, KitExecutionStatus>;
  input: ColumnType<Record<string, unknown>, string, string>;
  options: JsonWithDefault<Record<string, boolean>>;
  worker_run_id: string | null;
  worker_process_id: string | null;
  locked_by: string | null;
  error_message: string | null;
  phases: JsonWithDefault<KitExecutionPhase[]>;
  logs: JsonWithDefault<KitExecutionLogEntry[]>;
  /** What APPLY returned, as JSON text when written; null when it did not run or was too large to keep. */
  apply_result: ColumnType<unknown, string | null | undefined, string | null>;
  verify_warnings: JsonWithDefault<string[]>;
  started_at: Date | null;
  completed_at: Date | null;
  execution_time_ms: number | null;
  outputs_valid: ColumnType<number, number | undefined, number>;
  outputs_warnings: ColumnType<number, number | undefined, number>;
  outputs_failed: ColumnType<number, number | undefined, number>;
  token_usage: JsonWithDefault<{ prompt: number; completion: number; total: number }>;
  estimated_cost_usd: ColumnType<string, string | number | undefined, string | number>;
  bundle_blob_id: string | null;
  bundle_path: string | null;
  bundle_size_bytes: number | null;
  /** Why the bundle could not be built, when no retry would help (bundleStatus "failed"). */
  bundle_error: ColumnType<string | null, string | null | undefined, string | null>;
  created_by: string | null;
  /** The API key the execution was started with; null when with a session token. Revoked, it stops the run. */
  started_with_api_key_id: string | null;
  created_at: CreatedAt;
}

export type OutputStatus = 'valid' | 'warning' | 'invalid';

export interface KitOutputsTable {
  id: Generated<string>;
  tenant_id: string;
  execution_id: string;
  output_id: string;
  filename: string;
  output_type: string;
  content_type: string;
  content: string;
  status: OutputStatus;
  validation_errors: JsonWithDefault<string[]>;
  validation_warnings: JsonWithDefault<string[]>;
  content_size_bytes: number;
  created_at: CreatedAt;
}

export interface KitCredentialsTable {
  id: Generated<string>;
  tenant_id: string;
  organization_id: string;
  project_id: string;
  kit_id: string;
  credential_type: string;
  key_id: string;
  sealed: string;
  status: ColumnType<'active' | 'invalid', 'active' | 'invalid' | undefined, 'active' | 'invalid'>;
  last_checked_at: Date | null;
  last_check_status: string | null;
  created_by: string | null;
  created_at: CreatedAt;
}

export interface CredentialKeysTable {
  key_id: string;
  /** The organization whose clients seal to it; null for the server-wide keys of before. */
  organization_id: string | null;
  public_key: string;
  /** HMAC (SERVER_SECRET-derived key) over key id, organization and public key; null for server-wide keys. */
  public_key_tag: string | null;
  sealed_private_key: string;
  created_at: CreatedAt;
  retired_at: Date | null;
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
  flow_questions: FlowQuestionsTable;
  flow_answers: FlowAnswersTable;
  specifications: SpecificationsTable;
  agent_executions: AgentExecutionsTable;
  agent_calls: AgentCallsTable;
  tasks: TasksTable;
  task_dependencies: TaskDependenciesTable;
  task_submissions: TaskSubmissionsTable;
  user_stories: UserStoriesTable;
  customer_invitations: CustomerInvitationsTable;
  agency_project_assignments: AgencyProjectAssignmentsTable;
  kits: KitsTable;
  kit_versions: KitVersionsTable;
  blobs: BlobsTable;
  kit_executions: KitExecutionsTable;
  kit_outputs: KitOutputsTable;
  kit_credentials: KitCredentialsTable;
  credential_keys: CredentialKeysTable;
}

export type OrganizationRow = Selectable<OrganizationsTable>;
export type OrganizationUpdate = Updateable<OrganizationsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ProjectRow = Selectable<ProjectsTable>;
export type FlowQuestionRow = Selectable<FlowQuestionsTable>;
export type FlowAnswerRow = Selectable<FlowAnswersTable>;
export type SpecificationRow = Selectable<SpecificationsTable>;
export type AgentExecutionRow = Selectable<AgentExecutionsTable>;
export type AgentCallRow = Selectable<AgentCallsTable>;
export type TaskRow = Selectable<TasksTable>;
export type TaskSubmissionRow = Selectable<TaskSubmissionsTable>;
export type UserStoryRow = Selectable<UserStoriesTable>;
export type CustomerInvitationRow = Selectable<CustomerInvitationsTable>;
export type AgencyProjectAssignmentRow = Selectable<AgencyProjectAssignmentsTable>;
export type KitRow = Selectable<KitsTable>;
export type KitVersionRow = Selectable<KitVersionsTable>;
export type KitExecutionRow = Selectable<KitExecutionsTable>;
export type KitCredentialRow = Selectable<KitCredentialsTable>;
