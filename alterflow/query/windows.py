"""Window functions with Spark's frames, types and column names (docs/semantics.md, "Queries: two
engines").

Spark's frame rules are spelled out in the DuckDB text, never left to DuckDB's defaults: with an
ORDER BY an aggregate or a value function reads RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW,
without one the whole partition; ranking functions and lag/lead read no frame. The unaliased name
is Spark's `toPrettySQL` of the WindowExpression: the function, then `OVER (PARTITION BY ...
ORDER BY k ASC NULLS FIRST <frame>)` with the frame Spark resolved (lag(x) reads `ROWS BETWEEN -1
FOLLOWING AND -1 FOLLOWING`). A RANGE frame with offsets takes one integral, decimal or DATE key;
where Spark's bound `key + offset` would wrap around in the key's type, the row's answer comes from
Spark (FALLBACK).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlglot import exp

from alterflow.query import sql_types as st
from alterflow.query.expression_core import (
    FALLBACK,
    ExpressionContext,
    NotLocal,
    Value,
    construct_name,
    dispatch_rule,
    named,
    ordering,
    refuse_marked_call,
    translate,
    widened_sql,
    wrap,
)
from alterflow.query.sql_types import SqlType

_ROWS_TO_CURRENT = "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
_RANGE_TO_CURRENT = "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
_WHOLE = "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"

# Ranking functions: Spark's name (its case is Spark's), DuckDB function, Spark type, frame named.
_RANKING = {
    exp.RowNumber: ("row_number()", "row_number()", st.INT, _ROWS_TO_CURRENT),
    exp.Rank: ("RANK()", "rank()", st.INT, _ROWS_TO_CURRENT),
    exp.DenseRank: ("DENSE_RANK()", "dense_rank()", st.INT, _ROWS_TO_CURRENT),
    exp.PercentRank: ("PERCENT_RANK()", "percent_rank()", st.DOUBLE, _ROWS_TO_CURRENT),
    exp.CumeDist: ("cume_dist()", "cume_dist()", st.DOUBLE, _RANGE_TO_CURRENT),
}


@dataclass(frozen=True)
class _Bound:
    """A frame boundary: position -1 UNBOUNDED PRECEDING, 0 CURRENT ROW or an offset, 1 UNBOUNDED
    FOLLOWING; `offset` is signed (negative PRECEDING)."""

    position: int
    offset: int = 0

    def rank(self) -> float:
        return float("-inf") if self.position < 0 else float("inf") if self.position > 0 else self.offset


def _bound(value, side) -> _Bound:
    side = (side or "").upper()
    if value == "CURRENT ROW":
        return _Bound(0)
    if value == "UNBOUNDED":
        return _Bound(-1 if side == "PRECEDING" else 1)
    if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit() and side in ("PRECEDING", "FOLLOWING"):
        n = int(value.this)
        if n >= 1 << 31:
            raise NotLocal("a window frame offset beyond INT")
        if n == 0:  # Spark names it `0 PRECEDING`, not CURRENT ROW
            raise NotLocal("a window frame offset of 0")
        return _Bound(0, -n if side == "PRECEDING" else n)
    raise NotLocal("a window frame boundary other than a number, UNBOUNDED or CURRENT ROW")


@dataclass(frozen=True)
class _Frame:
    kind: str  # ROWS or RANGE
    lower: _Bound
    upper: _Bound

    @property
    def offsets(self) -> bool:
        return any(b.position == 0 and b.offset != 0 for b in (self.lower, self.upper))


def _frame(spec: exp.WindowSpec | None) -> _Frame | None:
    if spec is None:
        return None
    if spec.args.get("exclude"):
        raise NotLocal("a window frame with EXCLUDE")
    kind = (spec.args.get("kind") or "").upper()
    if kind not in ("ROWS", "RANGE"):
        raise NotLocal(f"a {kind} window frame")
    lower = _bound(spec.args.get("start"), spec.args.get("start_side"))
    upper = _bound(spec.args.get("end") or "CURRENT ROW", spec.args.get("end_side"))
    if lower.position > 0 or upper.position < 0 or lower.rank() > upper.rank():
        raise NotLocal("a window frame whose lower bound is above its upper bound (Spark refuses it)")
    return _Frame(kind, lower, upper)


def _bound_sql(bound: _Bound, key: SqlType | None) -> str:
    """The boundary as DuckDB reads it (a DATE key's offset is a number of days)."""
    if bound.position:
        return "UNBOUNDED PRECEDING" if bound.position < 0 else "UNBOUNDED FOLLOWING"
    if bound.offset == 0:
        return "CURRENT ROW"
    n = abs(bound.offset)
    amount = f"INTERVAL ({n}) DAY" if key is not None and key.name == "date" else str(n)
    return f"{amount} {'PRECEDING' if bound.offset < 0 else 'FOLLOWING'}"


def _bound_name(bound: _Bound, frame: _Frame, key: SqlType | None) -> str:
    """Spark's text of a boundary: an offset Spark cast to the RANGE key's type loses its
    PRECEDING to a negation (toPrettySQL drops the implicit cast; `n PRECEDING` is `-n`)."""
    if bound.position or bound.offset == 0:
        return _bound_sql(bound, None)
    n = abs(bound.offset)
    cast = frame.kind == "RANGE" and key is not None and key not in (st.INT, st.DATE)
    if bound.offset < 0:
        return f"(- {n}) FOLLOWING" if cast else f"{n} PRECEDING"
    return f"{n} FOLLOWING"


def _frame_text(frame: _Frame, key: SqlType | None, named: bool) -> str:
    show = (lambda b: _bound_name(b, frame, key)) if named else (lambda b: _bound_sql(b, key))
    return f"{frame.kind} BETWEEN {show(frame.lower)} AND {show(frame.upper)}"


@dataclass(frozen=True)
class _Spec:
    partition: list[Value]
    order: list[tuple[exp.Ordered, Value]]
    frame: _Frame | None

    def over(self, frame: str = "") -> str:
        parts = []
        if self.partition:
            parts.append(f"PARTITION BY {', '.join(p.sql for p in self.partition)}")
        if self.order:
            parts.append(f"ORDER BY {', '.join(ordering(o, v) for o, v in self.order)}")
        if frame:
            parts.append(frame)
        return f"({' '.join(parts)})"

    def name(self, frame: str) -> str | None:
        """Spark's text of the window specification (None where a key has no name)."""
        values = self.partition + [v for _o, v in self.order]
        if any(v.name is None for v in values):
            return None
        parts = []
        if self.partition:
            parts.append(f"PARTITION BY {', '.join(p.name for p in self.partition)}")
        if self.order:
            keys = []
            for o, v in self.order:
                desc = bool(o.args.get("desc"))
                first = o.args.get("nulls_first")
                first = (not desc) if first is None else first
                keys.append(f"{v.name} {'DESC' if desc else 'ASC'} NULLS {'FIRST' if first else 'LAST'}")
            parts.append(f"ORDER BY {', '.join(keys)}")
        parts.append(frame)
        return f"({' '.join(parts)})"

    @property
    def free(self) -> bool:
        return any(v.free for v in self.partition + [v for _o, v in self.order])


def _spec(node: exp.Window, plain: ExpressionContext) -> _Spec:
    partition = [translate(e, plain) for e in node.args.get("partition_by") or []]
    order = node.args.get("order")
    keys = [(o, translate(o.this, plain)) for o in (order.expressions if order else [])]
    for o, v in keys:
        ordering(o, v)  # raises for a type Spark cannot order by
    return _Spec(partition, keys, _frame(node.args.get("spec")))


def _framed(spec: _Spec) -> tuple[str, str, str | None]:
    """(the DuckDB OVER clause, the frame's Spark text, a guard condition or None) for an
    aggregate or a value function, which read the frame."""
    frame = spec.frame
    if frame is None:
        text = _RANGE_TO_CURRENT if spec.order else _WHOLE
        return spec.over(text), text, None
    key = None
    guard = None
    if frame.kind == "RANGE" and frame.offsets:
        if len(spec.order) != 1:
            raise NotLocal("a RANGE frame with offsets over other than one ORDER BY key")
        order, key_value = spec.order[0]
        key = key_value.type
        guard = _range_guard(key_value, max(abs(frame.lower.offset), abs(frame.upper.offset)))
        if key.integral:  # DuckDB's bounds in a wider type: the guard sends Spark's wrapped ones to Spark
            spec = replace(spec, order=[(order, replace(key_value, sql=widened_sql(key_value)))])
    elif frame.kind == "ROWS" and frame.offsets and not spec.order:
        raise NotLocal("a ROWS frame with offsets without ORDER BY (its rows' order is Spark's to choose)")
    return spec.over(_frame_text(frame, key, named=False)), _frame_text(frame, key, named=True), guard


def _range_guard(key: Value, n: int) -> str | None:
    """Rows whose bound `key ± n` Spark computes wrapped around in the key's type: FALLBACK."""
    if key.type.integral:
        bits = st.INTEGRAL_BITS[key.type.name]
        low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        if n > high:
            raise NotLocal("a RANGE offset beyond the ORDER BY key's type")
        return f"({key.sql} < {low + n} OR {key.sql} > {high - n})"
    if key.type.name == "decimal":
        if key.type.precision > 37 or n >= 10 ** (key.type.precision - key.type.scale):
            raise NotLocal("a RANGE offset that does not fit the ORDER BY key's DECIMAL")
        return None
    if key.type.name == "date":
        return None
    raise NotLocal(f"a RANGE frame with offsets over a {key.type} key")


def _guarded(sql: str, guard: str | None) -> str:
    return sql if guard is None else f"(CASE WHEN {guard} THEN error('{FALLBACK}') ELSE {sql} END)"


def _window_value(sql: str, t: SqlType, function: str | None, over: str | None, spec: _Spec, *args: Value) -> Value:
    name = None if function is None or over is None else f"{function} OVER {over}"
    return Value(sql, t, name, free=spec.free or any(a.free for a in args))


def _offset(node: exp.Expression | None, default: int) -> int:
    if node is None:
        return default
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit() and int(node.this) < 1 << 31:
        return int(node.this)
    raise NotLocal("a window function offset other than an INT literal")


@dispatch_rule.register
def _window(node: exp.Window, ctx: ExpressionContext) -> Value:
    if not ctx.windows:
        raise NotLocal("a window function outside a SELECT list")
    if node.args.get("alias") is not None:
        raise NotLocal("a named window not defined in the query's WINDOW clause")
    plain = ExpressionContext(**{**ctx.__dict__, "windows": False, "aggregates": False})
    spec = _spec(node, plain)
    function = node.this
    ignore_nulls = isinstance(function, exp.IgnoreNulls)
    keyword = ignore_nulls and not function.meta  # `f(x) IGNORE NULLS`, not `f(x, true)`
    if isinstance(function, exp.IgnoreNulls | exp.RespectNulls):
        if isinstance(function, exp.RespectNulls):
            raise NotLocal("RESPECT NULLS")
        function = function.this
    refuse_marked_call(function, plain)
    if type(function) in _RANKING or isinstance(function, exp.Ntile | exp.Lag | exp.Lead):
        if not spec.order:
            raise NotLocal(f"{construct_name(function)} without ORDER BY (Spark refuses it)")
        if spec.frame is not None:
            raise NotLocal(f"{construct_name(function)} with a window frame")
        if ignore_nulls:
            raise NotLocal(f"{construct_name(function)} IGNORE NULLS")
        return _offset_or_rank(function, spec, plain)
    if isinstance(function, exp.FirstValue | exp.LastValue | exp.First | exp.Last | exp.NthValue):
        return _value_function(function, spec, plain, ignore_nulls, keyword)
    if ignore_nulls:
        raise NotLocal(f"{construct_name(function)} IGNORE NULLS")
    return _aggregate(function, spec, plain)


def _offset_or_rank(function: exp.Expression, spec: _Spec, plain: ExpressionContext) -> Value:
    over = spec.over()
    if type(function) in _RANKING:
        name, duck, t, frame = _RANKING[type(function)]
        sql = f"{duck} OVER {over}" if t == st.DOUBLE else f"CAST({duck} OVER {over} AS INTEGER)"
        return _window_value(sql, t, name, spec.name(frame), spec)
    if isinstance(function, exp.Ntile):
        buckets = _offset(function.this, 1)
        if buckets < 1:
            raise NotLocal("ntile of fewer than one bucket (Spark refuses it)")
        sql = f"CAST(ntile({buckets}) OVER {over} AS INTEGER)"
        return _window_value(sql, st.INT, f"ntile({buckets})", spec.name(_ROWS_TO_CURRENT), spec)
    value = translate(function.this, plain)
    if value.type.name == "void":
        raise NotLocal(f"{construct_name(function)} of NULL")
    steps = _offset(function.args.get("offset"), 1)
    if steps < 1:
        raise NotLocal("lag/lead by fewer than one row")
    default = function.args.get("default")
    default_value = translate(default, plain) if default is not None else Value("NULL", st.VOID, "NULL")
    default_sql = _default_sql(default_value, value.type)
    called = "lag" if isinstance(function, exp.Lag) else "lead"
    shift = -steps if called == "lag" else steps
    frame = f"ROWS BETWEEN {shift} FOLLOWING AND {shift} FOLLOWING"
    function_name = None if value.name is None or default_value.name is None else f"{called}({value.name}, {steps}, {default_value.name})"
    sql = f"{called}({value.sql}, {steps}, {default_sql}) OVER {over}"
    return _window_value(sql, value.type, function_name, spec.name(frame), spec, value, default_value)


def _default_sql(default: Value, t: SqlType) -> str:
    """lag/lead's default as Spark casts it to the input's type (the casts that keep its value)."""
    if default.type.name == "void":
        return f"CAST(NULL AS {t.duckdb})"
    if default.type == t:
        return default.sql
    if t.integral and default.literal is not None:
        bits = st.INTEGRAL_BITS[t.name]
        if -(1 << (bits - 1)) <= int(default.literal) < 1 << (bits - 1):
            return f"CAST({default.literal} AS {t.duckdb})"
    raise NotLocal(f"a lag/lead default of {default.type} for a {t}")


def _value_function(function: exp.Expression, spec: _Spec, plain: ExpressionContext, ignore_nulls: bool, keyword: bool) -> Value:
    value = translate(function.this, plain)
    if value.type.name == "void":
        raise NotLocal(f"{construct_name(function)} of NULL")
    over, frame, guard = _framed(spec)
    ignore = " IGNORE NULLS" if ignore_nulls else ""
    if isinstance(function, exp.NthValue):
        n = _offset(function.args.get("offset"), 1)
        if n < 1:
            raise NotLocal("nth_value of a position below 1 (Spark refuses it)")
        sql = f"nth_value({value.sql}, {n}{ignore}) OVER {over}"
        called = None if value.name is None else f"nth_value({value.name}, {n}){' ignore nulls' if ignore_nulls else ''}"
    else:
        first = isinstance(function, exp.FirstValue | exp.First)
        duck = "first_value" if first else "last_value"
        sql = f"{duck}({value.sql}{ignore}) OVER {over}"
        written = {exp.FirstValue: "first_value", exp.First: "first", exp.LastValue: "last_value", exp.Last: "last"}[type(function)]
        if keyword:  # Spark's parser builds First/Last itself for the IGNORE NULLS keyword
            written = "first" if first else "last"
        called = None if value.name is None else f"{written}({value.name})"
    return _window_value(_guarded(sql, guard), value.type, called, spec.name(frame), spec, value)


def _aggregate(function: exp.Expression, spec: _Spec, plain: ExpressionContext) -> Value:
    over, frame, guard = _framed(spec)
    if isinstance(function, exp.Count):
        arg = function.this
        if isinstance(arg, exp.Distinct):
            raise NotLocal("a DISTINCT window aggregate (Spark refuses it)")
        if arg is None or isinstance(arg, exp.Star):
            return _window_value(_guarded(f"count(*) OVER {over}", guard), st.BIGINT, "count(1)", spec.name(frame), spec)
        value = translate(arg, plain)
        sql = f"count({value.sql}) OVER {over}"
        return _window_value(_guarded(sql, guard), st.BIGINT, named("count", value), spec.name(frame), spec, value)
    if isinstance(function, exp.Sum | exp.Avg | exp.Min | exp.Max):
        if isinstance(function.this, exp.Distinct) or function.expressions:
            raise NotLocal(f"{construct_name(function)} of DISTINCT or several values")
        value = translate(function.this, plain)
        t = value.type
        if isinstance(function, exp.Sum):
            if t.integral:  # a long that wraps around: modular sums of any frame agree
                sql, result = wrap(f"sum({widened_sql(value)}) OVER {over}", st.BIGINT), st.BIGINT
            elif t.name == "decimal":
                result = st.decimal(min(t.precision + 10, st.MAX_PRECISION), t.scale)
                sql = f"TRY_CAST(sum({value.sql}) OVER {over} AS {result.duckdb})"
            else:
                raise NotLocal(f"sum of {t} over a window (floating-point sums depend on the order of addition)")
            called = "sum"
        elif isinstance(function, exp.Avg):
            if not t.integral or t.name == "bigint":
                raise NotLocal(f"avg of {t} over a window (Spark accumulates it in a double or a wider decimal)")
            # Spark's double accumulator is exact for INT sums of fewer than 2^22 rows
            sql = f"(CAST(sum({value.sql}) OVER {over} AS DOUBLE) / CAST(count({value.sql}) OVER {over} AS DOUBLE))"
            result, called = st.DOUBLE, "avg"
        else:
            if t.name == "void" or t.fractional:
                raise NotLocal(f"min/max of {t} over a window")
            called = "min" if isinstance(function, exp.Min) else "max"
            sql, result = f"{called}({value.sql}) OVER {over}", t
        return _window_value(_guarded(sql, guard), result, named(called, value), spec.name(frame), spec, value)
    raise NotLocal(f"{construct_name(function)} as a window function")
