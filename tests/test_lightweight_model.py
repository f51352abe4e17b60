"""Lightweight schema changes against a reference model that rewrites every row at every change.

Hypothesis drives random sequences of loads (INSERT ... VALUES, sometimes naming only some columns so
write defaults apply; repeated keys in the primary-key variant so rows are replaced) and random
lightweight ALTERs (ADD COLUMN with or without DEFAULT at any position, DROP COLUMN, re-ADD of a dropped
name, RENAME, widening MODIFY, moves, SET / DROP DEFAULT, NOT NULL -> NULL, several clauses in one
statement, and REVERT TO VERSION of any earlier version a revert presents without a rewrite) on a
fresh table. alterflow never touches a file for these (docs/semantics.md): old files are read
through the read-time mapping of docs/semantics.md. The model instead keeps plain rows as dicts keyed by
column id (its own numbering, in the order columns join the table) and rewrites them at every change:

- a row without a value under a column's id (written before the column existed) reads the column's
  initial default (a value of the column's type);
- DROP removes the column and keeps its values under its id (a REVERT brings them back; rows
  written after the drop read the returning column's initial default); RENAME only renames;
- a widening converts the values the way Spark casts them (int stays int, FLOAT -> DOUBLE keeps the
  float32 value, a DECIMAL keeps its value at the new scale, a DATE becomes midnight);
- the write default is kept as the literal it was given (a SQL literal has no type of its own) and
  is converted to the column's type when an insert uses it; a widening converts it as the column
  held it, like the column's values (a FLOAT default rounded to float32 stays so in DOUBLE).

Every read (`SELECT * FROM t ORDER BY key`, at a couple of random points and at the end of each
sequence) must equal the model, column names and Python value types included. DESCRIBE is compared
after every step (it is cheap: no Spark). A few invalid ALTERs are generated as well; they must fail
and change nothing.

Spark reads cost ~0.5 s each; the budget is about two minutes for the whole file. Shrinking is off
(every shrink step would re-run Spark reads): a failure prints the whole statement log instead.
"""

from __future__ import annotations

import copy
import datetime as dt
import itertools
import struct
from dataclasses import dataclass, field
from decimal import Context, Decimal

import pytest
from hypothesis import HealthCheck, Phase, event, given, note, settings
from hypothesis import strategies as st

from alterflow.engine.session import ResultSet
from alterflow.errors import UserError
from alterflow.values.types import DataType as T

pytestmark = pytest.mark.spark

EXAMPLES_PER_VARIANT = 20
_tables = itertools.count(1)


# ------------------------------------------------------------------------------------------------
# types and values (the model's own rules, written from docs/semantics.md, independent of alterflow.values.types'
# rules; a type is alterflow's DataType record, used for its fields and its SQL text only, which
# tests/values/test_types.py checks)
# ------------------------------------------------------------------------------------------------

INTEGERS = ("TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT")
INT_RANGE = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
    "LARGEINT": (-(10**38) + 1, 10**38 - 1),  # stored as DECIMAL(38,0)
}


EXACT = Context(prec=100)  # the default context (28 digits) would round DECIMAL(38,s) values


def scaled(value, scale: int) -> Decimal:
    return Decimal(value).quantize(Decimal(1).scaleb(-scale), context=EXACT)


def f32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def widenings(t: T) -> list[T]:
    """Every lossless widening of `t` (docs/semantics.md) the generator may pick."""
    if t.name in INTEGERS:
        return [T(n) for n in INTEGERS[INTEGERS.index(t.name) + 1 :]]
    if t.name == "FLOAT":
        return [T("DOUBLE")]
    if t.name == "DATE":
        return [T("DATETIME")]
    if t.name == "DECIMAL":
        out = []
        for extra_scale in (0, 1, 3):
            for extra_int in (0, 1, 4):
                s, p = t.scale + extra_scale, t.precision + extra_scale + extra_int
                if (extra_scale or extra_int) and p <= 38:
                    out.append(T("DECIMAL", p, s))
        return out
    if t.name in ("CHAR", "VARCHAR"):
        return [T("VARCHAR", length=m) for m in sorted({t.length + (t.name == "VARCHAR"), t.length + 5, 40})] + [T("STRING")]
    return []


