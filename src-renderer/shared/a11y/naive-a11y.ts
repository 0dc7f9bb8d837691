/**
 * What naive-ui 2.45 leaves out for assistive technology, added to its rendered DOM in one place rather than
 * at each of the ~100 call sites:
 * - card headers are two nested `role=heading` with no level (axe: aria-required-attr): the outer one, which
 *   also holds the header's buttons, loses the role; the inner one gets `aria-level` 2 (3 inside a card's body);
 * - tabs are plain divs (no tablist, no focus): they become a real tablist, one Tab stop, arrow keys/Home/End
 *   move and open, Enter/Space open, panels are `tabpanel`s named by their tab;
 * - data-table selection checkboxes have no name: "Select <row label>" from the row's `data-row-label`, and
 *   "Select all on this page" in the header;
 * - table scroll areas take focus (so they scroll by keyboard);
 * - pagination items are divs: they become named buttons in the Tab order (Enter/Space turn the page), the
 *   current page marked `aria-current`;
 * - Escape in a search box leaves the box.
 * Vue patches only the attributes a vnode declares, so what is set here survives re-renders.
 */

let tabIds = 0;

function fixCardHeadings(root: ParentNode): void {
  for (const outer of root.querySelectorAll<HTMLElement>('.n-card-header[role="heading"]')) outer.removeAttribute('role');
  for (const inner of root.querySelectorAll<HTMLElement>('.n-card-header__main[role="heading"]:not([aria-level])')) {
    const nested = inner.closest('.n-card')?.parentElement?.closest('.n-card-content, .n-card__content');
    inner.setAttribute('aria-level', nested ? '3' : '2');
  }
}

function fixTabs(root: ParentNode): void {
  for (const nav of root.querySelectorAll<HTMLElement>('.n-tabs-nav-scroll-content, .n-tabs-nav > .n-tabs-wrapper')) {
    const list = nav.querySelector<HTMLElement>('.n-tabs-wrapper') ?? nav;
    if (list.getAttribute('role') !== 'tablist') list.setAttribute('role', 'tablist');
    const tabsRoot = list.closest('.n-tabs');
    for (const wrapper of list.querySelectorAll<HTMLElement>('.n-tabs-tab-wrapper, .n-tabs-tab-pad, .n-tabs-bar')) {
      if (!wrapper.hasAttribute('role')) wrapper.setAttribute('role', 'none');
    }
    const tabs = [...list.querySelectorAll<HTMLElement>('.n-tabs-tab')];
    const panes = tabsRoot ? [...tabsRoot.querySelectorAll<HTMLElement>(':scope > .n-tabs-pane-wrapper > .n-tab-pane')] : [];
    for (const tab of tabs) {
      if (!tab.id) tab.id = `ad-tab-${++tabIds}`;
      const selected = tab.classList.contains('n-tabs-tab--active');
      if (tab.getAttribute('role') !== 'tab') tab.setAttribute('role', 'tab');
      if (tab.getAttribute('aria-selected') !== String(selected)) tab.setAttribute('aria-selected', String(selected));
      const tabindex = selected ? '0' : '-1';
      if (tab.getAttribute('tabindex') !== tabindex) tab.setAttribute('tabindex', tabindex);
      if (tab.classList.contains('n-tabs-tab--disabled')) tab.setAttribute('aria-disabled', 'true');
      if (selected && panes.length > 0) {
        // The one pane shown is the selected tab's (naive renders only the active pane unless display-directive=show).
        const pane = panes.find((candidate) => candidate.style.display !== 'none');
        if (pane) {
          pane.setAttribute('role', 'tabpanel');
          pane.setAttribute('aria-labelledby', tab.id);
          if (!pane.id) pane.id = `${tab.id}-panel`;
          tab.setAttribute('aria-controls', pane.id);
        }
      }
    }
  }
}

function fixSelectionCheckboxes(root: ParentNode): void {
  for (const box of root.querySelectorAll<HTMLElement>('.n-data-table-td--selection .n-checkbox, .n-data-table-th--selection .n-checkbox')) {
    const row = box.closest('tr');
    const label = box.closest('th')
      ? 'Select all on this page'
      : `Select ${row?.getAttribute('data-row-label') || row?.querySelector('td:not(.n-data-table-td--selection)')?.textContent?.trim().slice(0, 80) || 'row'}`;
    if (box.getAttribute('aria-label') !== label) {
      box.setAttribute('aria-label', label);
      box.removeAttribute('aria-labelledby');
    }
  }
}

