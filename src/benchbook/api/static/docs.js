// Benchbook's /api/docs: Swagger UI (served by Benchbook from the swagger-ui-bundle package)
// over /api/openapi.json. A file, not an inline script, so nothing is loaded from elsewhere.
"use strict";
window.addEventListener("DOMContentLoaded", () => {
  window.ui = SwaggerUIBundle({
    url: "/api/openapi.json",
    dom_id: "#swagger-ui",
    layout: "BaseLayout",
    deepLinking: true,
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis],
  });
});