def rejected_types(t: T) -> list[T]:
    """Type changes outside every list of docs/semantics.md (neither lightweight nor heavyweight): rejected."""
    if t.name in INTEGERS:
        return [T("BOOLEAN"), T("DATETIME")]
    return {
        "FLOAT": [T("BOOLEAN"), T("DATE"), T("DATETIME")],
        "DOUBLE": [T("BOOLEAN"), T("DATE"), T("DATETIME")],
        "DECIMAL": [T("BOOLEAN"), T("DATETIME")],
        "CHAR": [T("BOOLEAN")],
        "VARCHAR": [T("BOOLEAN")],
        "STRING": [T("BOOLEAN")],
        "DATE": [T("INT"), T("BOOLEAN"), T("DOUBLE")],
        "DATETIME": [T("INT"), T("BOOLEAN")],
        "BOOLEAN": [T("DATE"), T("DATETIME")],
    }[t.name]


TEXT = st.text(alphabet="aZ _'é中;-", max_size=8)
_SIMPLE = ["BOOLEAN", *INTEGERS, "FLOAT", "DOUBLE", "STRING", "DATE", "DATETIME"]


@st.composite
def types(draw) -> T:
    # the types with a widening (and the ones whose widening changes the representation) come more often
    kind = draw(st.sampled_from(_SIMPLE + ["FLOAT", "DATE", "DECIMAL", "DECIMAL", "CHAR", "VARCHAR", "SMALLINT"]))
    if kind == "DECIMAL":
        p = draw(st.sampled_from([1, 3, 5, 9, 18, 20, 38]))
        return T("DECIMAL", p, draw(st.integers(0, min(p, 6))))
    if kind in ("CHAR", "VARCHAR"):
        return T(kind, length=draw(st.sampled_from([1, 2, 5, 8])))
    return T(kind)


def values(t: T):
    """Literal values for a column of type `t` (what an INSERT or a DEFAULT writes)."""
    if t.name == "BOOLEAN":
        return st.booleans()
    if t.name in INTEGERS:
        low, high = INT_RANGE[t.name]
        return st.one_of(st.integers(-1000, 1000).filter(lambda v: low <= v <= high), st.integers(low, high))
    if t.name == "FLOAT":
        return st.one_of(
            st.floats(width=32, allow_nan=False, allow_infinity=False),
            st.floats(-1e30, 1e30, allow_nan=False),  # rounded to float32 when stored
            st.sampled_from([0.1, -2.5, 16777217.0, 1e-40]),
        )
    if t.name == "DOUBLE":
        return st.floats(allow_nan=False, allow_infinity=False)
    if t.name == "DECIMAL":
        top = 10**t.precision - 1
        return st.integers(-top, top).map(lambda n: Decimal(n).scaleb(-t.scale, context=EXACT))
    if t.name in ("CHAR", "VARCHAR"):
        return st.text(alphabet="aZ _'é中;-", max_size=t.length)
    if t.name == "STRING":
        return TEXT
    if t.name == "DATE":
        return st.dates()
    return st.datetimes()


def literal(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, dt.datetime):
        return f"'{value.isoformat(sep=' ')}'"
    return f"'{value.isoformat()}'"


def store(value, t: T):
    """The value a column of type `t` holds when `value` is written to it."""
    if value is None:
        return None
    if t.name == "FLOAT":
        return f32(value)
    if t.name == "DOUBLE":
        return float(value)
    if t.name == "DECIMAL":
        return scaled(value, t.scale)
    if t.name == "DATETIME" and not isinstance(value, dt.datetime):
        return dt.datetime.combine(value, dt.time())
    return value


def widen(value, old: T, new: T):
    """A stored value of type `old` cast to `new` (a lossless widening), the way Spark casts it."""
    if value is None:
        return None
    if new.name == "DECIMAL":
        return scaled(value, new.scale)
    if old.name == "DATE":
        return dt.datetime.combine(value, dt.time())
    return value  # int -> wider int, float32 value -> double, str -> str


