/* Starts Swagger UI on the API docs page. A file of its own, not an inline script: the page's
   Content-Security-Policy runs scripts from the app itself only (api/headers.py). The page
   names the OpenAPI document in data-spec-url. */
"use strict";

(() => {
  const node = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: node.dataset.specUrl,
    domNode: node,
    validatorUrl: null,  // no badge from the public validator: the page calls no other host
  });
})();
