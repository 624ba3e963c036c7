"""Request and response schemas (marshmallow), one module per resource: they are also the
OpenAPI document. :mod:`api.schemas.fields` holds the field types and bases they share."""
