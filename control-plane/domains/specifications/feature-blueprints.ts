/**
 * What each feature the flow offers (flow-derivations.ts: featureCandidates) brings to a
 * specification: the endpoints it adds and the steps of its main workflow. A "manage" feature
 * (one per entity) is the entity's own list/create/edit/delete and needs no entry here.
 */
export interface FeatureBlueprint {
  endpoints: Array<{ method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: string; summary: string }>;
  workflow: string[];
}

export const featureBlueprints: Record<string, FeatureBlueprint> = {
  'sign-in': {
    endpoints: [
      { method: 'POST', path: '/auth/sign-in', summary: 'Sign in with email and password' },
      { method: 'POST', path: '/auth/sign-out', summary: 'End the session' },
      { method: 'GET', path: '/me', summary: "The signed-in user's profile" },
    ],
    workflow: ['Enter email and password', 'Check the credentials', 'Start a session', 'Show the profile'],
  },
  checkout: {
    endpoints: [{ method: 'POST', path: '/checkout', summary: 'Pay for a basket' }],
    workflow: ['Review the basket', 'Enter payment details with the payment provider', 'Confirm the payment', 'Send a receipt'],
  },
  invoices: {
    endpoints: [
      { method: 'GET', path: '/invoices', summary: 'Past invoices' },
      { method: 'GET', path: '/invoices/{id}', summary: 'One invoice' },
    ],
    workflow: ['Issue an invoice when a payment succeeds', 'List invoices', 'Download an invoice'],
  },
  notifications: {
    endpoints: [
      { method: 'GET', path: '/notifications', summary: "The user's notifications" },
      { method: 'PATCH', path: '/notifications/{id}', summary: 'Mark a notification read' },
    ],
    workflow: ['An event happens', 'Choose who is told', 'Send email or push', 'Show it in the notification list'],
  },
  search: {
    endpoints: [{ method: 'GET', path: '/search', summary: 'Search with filters' }],
    workflow: ['Type a query', 'Narrow with filters', 'Open a result'],
  },
  'content-editor': {
    endpoints: [
      { method: 'GET', path: '/pages', summary: 'Pages' },
      { method: 'POST', path: '/pages', summary: 'Draft a page' },
      { method: 'POST', path: '/pages/{id}/publish', summary: 'Publish a page' },
    ],
    workflow: ['Draft content', 'Preview it', 'Publish it'],
  },
  bookings: {
    endpoints: [
      { method: 'GET', path: '/availability', summary: 'Free slots' },
      { method: 'POST', path: '/bookings', summary: 'Book a slot' },
      { method: 'DELETE', path: '/bookings/{id}', summary: 'Cancel a booking' },
    ],
    workflow: ['Pick a free slot', 'Confirm the booking', 'Send a confirmation', 'Remind before the slot'],
  },
  dashboards: {
    endpoints: [
      { method: 'GET', path: '/reports', summary: 'Dashboards and reports' },
      { method: 'GET', path: '/reports/{id}/export', summary: 'Export a report' },
    ],
    workflow: ['Open a dashboard', 'Filter by period', 'Export the report'],
  },
  'file-uploads': {
    endpoints: [
      { method: 'POST', path: '/files', summary: 'Upload a file' },
      { method: 'GET', path: '/files/{id}', summary: 'Download or preview a file' },
    ],
    workflow: ['Choose a file', 'Upload it', 'Check its type and size', 'Preview it'],
  },
  'shared-workspaces': {
    endpoints: [
      { method: 'GET', path: '/workspaces', summary: 'Shared workspaces' },
      { method: 'POST', path: '/workspaces/{id}/comments', summary: 'Comment in a workspace' },
    ],
    workflow: ['Create a workspace', 'Invite people', 'Work and comment together'],
  },
  'integration-hub': {
    endpoints: [
      { method: 'GET', path: '/webhooks', summary: 'Webhook subscriptions' },
      { method: 'POST', path: '/webhooks', summary: 'Subscribe to events' },
    ],
    workflow: ['Pick a system to connect', 'Authorize the connection', 'Choose which events flow', 'Watch deliveries'],
  },
  'mobile-app': {
    endpoints: [{ method: 'POST', path: '/devices', summary: 'Register a device for push' }],
    workflow: ['Install the app', 'Sign in', 'Allow notifications'],
  },
  'public-api': {
    endpoints: [
      { method: 'GET', path: '/api-keys', summary: "The caller's API keys" },
      { method: 'POST', path: '/api-keys', summary: 'Create an API key' },
      { method: 'DELETE', path: '/api-keys/{id}', summary: 'Revoke an API key' },
    ],
    workflow: ['Create an API key', 'Call the API with it', 'Revoke it when done'],
  },
  organizations: {
    endpoints: [
      { method: 'POST', path: '/organizations', summary: 'Create an organization' },
      { method: 'POST', path: '/organizations/{id}/members', summary: 'Add a member with a role' },
    ],
    workflow: ['Create an organization', 'Invite members', 'Give each a role', 'Keep each organization\'s data apart'],
  },
  'audit-log': {
    endpoints: [{ method: 'GET', path: '/audit-events', summary: 'Who did what, when' }],
    workflow: ['Record every change with who made it', 'Search the record', 'Export it for an auditor'],
  },
};
