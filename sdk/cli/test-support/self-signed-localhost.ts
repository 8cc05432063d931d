/**
 * A self-signed certificate for localhost and 127.0.0.1 (valid 2020–2120), and its key: a test
 * fixture made with `openssl ca -selfsign`, guarding nothing. A client that trusts only the usual
 * certificate authorities refuses it (DEPTH_ZERO_SELF_SIGNED_CERT).
 */
export const selfSignedCertificate = `-----BEGIN CERTIFICATE-----
MIIBVTCB/KADAgECAgEBMAoGCCqGSM49BAMCMBQxEjAQBgNVBAMMCWxvY2FsaG9z
dDAgFw0yMDAxMDEwMDAwMDBaGA8yMTIwMDEwMTAwMDAwMFowFDESMBAGA1UEAwwJ
bG9jYWxob3N0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE/F+T5mL/flf3N80E
Y/2NXOVQsV6FAHxBZ1PA7Daie6EE6ViXNCIOD/OenlRy1zSOZYjA/DAYjYQkNAHJ
mh/3DqM9MDswGgYDVR0RBBMwEYIJbG9jYWxob3N0hwR/AAABMB0GA1UdDgQWBBQe
XaTzaTOkMqhkc4eUCB8FqQARvTAKBggqhkjOPQQDAgNIADBFAiBTMh2uI3kj4eLL
lTKyafUyj1SCc6MJkTGwcfGB0Ja99AIhAIlta0FnlnvxH3JG5FIboaRzLWxV/nS3
4PJXnXkfeBYE
-----END CERTIFICATE-----
`;

export const selfSignedKey = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgi6OzOFx1JKN0Qhhl
jHxmHsw56KwdalvrWlcvETPBd2+hRANCAAT8X5PmYv9+V/c3zQRj/Y1c5VCxXoUA
fEFnU8DsNqJ7oQTpWJc0Ig4P856eVHLXNI5liMD8MBiNhCQ0AcmaH/cO
-----END PRIVATE KEY-----
`;
