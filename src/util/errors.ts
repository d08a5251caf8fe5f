/** The message of anything thrown, for a log line or a notification. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