def as_read(value, t: T):
    """The Python value a SELECT returns for a stored value (LARGEINT, a DECIMAL(38,0) inside Spark,
    comes back as an int like every integer type)."""
    if value is not None and t.name == "LARGEINT":
        return int(value)
    return value


def strict(value):
    if isinstance(value, Decimal):
        return ("Decimal", value, value.as_tuple().exponent)
    return (type(value).__name__, value)


# ------------------------------------------------------------------------------------------------
# the reference model
# ------------------------------------------------------------------------------------------------


@dataclass
class Col:
    name: str
    type: T
    nullable: bool = True
    initial: object = None  # a stored value: what rows written before the column existed hold
    write: object = None  # a literal value: what inserts that omit the column write
    key: bool = False  # the primary key (keyed) or the id column (plain): never dropped or changed
    id: int = 0  # the column's id, given by the model when the column joins the table


@dataclass
class Model:
    keyed: bool
    columns: list[Col] = field(default_factory=list)
    # key value -> {column id: stored value}; a column the row was written without (added later)
    # reads its initial default, and a dropped column's values stay, for a REVERT to bring back
    rows: dict = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    fresh: itertools.count = field(default_factory=lambda: itertools.count(1))
    ids: itertools.count = field(default_factory=lambda: itertools.count(1))
    version: int = 1
    history: dict = field(default_factory=dict)  # version -> its columns (copies), for REVERT

    def join(self, col: Col) -> Col:
        col.id = next(self.ids)
        return col

    def snapshot(self) -> None:
        self.history[self.version] = copy.deepcopy(self.columns)

    @property
    def key(self) -> Col:
        return next(c for c in self.columns if c.key)

    def col(self, name: str) -> Col:
        return next(c for c in self.columns if c.name.lower() == name.lower())

    def taken(self, name: str) -> bool:
        return any(c.name.lower() == name.lower() for c in self.columns)

    def new_name(self) -> str:
        return f"c{next(self.fresh)}"

    def index(self, name: str) -> int:
        return next(i for i, c in enumerate(self.columns) if c.name.lower() == name.lower())

    # -- changes: every row is rewritten --------------------------------------------------------
    def insert(self, names: list[str], rows: list[list]) -> None:
        for values in rows:
            given = {n.lower(): v for n, v in zip(names, values)}
            row = {}
            for c in self.columns:
                raw = given[c.name.lower()] if c.name.lower() in given else c.write
                row[c.id] = store(raw, c.type)
            self.rows[row[self.key.id]] = row  # the latest write of a key replaces the row

    def add(self, col: Col, position: str | None) -> None:
        self.join(col)  # existing rows have no value under its id: they read its initial default
        if position is None:
            self.columns.append(col)
        elif position == "FIRST":
            self.columns.insert(0, col)
        else:
            self.columns.insert(self.index(position) + 1, col)
        self.dropped = [n for n in self.dropped if n.lower() != col.name.lower()]

    def drop(self, name: str) -> None:
        col = self.col(name)
        self.columns.remove(col)
        self.dropped.append(col.name)

    def rename(self, old: str, new: str) -> None:
        col = self.col(old)
        self.dropped = [n for n in self.dropped if n.lower() != new.lower()]
        col.name = new

    def retype(self, name: str, new: T) -> None:
        col = self.col(name)
        for row in self.rows.values():
            if col.id in row:
                row[col.id] = widen(row[col.id], col.type, new)
        col.initial = widen(col.initial, col.type, new)
        if col.write is not None:  # the default the column held, converted like its values (a FLOAT's stays rounded)
            col.write = widen(store(col.write, col.type), col.type, new)
        col.type = new

    def move(self, name: str, position: str) -> None:
        col = self.col(name)
        self.columns.remove(col)
        if position == "FIRST":
            self.columns.insert(0, col)
        else:
            self.columns.insert(self.index(position) + 1, col)

    def revert_targets(self) -> list[int]:
        """Versions a REVERT presents without a rewrite: every column still here has the same type
        and does not become NOT NULL again; a column that comes back is nullable or has a default,
        and no later version stored it under another type."""
        now = {c.id: c for c in self.columns}
        targets = []
        for version, columns in self.history.items():
            if version == self.version:
                continue
            ok = True
            for col in columns:
                current = now.get(col.id)
                if current is not None:
                    ok = ok and current.type == col.type and not (current.nullable and not col.nullable)
                    continue
                ok = ok and (col.nullable or col.initial is not None)
                for later in range(version + 1, self.version):
                    held = next((c for c in self.history[later] if c.id == col.id), None)
                    ok = ok and (held is None or held.type == col.type)
            if ok:
                targets.append(version)
        return targets

    def revert(self, version: int) -> None:
        gone = [c.name for c in self.columns if all(c.id != old.id for old in self.history[version])]
        self.columns = copy.deepcopy(self.history[version])
        self.dropped = [n for n in self.dropped + gone if not self.taken(n)]

    # -- what reads should show -----------------------------------------------------------------
    def expected(self) -> tuple[tuple[str, ...], list[tuple]]:
        names = tuple(c.name for c in self.columns)
        rows = [tuple(as_read(self.rows[k].get(c.id, c.initial), c.type) for c in self.columns) for k in sorted(self.rows)]
        return names, rows

    def describe(self) -> list[tuple]:
        return [
            (c.name, c.type.sql(), "YES" if c.nullable else "NO", "true" if (c.key and self.keyed) else "false", c.write is None)
            for c in self.columns
        ]