/** A table's scroll area takes focus, so its rows can be scrolled with the keyboard (axe: scrollable-region-focusable). */
function fixScrollAreas(root: ParentNode): void {
  for (const area of root.querySelectorAll<HTMLElement>('.n-data-table-base-table-body.n-scrollbar > .n-scrollbar-container, .n-data-table .v-vl')) {
    if (area.hasAttribute('tabindex')) continue;
    area.setAttribute('tabindex', '0');
    area.setAttribute('role', 'region');
    area.setAttribute('aria-label', 'Table rows (scrollable)');
  }
  for (const block of root.querySelectorAll<HTMLElement>('pre:not([tabindex])')) {
    if (block.scrollWidth > block.clientWidth || block.scrollHeight > block.clientHeight) block.setAttribute('tabindex', '0');
  }
}

/** Sets an attribute only when it differs, so the observer is not woken by its own writes. */
function setAttr(element: HTMLElement, name: string, value: string | null): void {
  if (value === null) {
    if (element.hasAttribute(name)) element.removeAttribute(name);
  } else if (element.getAttribute(name) !== value) element.setAttribute(name, value);
}

function fixPagination(root: ParentNode): void {
  for (const item of root.querySelectorAll<HTMLElement>('.n-pagination .n-pagination-item')) {
    const disabled = item.classList.contains('n-pagination-item--disabled');
    const current = item.classList.contains('n-pagination-item--active');
    const text = item.textContent?.trim() ?? '';
    const label = item.classList.contains('n-pagination-item--button')
      ? item === item.parentElement?.querySelector('.n-pagination-item--button')
        ? 'Previous page'
        : 'Next page'
      : /^\d+$/.test(text)
        ? `Page ${text}`
        : 'More pages';
    setAttr(item, 'role', 'button');
    setAttr(item, 'aria-label', label);
    setAttr(item, 'tabindex', disabled ? '-1' : '0');
    setAttr(item, 'aria-disabled', disabled ? 'true' : null);
    setAttr(item, 'aria-current', current ? 'page' : null);
  }
}

function onPaginationKeydown(event: KeyboardEvent): void {
  if (event.key !== 'Enter' && event.key !== ' ') return;
  const item = (event.target as HTMLElement | null)?.closest?.<HTMLElement>('.n-pagination .n-pagination-item');
  if (!item || item.classList.contains('n-pagination-item--disabled')) return;
  event.preventDefault();
  item.click();
}

function fixAll(root: ParentNode): void {
  fixCardHeadings(root);
  fixPagination(root);
  fixScrollAreas(root);
  fixTabs(root);
  fixSelectionCheckboxes(root);
}

function onTabKeydown(event: KeyboardEvent): void {
  const tab = (event.target as HTMLElement | null)?.closest?.<HTMLElement>('[role="tab"].n-tabs-tab');
  if (!tab) return;
  const list = tab.closest('[role="tablist"]');
  if (!list) return;
  const tabs = [...list.querySelectorAll<HTMLElement>('.n-tabs-tab:not(.n-tabs-tab--disabled)')];
  const index = tabs.indexOf(tab);
  // A horizontal tablist takes Left/Right only (WAI-ARIA): Up/Down stay with the page, e.g. the audit
  // drawer's step to the next entry.
  const vertical = list.getAttribute('aria-orientation') === 'vertical';
  const [forward, back] = vertical ? ['ArrowDown', 'ArrowUp'] : ['ArrowRight', 'ArrowLeft'];
  let next: HTMLElement | undefined;
  if (event.key === forward) next = tabs[(index + 1) % tabs.length];
  else if (event.key === back) next = tabs[(index - 1 + tabs.length) % tabs.length];
  else if (event.key === 'Home') next = tabs[0];
  else if (event.key === 'End') next = tabs[tabs.length - 1];
  else if (event.key === 'Enter' || event.key === ' ') next = tab;
  if (!next) return;
  event.preventDefault();
  event.stopPropagation();
  next.click();
  next.focus();
}

/** Escape in a search box leaves it (to the list's own shortcuts), rather than staying to catch the next key. */
function onSearchEscape(event: KeyboardEvent): void {
  if (event.key !== 'Escape') return;
  const target = event.target as HTMLElement | null;
  if (!(target instanceof HTMLInputElement)) return;
  if (target.type !== 'search' && !target.closest('[data-testid$="-search"], [role="search"]')) return;
  target.blur();
}

let installed = false;

/** Starts the layer once per page: fixes what is rendered now and whatever naive-ui renders later. */
export function installNaiveA11y(): void {
  if (installed || typeof MutationObserver === 'undefined') return;
  installed = true;
  let scheduled = false;
  const run = () => {
    scheduled = false;
    fixAll(document);
  };
  new MutationObserver(() => {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(run);
  }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['class'] });
  document.addEventListener('keydown', onTabKeydown, true);
  document.addEventListener('keydown', onSearchEscape);
  document.addEventListener('keydown', onPaginationKeydown);
  run();
}
