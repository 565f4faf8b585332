from __future__ import annotations

import marshmallow as ma


class HealthSchema(ma.Schema):
    status = ma.fields.String(
        required=True, validate=ma.validate.OneOf(["ok", "ready"]), metadata={"example": "ok"}
    )