def column_sql(col: Col, position: str | None = None) -> str:
    text = f"{col.name} {col.type.sql()}"
    if not col.nullable:
        text += " NOT NULL"
    if col.write is not None:
        text += f" DEFAULT {literal(col.write)}"
    if position == "FIRST":
        text += " FIRST"
    elif position is not None:
        text += f" AFTER {position}"
    return text


# ------------------------------------------------------------------------------------------------
# drawing statements from the model's state
# ------------------------------------------------------------------------------------------------


def draw_column(draw, model: Model, name: str) -> Col:
    t = draw(types())
    default = draw(st.one_of(st.none(), values(t)))
    nullable = default is None or draw(st.booleans())
    return Col(name, t, nullable, initial=store(default, t), write=default)


def draw_value(draw, col: Col):
    if col.nullable and draw(st.integers(0, 4)) == 0:
        return None
    return draw(values(col.type))


def draw_insert(draw, model: Model, next_id: itertools.count) -> tuple[str, list[str], list[list]]:
    must = [c for c in model.columns if c.key or (not c.nullable and c.write is None)]
    may = [c for c in model.columns if c not in must]
    if draw(st.booleans()):
        named = None
        columns = list(model.columns)
    else:
        chosen = draw(st.lists(st.sampled_from(may), unique_by=lambda c: c.name)) if may else []
        columns = draw(st.permutations(must + chosen))
        named = [c.name for c in columns]
    rows = []
    for _ in range(draw(st.integers(1, 4))):
        row = []
        for c in columns:
            if c.key:
                row.append(draw(st.integers(0, 6)) if model.keyed else next(next_id))
            else:
                row.append(draw_value(draw, c))
        rows.append(row)
    names = named if named is not None else [c.name for c in columns]
    head = f" ({', '.join(named)})" if named is not None else ""
    body = ", ".join("(" + ", ".join(literal(v) for v in row) + ")" for row in rows)
    return f"INSERT INTO {{t}}{head} VALUES {body}", names, rows


def draw_position(draw, model: Model, exclude: str | None = None) -> str | None:
    anchors = [c.name for c in model.columns if c.name != exclude]
    return draw(st.one_of(st.none(), st.just("FIRST"), st.sampled_from(anchors)))


