// Starts Swagger UI on the service's own OpenAPI document. A file rather than an inline script,
// so the page runs under a Content-Security-Policy without 'unsafe-inline'.
window.ui = SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  // No validator badge: it would send the document to a host outside this service.
  validatorUrl: null,
});
