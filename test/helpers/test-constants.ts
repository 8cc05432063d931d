export const TEMPLATE_DATABASE = 'specwright_template';
/** Fixed so every test file derives the same app-role password; never used outside tests. */
export const TEST_SERVER_SECRET = 'test-server-secret-that-is-long-enough-0123456789';
