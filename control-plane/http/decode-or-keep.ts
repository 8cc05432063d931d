/**
 * Percent-decoded text, as routers read a path (tRPC decodes its path before finding procedures,
 * so `a%2Cb` is a batch of two); text that is not valid URL encoding stays as it is.
 */
export function decodeOrKeep(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
