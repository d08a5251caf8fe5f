/**
 * Ids of earlier versions, kept working (not in the palette) for keybindings and tasks that name
 * them: the watch was once called polling.
 */
export const FORMER_IDS: Readonly<Record<string, string>> = {
  'kimiService.pollService': 'kimiService.watchService',
  'kimiService.stopPolling': 'kimiService.stopWatching',
};
