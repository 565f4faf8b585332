"""The web table's words: one catalogue (static/table/strings.json) in six languages, with no
key missing from a language, none unused by the page's scripts, the same placeholders in every
language, no sentence written into a script instead of the catalogue, and a worded refusal for
every problem code of the server's vocabulary that the page may meet."""

from __future__ import annotations

import json
import re
from pathlib import Path

from service.api.codes import Problem
from service.api.table_page import TABLE_DIR

CATALOGUE = TABLE_DIR / "strings.json"
LANGUAGES = {"en", "sw", "tr", "ha", "ceb", "fi"}
USED = re.compile(r"\bt(n?)\(\s*\"([a-z0-9_.]+)\"")
PLACEHOLDER = re.compile(r"\{(\w+)\}")
# A quoted sentence for people: a capital, a lower-case word, a space (e.g. "Your turn").
SENTENCE = re.compile(r"[\"'`][A-Z][a-z]+ [a-z]+[^\"'`]*[\"'`]")
# hints.js words a refusal by its code: `  code: () => t("refuse.key"),` in worded()'s map.
WORDED = re.compile(r"^ +([a-z_]+): \(\) => t\(\"([a-z0-9_.]+)\"\)", re.M)
# Codes the page makes itself: no answer came (api.js).
OWN_CODES = {"network"}
# The rest of the vocabulary has no words of its own, each group for its reason.
NEVER_ASKED = {  # answers to requests the page never makes, or never makes so
    "malformed_json", "malformed_precondition", "malformed_idempotency_key",
    "short_idempotency_key", "malformed_request", "missing_token", "not_a_seat",
    "not_this_player", "forbidden", "not_found", "seat_not_found", "player_not_found",
    "webhook_not_found", "method_not_allowed", "not_acceptable", "too_many_webhooks",
    "body_too_large", "uri_too_long", "unsupported_media_type",
    "precondition_required", "headers_too_large", "invalid_rules", "invalid_position",
    "tile_not_in_set", "unknown_train", "too_many_bots", "webhook_url_not_allowed",
    "rated_game_dealt", "webhook_lookup_timeout",
}  # fmt: skip
SERVER_TROUBLE = {  # 5xx: worded by their status, "the server is having trouble"
    "corrupt_state", "internal_error", "storage_unavailable", "storage_full",
    "redis_unavailable", "unavailable",
}  # fmt: skip
GENERIC = {  # the page may meet them, and says only "The server did not accept that."
    "round_in_progress", "seats_open", "validation_failed", "log_full", "conflict",
    "game_not_over", "seat_taken",
}  # fmt: skip
ACTED_ON = {  # the page acts on them and shows nothing: a table showing lost entries starts over
    "after_ahead_of_log",
}  # fmt: skip


def scripts() -> list[Path]:
    return sorted(p for p in TABLE_DIR.glob("*.js"))


def used_keys() -> set[str]:
    keys: set[str] = set()
    for script in scripts():
        for counted, key in USED.findall(script.read_text()):
            keys |= {f"{key}.one", f"{key}.other"} if counted else {key}
    return keys


def test_every_language_has_exactly_the_keys_the_scripts_use() -> None:
    catalogue = json.loads(CATALOGUE.read_text())
    assert set(catalogue) == LANGUAGES
    used = used_keys()
    assert len(used) > 200
    for language, texts in catalogue.items():
        missing, unused = used - set(texts), set(texts) - used
        assert not missing and not unused, (language, sorted(missing), sorted(unused))
        assert all(isinstance(v, str) and v.strip() for v in texts.values()), language


def test_placeholders_agree_across_languages() -> None:
    catalogue = json.loads(CATALOGUE.read_text())
    for key, english in catalogue["en"].items():
        wanted = set(PLACEHOLDER.findall(english))
        for language, texts in catalogue.items():
            assert set(PLACEHOLDER.findall(texts[key])) == wanted, (language, key)


def test_the_languages_are_translated_and_offered_in_the_picker() -> None:
    catalogue = json.loads(CATALOGUE.read_text())
    for language in LANGUAGES - {"en"}:
        same = [k for k, v in catalogue[language].items() if v == catalogue["en"][k]]
        # Bot names, "Bot", "Host" and the like may stay; most of the page may not.
        assert len(same) < len(catalogue["en"]) * 0.15, (language, same)
    picker = (TABLE_DIR / "i18n.js").read_text()
    assert set(re.findall(r'\["(\w+)", "', picker)) == LANGUAGES


def test_no_sentence_is_written_into_a_script() -> None:
    found = [
        (script.name, match)
        for script in scripts()
        for match in SENTENCE.findall(script.read_text())
        if not match.startswith(("'Segoe", '"Segoe'))
    ]
    assert found == []


def worded_codes() -> dict[str, str]:
    """Each code hints.js words, and the catalogue key of its words."""
    return dict(WORDED.findall((TABLE_DIR / "hints.js").read_text()))


def test_every_problem_code_is_worded_or_set_aside_for_a_reason() -> None:
    worded = worded_codes()
    vocabulary = {problem.value for problem in Problem}
    assert len(worded) >= 15  # the pattern still reads hints.js
    # No code the server never sends (a typo words nothing).
    assert set(worded) - vocabulary <= OWN_CODES, sorted(set(worded) - vocabulary - OWN_CODES)
    # A new code of the vocabulary is worded, or put in one of the groups with its reason.
    groups = (NEVER_ASKED, SERVER_TROUBLE, GENERIC, ACTED_ON)
    left = vocabulary - set(worded) - set().union(*groups)
    assert not left, f"word them in hints.js (strings.json refuse.*), or set them aside: {left}"
    for group in groups:
        assert not group & set(worded), group & set(worded)  # set aside and worded: stale
        assert group <= vocabulary, group - vocabulary
    assert not any(problem.status >= 500 for problem in Problem if problem.value in GENERIC)
    # The players' loop's refusals: the join of a rated game's seat, "Play again" past the
    # claim window, a seek at a table one sits at already.
    for code in ("already_seated", "rematch_closed", "unrated_seat"):
        assert worded.get(code) == f"refuse.{code}", code
    catalogue = json.loads(CATALOGUE.read_text())
    for key in set(worded.values()):
        assert all(key in texts for texts in catalogue.values()), key
