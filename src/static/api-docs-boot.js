// Starts Swagger UI from options in a JSON element, so the page carries no inline script and its
// Content-Security-Policy can allow scripts from 'self' only. Loaded before the Swagger UI bundle.
(() => {
  const config = JSON.parse(document.getElementById('api-docs-config').textContent);

  /** A random UUID (v4); crypto.randomUUID exists only in secure contexts, a plain-http deployment is not one. */
  const randomKey = () => {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };

  // Each Execute of POST /pets is a new animal, so it gets a new Idempotency-Key unless the user typed
  // one (to try a retry): a key used twice would replay the first pet, or answer 422 to a new body.
  const requestInterceptor = (request) => {
    if (request.method !== 'POST' || !new URL(request.url, location.href).pathname.endsWith('/pets')) return request;
    request.headers ??= {};
    const typed = Object.keys(request.headers).some((name) => name.toLowerCase() === 'idempotency-key');
    if (!typed) request.headers['Idempotency-Key'] = randomKey();
    return request;
  };

  // The introduction shows its first paragraph (how to authenticate) and folds the rest behind a
  // button, so that Authorize and the operations are on the first screen (Swagger UI's plugin API).
  const FoldedIntroduction = {
    wrapComponents: {
      InfoContainer:
        (Original, { React }) =>
        (props) => {
          const [open, setOpen] = React.useState(false);
          const toggle = React.createElement(
            'button',
            { type: 'button', className: 'intro-toggle', 'aria-expanded': open, onClick: () => setOpen(!open) },
            open ? 'Fold the introduction' : 'Read the whole introduction: pagination, routing, headers, limits',
          );
          const original = React.createElement(Original, props);
          return React.createElement('div', { className: open ? 'intro' : 'intro folded' }, original, toggle);
        },
    },
  };

  // The development key (a browser on this machine, and only then) is authorized as if typed into
  // Authorize, so the first Execute answers 200.
  const onComplete = () => {
    if (config.authorize) window.ui.preauthorizeApiKey(config.authorize.scheme, config.authorize.key);
  };

  const render = () => {
    window.ui = SwaggerUIBundle({
      ...config.swagger,
      plugins: [FoldedIntroduction],
      requestInterceptor,
      onComplete,
      dom_id: '#swagger-ui',
    });
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', render);
  else render();
})();
