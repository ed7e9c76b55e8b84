// Starts Swagger UI from options in a JSON element, so the page carries no inline script and its
// Content-Security-Policy can allow scripts from 'self' only. Loaded before the Swagger UI bundle.
(() => {
  const options = JSON.parse(document.getElementById('api-docs-config').textContent);
  const render = () => {
    window.ui = SwaggerUIBundle({ ...options, dom_id: '#swagger-ui' });
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', render);
  else render();
})();