def draw_clause(draw, model: Model, retyped: set[str]) -> str | None:
    """One valid lightweight clause, applied to the model; None when the drawn kind does not apply."""
    values_cols = [c for c in model.columns if not c.key]
    kind = draw(
        st.sampled_from(["add", "add", "drop", "readd", "rename", "widen", "widen", "move", "set_default", "drop_default", "nullable"])
    )
    if kind in ("add", "readd"):
        if kind == "readd" and model.dropped:
            name = draw(st.sampled_from(model.dropped))
            name = draw(st.sampled_from([name, name.upper()]))
        else:
            name = model.new_name()
        col = draw_column(draw, model, name)
        position = draw_position(draw, model)
        model.add(col, position)
        return "ADD COLUMN " + column_sql(col, position)
    if not values_cols:
        return None
    col = draw(st.sampled_from(values_cols))
    if kind == "drop":
        model.drop(col.name)
        return f"DROP COLUMN {col.name}"
    if kind == "rename":
        choices = [model.new_name(), col.name.swapcase()] + [n for n in model.dropped if not model.taken(n)]
        new = draw(st.sampled_from(choices))
        old = col.name
        model.rename(old, new)
        return f"RENAME COLUMN {old} TO {new}"
    if kind == "widen":
        widenable = [c for c in values_cols if widenings(c.type) and c.name.lower() not in retyped]
        if not widenable:
            return None
        # half the time a column that old rows read through its initial default: the value a cast
        # must keep is then the default's, not a stored one
        with_default = [c for c in widenable if c.initial is not None]
        col = draw(st.sampled_from(with_default if with_default and draw(st.booleans()) else widenable))
        options = widenings(col.type)
        new = draw(st.sampled_from(options))
        position = draw(st.one_of(st.none(), st.just(draw_position(draw, model, exclude=col.name))))
        retyped.add(col.name.lower())
        model.retype(col.name, new)
        text = f"MODIFY COLUMN {col.name} {new.sql()}"
        if position is not None:
            model.move(col.name, position)
            text += " FIRST" if position == "FIRST" else f" AFTER {position}"
        return text
    if kind == "move":
        position = draw_position(draw, model, exclude=col.name) or "FIRST"
        model.move(col.name, position)
        return f"MODIFY COLUMN {col.name} {col.type.sql()} " + ("FIRST" if position == "FIRST" else f"AFTER {position}")
    if kind == "set_default":
        value = draw(values(col.type)) if not col.nullable or draw(st.integers(0, 5)) else None
        col.write = value
        return f"ALTER COLUMN {col.name} SET DEFAULT {literal(value)}"
    if kind == "drop_default":
        col.write = None
        return f"ALTER COLUMN {col.name} DROP DEFAULT"
    # NOT NULL -> NULL
    not_null = [c for c in values_cols if not c.nullable]
    if not not_null:
        return None
    col = draw(st.sampled_from(not_null))
    col.nullable = True
    return f"MODIFY COLUMN {col.name} {col.type.sql()} NULL"


def draw_invalid(draw, model: Model) -> str:
    """A statement that must be rejected without changing anything (never a heavyweight one)."""
    values_cols = [c for c in model.columns if not c.key]
    key = model.key
    options = [
        f"DROP COLUMN no_such_{next(model.fresh)}",
        f"ADD COLUMN {model.new_name()} INT NOT NULL",
        f"ADD COLUMN {draw(st.sampled_from(model.columns)).name.upper()} INT",
        f"ADD COLUMN {model.new_name()} INT, DROP COLUMN no_such_{next(model.fresh)}",  # all or nothing
        f"ADD COLUMN {model.new_name()} TINYINT DEFAULT 1000",
        f"MODIFY COLUMN {key.name} BIGINT" if model.keyed else f"ADD COLUMN {model.new_name()} DATE DEFAULT 'x'",
    ]
    if model.keyed:
        options += [f"DROP COLUMN {key.name}", f"RENAME COLUMN {key.name} TO {model.new_name()}"]
    if values_cols:
        col = draw(st.sampled_from(values_cols))
        other = draw(st.sampled_from([c for c in model.columns if c is not col]))
        options += [
            f"RENAME COLUMN {col.name} TO {other.name}",
            f"MODIFY COLUMN {col.name} {draw(st.sampled_from(rejected_types(col.type))).sql()}",
            f"ADD COLUMN {model.new_name()} INT, MODIFY COLUMN {col.name} {rejected_types(col.type)[0].sql()}",
        ]
    return "ALTER TABLE {t} " + draw(st.sampled_from(options))


# ------------------------------------------------------------------------------------------------
# the property
# ------------------------------------------------------------------------------------------------


