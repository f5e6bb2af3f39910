/** The headers `crew mcp` sends: its parent key and working directory (kept apart so the bridge imports no server). */
export const PARENT_HEADER = 'x-crew-parent';
export const CWD_HEADER = 'x-crew-cwd';
