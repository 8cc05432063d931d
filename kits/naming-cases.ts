// Naming cases the kit tests share: the kits run sandboxed and import nothing, so each holds its
// own copy of the naming helpers; these tests hold the copies to one behaviour.

// Name → [collection path, table, column, property]: an entity of that name with a field of that
// name. The path is the table with `-` for `_`, and the property (camelCase) the column's words.
// openapi-api's, postgres-schema's and composite-bundle's tests all hold their kit to it. Before,
// openapi-api lost an acronym's bound in the Pascal-cased name (`APIKey` → `/apikeys`), and both
// kits split only before a capital that follows a lower-case letter or digit (`APIKey` →
// `apikeys`, `HTTPRequest` → `httprequests`): `API key` was `/apikeys` over the table `api_keys`.
export const ACRONYMS: Array<[string, string, string, string, string]> = [
  ['API key', '/api-keys', 'api_keys', 'api_key', 'apiKey'],
  ['APIKey', '/api-keys', 'api_keys', 'api_key', 'apiKey'],
  ['URL thing', '/url-things', 'url_things', 'url_thing', 'urlThing'],
  ['HTTPRequest', '/http-requests', 'http_requests', 'http_request', 'httpRequest'],
  ['getHTTPResponseCode', '/get-http-response-codes', 'get_http_response_codes', 'get_http_response_code', 'getHTTPResponseCode'],
  ['userID', '/user-ids', 'user_ids', 'user_id', 'userID'],
  ['OAuthToken', '/oauth-tokens', 'oauth_tokens', 'oauth_token', 'oauthToken'],
  ['SSOConfig', '/sso-configs', 'sso_configs', 'sso_config', 'ssoConfig'],
  ['IPAddress', '/ip-addresses', 'ip_addresses', 'ip_address', 'ipAddress'],
  ['S3Bucket', '/s3-buckets', 's3_buckets', 's3_bucket', 's3Bucket'],
  ['ETag', '/etags', 'etags', 'etag', 'etag'],
  // An acronym's plural `s` stays with it.
  ['URLs', '/urls', 'urls', 'urls', 'urls'],
  ['userIDs', '/user-ids', 'user_ids', 'user_ids', 'userIDs'],
  // Names without an acronym before a word: as before.
  ['PayloadBooking', '/payload-bookings', 'payload_bookings', 'payload_booking', 'payloadBooking'],
  ['Rocket2', '/rocket2s', 'rocket2s', 'rocket2', 'rocket2'],
  ['URL', '/urls', 'urls', 'url', 'url'],
  ['ID', '/ids', 'ids', 'id', 'id'],
  ['homePageURL', '/home-page-urls', 'home_page_urls', 'home_page_url', 'homePageURL'],
  ['Ünïcode Thing', '/unicode-things', 'unicode_things', 'unicode_thing', 'unicodeThing'],
];
// One entity per name (some pairs meet at one path), with one field of the same name; `ID` is the key.
export const acronymInput = (name: string) => ({
  businessProfile: { company: { name: 'Acme', industry: 'Aerospace' } },
  discoveryAnswers: { entities: [{ name, fields: [{ name, type: 'uuid' }] }] },
});
