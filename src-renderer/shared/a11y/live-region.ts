import { nextTick, ref } from 'vue';

/**
 * The one polite live region of a page (rendered by LiveRegion.vue in the app shell): what a screen reader
 * should hear about results and actions ("12 agents match"). Toasts live in a region of their own, so callers
 * only announce what has no toast.
 */
export const liveMessage = ref('');

export function announce(text: string): void {
  // Cleared first so that the same words twice in a row are read twice.
  liveMessage.value = '';
  void nextTick(() => {
    liveMessage.value = text;
  });
}
