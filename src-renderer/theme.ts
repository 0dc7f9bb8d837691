import type { GlobalThemeOverrides } from 'naive-ui';

/**
 * The one theme of the console and the dashboard. naive-ui's light theme puts several colours below WCAG AA
 * (4.5:1 for text): its success (3.4:1), warning (2.2:1) and info (3.9:1) tags and its grey secondary text
 * (4.2:1). These are darker shades of the same hues, each at least 4.5:1 on white and on their own tag tint.
 * The same values are CSS variables in styles.css (--ad-*) for our own styles.
 */
const palette = {
  primary: '#1f5bd1',
  primaryHover: '#2f6feb',
  primaryPressed: '#1a4cb0',
  info: '#1d5fbf',
  infoHover: '#2a6fd6',
  infoPressed: '#184f9f',
  success: '#177245',
  successHover: '#1d8a54',
  successPressed: '#115c37',
  warning: '#8a5000',
  warningHover: '#a15c00',
  warningPressed: '#6f4000',
  error: '#b42335',
  errorHover: '#c83447',
  errorPressed: '#941c2b',
  textMuted: '#4b5563',
};

export const themeOverrides: GlobalThemeOverrides = {
  common: {
    primaryColor: palette.primary,
    primaryColorHover: palette.primaryHover,
    primaryColorPressed: palette.primaryPressed,
    primaryColorSuppl: palette.primaryHover,
    infoColor: palette.info,
    infoColorHover: palette.infoHover,
    infoColorPressed: palette.infoPressed,
    infoColorSuppl: palette.infoHover,
    successColor: palette.success,
    successColorHover: palette.successHover,
    successColorPressed: palette.successPressed,
    successColorSuppl: palette.successHover,
    warningColor: palette.warning,
    warningColorHover: palette.warningHover,
    warningColorPressed: palette.warningPressed,
    warningColorSuppl: palette.warningHover,
    errorColor: palette.error,
    errorColorHover: palette.errorHover,
    errorColorPressed: palette.errorPressed,
    errorColorSuppl: palette.errorHover,
    textColor3: palette.textMuted,
    placeholderColor: '#6b7280',
    borderRadius: '6px',
  },
  // Empty states' descriptions use the disabled text colour (2.6:1) by default.
  Empty: {
    textColor: palette.textMuted,
  },
  Layout: {
    siderColor: '#f7f8fa',
    headerColor: '#ffffff',
  },
};
