/**
 * Attributes that make a Naive UI tab header reachable with Tab and opened
 * with Enter or Space (Naive's tabs take no keyboard focus). Bind them on an
 * `NTab` with v-bind, or pass them as an `NTabPane`'s `tab-props`.
 */
export function keyboardTab(selected: boolean, open: () => void) {
  return {
    tabindex: 0,
    role: 'tab',
    'aria-selected': selected,
    onKeydown: (event: KeyboardEvent) => {
      if (event.key !== 'Enter' && event.key !== ' ') return;
      event.preventDefault();
      open();
    },
  };
}
