"""The one masking rule on what leaves the process as data: :func:`mask_out` on JSON, dict reprs and free text.

A replica's ``structured_error_msg`` is the JSON its error file holds, and the issue it fixes was that masking
made it invalid JSON (every string masked as shell text: ``"K=x"`` re-quoted as ``'K=********'``) and left
a value under a secret key in place when it was a list or an object. Each table row and each property below
fails on the rule before ``mask_out``: masked JSON must re-parse with the same structure, and no part of a
secret may show. Secrets start and end with markers found nowhere else, so a leak of either end is caught.
"""

from __future__ import annotations

import json
from typing import Any, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sched.specs import AppState, AppStatus, AppStatusError, ReplicaStatus, RoleStatus
from jupyter_sched.specs.output.masking import MASK, is_secret_name, mask_argv, mask_out, mask_tree, masked_copy

HEAD, TAIL = "Zq7", "Qx9"
S = f"{HEAD}sk-live-1{TAIL}"


def hidden(text: str) -> bool:
    return HEAD not in text and TAIL not in text


def same_shape(a: Any, b: Any) -> bool:
    """``b`` has ``a``'s structure: the same keys in the same order, the same list lengths (a value under a
    secret key may have become the mask)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(b[k] == MASK or same_shape(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same_shape(x, y) for x, y in zip(a, b))
    return True


# (a structured error as a replica writes it, a word that must still be there after masking)
JSON_SHAPES = [
    ({"message": f"WANDB_API_KEY={S}"}, "WANDB_API_KEY"),
    ({"message": {"message": f"env WANDB_API_KEY={S} failed", "extraInfo": {"timestamp": "1"}}}, "failed"),
    ({"WANDB_API_KEY": S}, "WANDB_API_KEY"),
    ({"message": f"{{'WANDB_API_KEY': '{S}'}}"}, "WANDB_API_KEY"),
    ({"message": f'{{"WANDB_API_KEY": "{S}"}}'}, "WANDB_API_KEY"),  # JSON in a JSON string
    ({"message": f"RuntimeError: --token {S}"}, "RuntimeError"),
    ({"message": f"clone https://me:{S}@example.com/r.git"}, "example.com"),
    ({"message": f"opts API_TOKEN:{S},LR:0.1"}, "LR:0.1"),
    ({"api_key": 12345, "note": "a number"}, "a number"),  # a number under a secret key (no marker: checked below)
    ({"credentials": {"user": "u", "value": S}}, "credentials"),  # an object under a secret key
    ({"api_keys": [S, S]}, "api_keys"),  # a list under a secret key
    ([{"HF_TOKEN": S}, "plain", 3], "plain"),  # a JSON list
    ({"message": f"caf\u00e9 \u2603 HF_TOKEN={S} \u00fcber"}, "caf\u00e9"),  # unicode kept
    ({"message": "nothing to hide", "exit": 1}, "nothing to hide"),
]


@pytest.mark.parametrize("layout", [{}, {"indent": 2}, {"separators": (",", ":")}, {"ensure_ascii": False}])
@pytest.mark.parametrize("doc, kept", JSON_SHAPES)
def test_masked_json_parses_keeps_its_structure_and_hides_the_secret(doc: Any, kept: str, layout: dict) -> None:
    text = json.dumps(doc, **layout)
    for masked in (
        mask_out(text),  # the string itself, as an error's text is shown
        mask_out({"structured_error_msg": text})["structured_error_msg"],  # inside status --json
        mask_out(json.dumps({"structured_error_msg": text})),  # JSON holding it, as a server answer is sent
    ):
        assert hidden(masked), masked
        assert "12345" not in masked
        while isinstance(masked, str) and masked.lstrip()[:1] in "{[":
            parsed = json.loads(masked)
            if "structured_error_msg" in parsed and isinstance(parsed, dict):
                masked = parsed["structured_error_msg"]
                continue
            assert same_shape(doc, parsed), (doc, parsed)
            assert kept in json.dumps(parsed, ensure_ascii=False), parsed
            break
    assert mask_out(mask_out(text)) == mask_out(text)  # masking twice (server, then front end) reads as once


def test_json_keeps_its_layout_and_is_unchanged_when_nothing_is_hidden() -> None:
    pretty = json.dumps({"message": {"message": f"HF_TOKEN={S}", "extraInfo": {"py_callstack": "x"}}}, indent=4)
    masked = mask_out(pretty + "\n")
    assert masked.endswith("}\n") and '\n    "message": {\n        "message": "HF_TOKEN=********"' in masked
    compact = json.dumps({"a": 1, "HF_TOKEN": S, "b": [1, 2]}, separators=(",", ":"))
    assert mask_out(compact) == '{"a":1,"HF_TOKEN":"********","b":[1,2]}'
    assert mask_out('{"a": "\\u00e9", "HF_TOKEN": "x"}') == '{"a": "\\u00e9", "HF_TOKEN": "********"}'
    assert mask_out('{"a": "\u00e9", "HF_TOKEN": "x"}') == '{"a": "\u00e9", "HF_TOKEN": "********"}'
    as_written = '{ "message" :"no secret here",\n"code": 1.50 }'
    assert mask_out(as_written) == as_written  # nothing to hide: not even re-laid out


@pytest.mark.parametrize(
    "text",
    [
        f'{{"message": "WANDB_API_KEY={S}"',  # cut short (an error file written while the disk filled)
        f"{{'WANDB_API_KEY': '{S}'}}",  # a dict's repr, not JSON
        f"[not json] HF_TOKEN={S}",
        f'{{"HF_TOKEN": "{S}", }}',  # a trailing comma
    ],
)
def test_text_that_looks_like_json_but_is_not_is_masked_as_text(text: str) -> None:
    masked = mask_out(text)
    assert hidden(masked) and MASK in masked, masked
    assert hidden(mask_out({"msg": text})["msg"])


@pytest.mark.parametrize(
    "text, expected",
    [
        (f'main[0]: {{"HF_TOKEN": "{S}", "n": 1}} and then', 'main[0]: {"HF_TOKEN": "********", "n": 1} and then'),
        (f"failed: {{'API_KEYS': ['{S}', '{S}'], 'LR': 0.1}}", "failed: {'API_KEYS': '********', 'LR': 0.1}"),
        (f'got {{"auth": {{"token": "{S}"}}}}', 'got {"auth": "********"}'),
        (f"KEY=value x HF_TOKEN={S}", "KEY=value x HF_TOKEN=********"),
        (f"HF_TOKEN:{S} LR:0.1", "HF_TOKEN:******** LR:0.1"),
        (f"--password {S} --lr 0.1", "--password ******** --lr 0.1"),
        (f"https://u:{S}@h.example/x", "https://********@h.example/x"),
        ("KeyError: 'y' {'LR': '0.1'} [1, 2] {'HF_TOKEN': []}", "KeyError: 'y' {'LR': '0.1'} [1, 2] {'HF_TOKEN': []}"),
        (f"x {{'HF_TOKEN': '{HEAD}[]{TAIL}'}}", "x {'HF_TOKEN': '********'}"),  # JSON-looking text in a value
        ('main[0]: {"HF_TOKEN": 12, "n": [1]}', 'main[0]: {"HF_TOKEN": "********", "n": [1]}'),  # still JSON
        (f"f(api_key={{'a': '{S}'}}, lr=[1]) HF_TOKEN=[1, 2]", "f(api_key=********, lr=[1]) HF_TOKEN=********"),
        (f'err {{"message": "{{\\"HF_TOKEN\\": \\"{S}\\"}}"}}', 'err {"message": "{\\"HF_TOKEN\\": \\"********\\"}"}'),
    ],
)
def test_free_text_shapes(text: str, expected: str) -> None:
    assert mask_out(text) == expected


def test_strings_in_a_structure_are_masked_as_text_and_argv_and_env_lists_as_before() -> None:
    tree = {
        "msg": f"main[0]: {{'WANDB_API_KEY': '{S}'}}",  # a dict repr in a message: the shell rule missed it
        "error": json.dumps({"message": f"HF_TOKEN={S}"}),  # JSON in a dict value
        "args": ["--token", S, f"--password={S}", "--lr", "0.1"],
        "env": [f"HF_TOKEN={S}", "LR=0.1", "bare"],
        "entrypoint": f"sh -c 'train --token {S} && echo done'",
        "script": f"export HF_TOKEN='{S}'\nsrun x --token=a\\ {S}",
        "note": f"couldn't set HF_TOKEN={S}, isn't it",
    }
    masked = mask_out(tree)
    assert hidden(json.dumps(masked)), masked
    assert masked["args"] == mask_argv(tree["args"]) == ["--token", MASK, f"--password={MASK}", "--lr", "0.1"]
    assert masked["env"] == [f"HF_TOKEN={MASK}", "LR=0.1", MASK]
    assert masked["entrypoint"] == f"sh -c 'train --token {MASK} && echo done'"
    assert masked["note"] == f"couldn't set HF_TOKEN={MASK}, isn't it"  # no shell quotes added to a message
    assert json.loads(masked["error"]) == {"message": f"HF_TOKEN={MASK}"}
    assert mask_tree(tree) == masked


def test_masked_copy_masks_a_status_before_it_formats_itself() -> None:
    error = json.dumps({"message": {"message": f"RuntimeError: WANDB_API_KEY={S} " + "x " * 60, "errorCode": 1}})
    replica = ReplicaStatus(0, AppState.FAILED, "main", "h", structured_error_msg=error, msg=f"'API_KEY': '{S}'")
    status = AppStatus(AppState.FAILED, msg=f"main[0]: {{'HF_TOKEN': ['{S}']}}", structured_error_msg=error,
                       roles=[RoleStatus("main", [replica])])  # fmt: skip
    copy = masked_copy(status)
    assert isinstance(copy, AppStatus) and isinstance(copy.roles[0].replicas[0], ReplicaStatus)
    assert copy.state == AppState.FAILED and status.structured_error_msg == error  # the original is untouched
    with pytest.raises(AppStatusError) as raised:
        status.raise_for_status()
    shown = (copy.format(), json.dumps(mask_out(copy.to_json())), json.dumps(mask_out(status)), str(raised.value))
    for text in (*shown, repr(status), str(status)):  # AppStatus's own repr and str mask, as Role's and AppDef's
        assert hidden(text), text
    assert json.loads(copy.structured_error_msg)["message"]["errorCode"] == 1
    assert "RuntimeError: WANDB_API_KEY=********" in copy.format()


# -- properties ---------------------------------------------------------------------------------------------------
SECRET_KEY = st.sampled_from(["HF_TOKEN", "WANDB_API_KEY", "db_password", "GITHUB_PAT", "auth", "aws_secret"])
PLAIN_KEY = st.sampled_from(["message", "extraInfo", "errorCode", "timestamp", "LR", "path", "items", "note"])
ANY = st.characters(blacklist_categories=("Cs",))
SECRET = st.text(ANY, max_size=10).map(lambda middle: f"{HEAD}{middle}{TAIL}")
PLAIN = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=HEAD + TAIL), max_size=12)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), PLAIN)


def documents() -> st.SearchStrategy[Any]:
    """JSON documents in which each secret-looking key holds a secret (a string, or a list or object of
    them) and plain keys hold plain values or more documents."""
    secret_value = st.one_of(
        SECRET, st.lists(SECRET, min_size=1, max_size=3), st.dictionaries(PLAIN_KEY, SECRET, min_size=1)
    )
    return st.recursive(
        SCALAR,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(st.one_of(PLAIN_KEY, SECRET_KEY), inner, max_size=4).flatmap(
                lambda d: st.fixed_dictionaries(
                    {k: (secret_value if is_secret_name(k) else st.just(v)) for k, v in d.items()}
                )
            ),
        ),
        max_leaves=12,
    ).filter(lambda d: isinstance(d, (dict, list)))


@settings(max_examples=300, deadline=None)
@given(documents(), st.sampled_from([None, 2, "\t"]), st.booleans())
def test_any_json_document_stays_json_and_shows_no_secret(doc: Any, indent: Any, ascii_only: bool) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=ascii_only)
    masked = mask_out(text)
    assert hidden(masked), masked
    parsed = json.loads(masked)
    assert same_shape(doc, parsed)
    assert mask_out(masked) == masked


@settings(max_examples=300, deadline=None)
@given(SECRET_KEY, SECRET, PLAIN, st.sampled_from(["{k}={v}", "{k}:{v}", "'{k}': {r}", '"{k}": {j}', "{k}={r}"]))
def test_a_secret_pair_in_free_text_or_in_a_string_of_a_structure_is_hidden(
    key: str, secret: str, before: str, form: str
) -> None:
    if form in ("{k}={v}", "{k}:{v}") and any(c.isspace() or c in ",;'\"(){}[]\\" for c in secret):
        secret = f"{HEAD}{TAIL}"  # unquoted, a value ends at a space or a separator: nothing could tell more
    pair = form.format(k=key, v=secret, r=repr(secret), j=json.dumps(secret))
    texts: List[str] = [f"{before} {pair} end", f"{{{pair}}}", f"failed: [{pair}]"]
    for text in texts:
        assert hidden(mask_out(text)), (text, mask_out(text))
        assert hidden(json.dumps(mask_out({"msg": text}))), text
