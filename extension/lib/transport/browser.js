// The one place that touches the WebExtension global; everything else imports it from here.
export default globalThis.browser;
