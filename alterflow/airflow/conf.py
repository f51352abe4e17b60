"""A schema-change DAG run's conf checked and turned into the core's `AlterRequest`, whose
idempotency key is the run id. No Airflow import: every problem is a `BadRunConf` with one line
that names the parameter.

The conf: `statement` (one ALTER TABLE); `table` (optional: the table the statement names; when
given, the statement must name it); the properties, as `properties` (a JSON object or its text)
and as the trigger form's own fields `postpone_swap`, `on_cast_error`, `engine` and `timeout`,
which override `properties`' keys of the same names (both override the statement's PROPERTIES);
`dry_run`; and `resume_job_id`, set only by alterflow itself (GC and the page's Resume) to take
an orphaned job over."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from alterflow.catalog.states import Engine, OnCastError
from alterflow.errors import UserError, shown
from alterflow.planner import AlterRejected
from alterflow.sql import AlterTable, SqlError, parse_statements
from alterflow.sql.names import MAX_NAME, valid_name
from alterflow.workflow import alter_steps
from alterflow.workflow.request import AlterRequest, property_text


class BadRunConf(UserError):
    """The run's parameters cannot describe one ALTER; the message is the one line the user sees."""


def _table(value) -> str:
    if not isinstance(value, str) or not valid_name(value.strip()):
        raise BadRunConf(f"param table: invalid name {shown(value)}; names match [A-Za-z_][A-Za-z0-9_]* up to {MAX_NAME} characters")
    return value.strip()


def statement_table(statement: str) -> str:
    """The table `statement` alters, for a conf without `table`."""
    try:
        statements = parse_statements(statement)
    except SqlError as exc:
        raise BadRunConf(f"param statement: {exc}") from None
    if len(statements) != 1 or not isinstance(statements[0], AlterTable) or statements[0].explain:
        raise BadRunConf("param statement: the statement must be exactly one ALTER TABLE statement")
    return statements[0].table


# The trigger form's property fields: (does a value do, what the line says is expected), checked
# here for REST callers too (the form's JSON schema checks them first).
FORM_PROPERTIES = {
    "postpone_swap": (lambda v: isinstance(v, bool), "true or false"),
    "on_cast_error": (lambda v: v in tuple(OnCastError), " or ".join(OnCastError)),
    "engine": (lambda v: v in tuple(Engine), "auto or local or spark"),
    "timeout": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0, "a positive number of seconds"),
}


def _form_property(name: str, value) -> str | None:
    """A form property field's value as property text; None when it is left empty."""
    if value is None or value == "":
        return None
    accepts, expected = FORM_PROPERTIES[name]
    if not accepts(value):
        raise BadRunConf(f"param {name}: expected {expected}, got {shown(value)}")
    return property_text(value)


def _statement(value) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise BadRunConf(f"param statement: expected the ALTER TABLE statement as text, got {type(value).__name__}")
    if not value.strip():
        raise BadRunConf("param statement: empty; give one ALTER TABLE statement")
    return value.strip()


def _properties(value) -> dict[str, str]:
    """A JSON object (or its text) of scalar values, returned with every value as text."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise BadRunConf(f"param properties: not valid JSON ({exc.msg} at position {exc.pos}); expected a JSON object") from None
    if not isinstance(value, Mapping):
        raise BadRunConf(f'param properties: expected a JSON object such as {{"postpone_swap": "true"}}, got {type(value).__name__}')
    properties = {}
    for key, item in value.items():
        text = property_text(item)
        if text is None:
            raise BadRunConf(f"param properties: {shown(key)} must be a string, number or boolean")
        properties[str(key)] = text
    return properties


def _resume_job_id(value) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value) if 0 < value < 2**63 else ""
    else:
        text = value.strip() if isinstance(value, str) else ""
    if not re.fullmatch(r"0*[1-9][0-9]{0,17}", text):  # a catalog id: below 2**63, ASCII digits
        raise BadRunConf(f"param resume_job_id: expected the id of an orphaned alter job (a positive integer), got {shown(value)}")
    return int(text)


def dry_run(params: Mapping) -> bool:
    """The `dry_run` param: true or false (the trigger form's checkbox; JSON booleans in REST)."""
    value = params.get("dry_run", False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BadRunConf(f"param dry_run: expected true or false, got {shown(value)}")
    return value


def alter_request(params: Mapping, run_id: str) -> AlterRequest:
    """The run's request, its statement parsed as exactly one ALTER TABLE (of `table`, if given)."""
    if not isinstance(params, Mapping):
        raise BadRunConf("the run conf must be a JSON object with a statement (and, optionally, table and properties)")
    statement = _statement(params.get("statement"))
    table = params.get("table")
    properties = _properties(params.get("properties"))
    for name in FORM_PROPERTIES:
        if (text := _form_property(name, params.get(name))) is not None:
            properties[name] = text
    request = AlterRequest(
        table=_table(statement_table(statement) if table is None or table == "" else table),
        statement=statement,
        properties=properties,
        request_id=run_id,
        resume_job_id=_resume_job_id(params.get("resume_job_id")),
    )
    try:
        alter_steps.parse_alter(request)
    except AlterRejected as exc:
        raise BadRunConf(f"param statement: {exc}") from None
    dry_run(params)  # checked with the others, before anything runs
    return request
