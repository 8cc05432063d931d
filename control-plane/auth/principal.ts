/** Who is calling, after authentication. `tenantId` is the tenant the request acts in. */
export interface Principal {
  userId: string;
  tenantId: string;
  homeTenantId: string;
  isPlatformAdmin: boolean;
  via: 'api_key' | 'jwt' | 'e2e_test_mode';
  apiKeyId?: string;
}
