/** Every response body the suite's HTTP helper received in this test file. */
export const recordedResponses: Array<{ path: string; text: string }> = [];

/** Every database a test app ran on in this test file. */
export const databasesInUse = new Set<string>();
