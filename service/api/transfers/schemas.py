"""Bodies of seat transfers."""

from __future__ import annotations

import marshmallow as ma

from ..fields import ResponseSchema

#: Longer than any ticket this service makes.
MAX_TICKET_LENGTH = 200


class TransferTicketSchema(ResponseSchema):
    ticket = ma.fields.String(
        required=True,
        metadata={"description": "secret, works once: POST it to /games/{id}/transfers/claim"},
    )
    url = ma.fields.String(
        required=True, metadata={"description": "the web table's link that claims it"}
    )
    expires_at = ma.fields.String(required=True, metadata={"description": "RFC 3339"})


class ClaimSchema(ma.Schema):
    ticket = ma.fields.String(
        required=True,
        validate=ma.validate.Length(1, MAX_TICKET_LENGTH),
        metadata={"description": "a seat transfer ticket"},
    )


class ClaimedSeatSchema(ResponseSchema):
    game_id = ma.fields.String(required=True)
    seat = ma.fields.Integer(required=True)
    name = ma.fields.String(required=True)
    token = ma.fields.String(
        required=True,
        metadata={"description": "secret: the seat's new token (the old one stops working)"},
    )
    version = ma.fields.Integer(required=True, metadata={"description": "after the transfer"})