class Runner:
    def __init__(self, session, table: str):
        self.session = session
        self.table = table
        self.log: list[str] = []

    def __call__(self, sql: str, rejected: bool = False):
        text = sql.replace("{t}", self.table) + ";"
        entry = f"-- must be rejected: {text}" if rejected else text
        self.log.append(entry)
        note(entry)
        results = list(self.session.run(text))
        return results[-1] if results else None

    def history(self) -> str:
        return "\n".join(self.log)


def check_describe(run: Runner, model: Model) -> None:
    described = list(run.session.run(f"DESCRIBE {run.table}"))[-1]
    got = [(r[0], r[1], r[2], r[3], r[4] is None) for r in described.rows]
    assert got == model.describe(), f"DESCRIBE differs\n got {got}\n want {model.describe()}\n{run.history()}"
    assert run.session.catalog.table(run.table).current_version == model.version, run.history()


def check_read(run: Runner, model: Model) -> None:
    result = run(f"SELECT * FROM {{t}} ORDER BY {model.key.name}")
    assert isinstance(result, ResultSet)
    names, rows = model.expected()
    context = f"\nstatements:\n{run.history()}"
    assert result.columns == names, f"columns {result.columns} != {names}{context}"
    assert len(result.rows) == len(rows), f"{len(result.rows)} rows, expected {len(rows)}{context}"
    for got, want in zip(result.rows, rows):
        assert [strict(v) for v in got] == [strict(v) for v in want], (
            f"row differs\n got  {got!r}\n want {want!r}\n columns {names}{context}"
        )


@pytest.mark.parametrize("keyed", [False, True], ids=["plain", "primary-key"])
@settings(
    max_examples=EXAMPLES_PER_VARIANT,
    deadline=None,
    database=None,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_lightweight_changes_read_like_a_full_rewrite(session, keyed, data):
    draw = data.draw
    model = Model(keyed)
    table = f"lw{next(_tables)}"
    run = Runner(session, table)
    next_id = itertools.count(1)

    key = model.join(Col("k" if keyed else "id", T("INT"), nullable=False, key=True))
    model.columns.append(key)
    for _ in range(draw(st.integers(1, 3), label="initial columns")):
        model.columns.append(model.join(draw_column(draw, model, model.new_name())))
    definitions = ", ".join(column_sql(c) for c in model.columns)
    if keyed:
        run(f"CREATE TABLE {{t}} ({definitions}, PRIMARY KEY (k)) DISTRIBUTED BY HASH(k) BUCKETS 3")
    else:
        run(f"CREATE TABLE {{t}} ({definitions}) DISTRIBUTED BY HASH(id) BUCKETS 2")
    check_describe(run, model)
    model.snapshot()

    steps = draw(st.integers(3, 12), label="steps")
    checkpoints = draw(st.sets(st.integers(0, steps - 2), max_size=2), label="reads in between")
    for step in range(steps):
        kind = "insert" if step == 0 else draw(st.sampled_from(["insert", "insert", "alter", "alter", "alter", "invalid", "revert"]))
        if kind == "insert":
            sql, names, rows = draw_insert(draw, model, next_id)
            run(sql)
            model.insert(names, rows)
        elif kind == "alter":
            retyped: set[str] = set()
            clauses = []
            for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
                clause = draw_clause(draw, model, retyped)
                if clause is not None:
                    clauses.append(clause)
            if clauses:
                run("ALTER TABLE {t} " + ", ".join(clauses))
                model.version += 1
                model.snapshot()
        elif kind == "revert":
            targets = model.revert_targets()
            if targets:
                target = draw(st.sampled_from(targets), label="revert to")
                event("a lightweight REVERT")
                run(f"ALTER TABLE {{t}} REVERT TO VERSION {target}")
                model.revert(target)
                model.version += 1
                model.snapshot()
        else:
            statement = draw_invalid(draw, model)
            with pytest.raises(UserError):  # a refusal the user reads, not a bug
                run(statement, rejected=True)
        check_describe(run, model)
        if step in checkpoints:
            check_read(run, model)
    check_read(run, model)
    run("DROP TABLE {t}")
