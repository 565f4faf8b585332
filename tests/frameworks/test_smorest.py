"""The private names of flask-smorest and webargs the service relies on are still there, and only
``service/frameworks/smorest.py`` touches them (an upgrade breaks one module, loudly)."""

from __future__ import annotations

import re
from pathlib import Path

import flask_smorest.utils
import pytest

from service.frameworks import smorest as smorest_adapter
from service.frameworks.smorest import incompatibilities

SERVICE = Path(__file__).resolve().parents[2] / "service"
PRIVATE_USES = re.compile(
    r"_apidoc|ext_obj|_register_error_handlers|_register_responses|_raw_load_json"
    r"|_handle_invalid_json_error|flask_smorest\.utils|^(?:import|from) webargs"
    r"|api-docs\.openapi_json",
    re.M,
)


def test_installed_flask_smorest_and_webargs_offer_what_the_adapter_uses() -> None:
    found = incompatibilities()
    assert not found, (
        "flask-smorest or webargs changed under service/frameworks/smorest.py; adapt that "
        "module (and only it) before upgrading:\n  " + "\n  ".join(found)
    )


def test_the_check_reports_a_missing_function(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(flask_smorest.utils, "resolve_schema_instance")
    assert any("resolve_schema_instance is gone" in p for p in incompatibilities())


def test_the_check_reports_a_changed_signature(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(flask_smorest.utils, "prepare_response", lambda response, spec: None)
    assert any("prepare_response takes" in p for p in incompatibilities())


def test_the_check_reports_a_hook_the_library_stopped_calling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(smorest_adapter.HookedApi, "_register_responses")
    found = incompatibilities()
    assert any("register_responses" in p for p in found), found


def test_only_the_adapter_touches_private_names() -> None:
    offenders = [
        f"{path.relative_to(SERVICE.parent)}: {match.group(0)}"
        for path in sorted(SERVICE.rglob("*.py"))
        if path.name != "smorest.py"
        for match in PRIVATE_USES.finditer(path.read_text())
    ]
    assert not offenders, "private flask-smorest/webargs names outside the adapter:\n" + "\n".join(
        offenders
    )


def test_documents_body_writes_what_arguments_writes() -> None:
    """``documents_body`` documents a body as ``Blueprint.arguments`` does, without parsing."""
    import flask
    import flask_smorest
    import marshmallow as ma
    from flask.views import MethodView

    from service.frameworks.smorest import documents_body

    class Body(ma.Schema):
        tile = ma.fields.List(ma.fields.Integer(), required=True)

    app = flask.Flask(__name__)
    app.config.update(API_TITLE="t", API_VERSION="1", OPENAPI_VERSION="3.1.0")
    api = flask_smorest.Api(app)
    blp = flask_smorest.Blueprint("b", __name__)

    @blp.route("/parsed")
    class Parsed(MethodView):
        @blp.arguments(Body(), example={"tile": [1, 2]})
        @blp.response(200)
        def post(self, body: dict[str, object]) -> str:
            return "ok"

    @blp.route("/documented")
    class Documented(MethodView):
        @documents_body(Body(), example={"tile": [1, 2]})
        @blp.response(200)
        def post(self) -> str:
            return "ok"

    api.register_blueprint(blp)
    paths = api.spec.to_dict()["paths"]
    assert paths["/documented"]["post"] == paths["/parsed"]["post"]
    assert paths["/parsed"]["post"]["requestBody"]["content"]["application/json"]
    # The documented view parses nothing: a body the schema refuses reaches it.
    answer = app.test_client().post("/documented", json={"tile": "x"})
    assert answer.status_code == 200
