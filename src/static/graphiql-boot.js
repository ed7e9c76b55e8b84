// Starts Yoga's GraphiQL from options in a JSON element, so the page carries no inline script and its
// Content-Security-Policy can allow scripts from 'self' only. Loaded before the GraphiQL bundle.
(() => {
  const config = JSON.parse(document.getElementById('graphiql-config').textContent);
  // Yoga's own page hands Monaco blob: URLs of inlined worker code; ours are served, cacheable files.
  self.MonacoEnvironment = {
    globalAPI: false,
    getWorkerUrl: (_moduleId, label) => config.workers[label],
  };
  const render = () => YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), config.options);
  // The bundle's script tag follows this one; it has run by the time the document is parsed.
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', render);
  else render();
})();
