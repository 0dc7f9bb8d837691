import type { GlobalThemeOverrides } from 'naive-ui';

/** The console's few departures from naive-ui's light theme. */
export const themeOverrides: GlobalThemeOverrides = {
  common: {
    primaryColor: '#2f6feb',
    primaryColorHover: '#4a84f0',
    primaryColorPressed: '#1f5bd1',
    primaryColorSuppl: '#4a84f0',
    borderRadius: '6px',
  },
  Layout: {
    siderColor: '#f7f8fa',
    headerColor: '#ffffff',
  },
};
