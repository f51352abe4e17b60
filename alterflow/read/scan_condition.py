"""A scan's `where`: a SQL condition (Spark's dialect) over a table's columns, as an Arrow compute
expression that filters the rows a scan reads in this process (`alterflow.table.Scan`).

The condition compares columns with literals: `=`, `<>`/`!=`, `<`, `<=`, `>`, `>=`, `IN`,
`BETWEEN`, `LIKE`, `IS [NOT] NULL`, joined by `AND`, `OR`, `NOT` (and parentheses). A literal
compared with a column is read as the column's type (`d >= '2024-01-01'` on a DATE column), so a
text that is no value of that type is refused in one line. NULL compares as SQL says: a comparison
with NULL is unknown and the row is not kept. Anything else (arithmetic, functions, subqueries) is
refused in one line naming what was found; a query engine is the place for those (`alterflow sql`).
"""

from __future__ import annotations

import decimal
import functools

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from alterflow.catalog.schema import SchemaVersion
from alterflow.errors import UserError, shown
from alterflow.sql.parser import parse_condition
from alterflow.values.types import to_arrow

SUPPORTED = "a condition compares columns with literals (=, <>, <, <=, >, >=, IN, BETWEEN, LIKE, IS [NOT] NULL) joined by AND, OR, NOT"

_COMPARISONS = {
    exp.EQ: lambda a, b: a == b,
    exp.NEQ: lambda a, b: a != b,
    exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b,
    exp.LT: lambda a, b: a < b,
    exp.LTE: lambda a, b: a <= b,
}


class ScanConditionError(UserError):
    """A scan's `where` that cannot be read or evaluated; nothing was read."""


class ScanCondition:
    """A parsed `where` bound to one schema version: its Arrow expression and the columns it reads."""

    def __init__(self, text: str, version: SchemaVersion, table: str):
        self.context = f"scan of {table}: where"
        self.version = version
        self.columns: list[str] = []  # the version's names of the columns the condition reads
        try:
            tree = parse_condition(text, self.context)
        except UserError as exc:
            message = str(exc)
            raise ScanConditionError(message if self.context in message else f"{self.context}: {message}") from None
        self.expression: pc.Expression = self._condition(tree)

    # -- boolean structure ------------------------------------------------------------------------
    def _condition(self, node: exp.Expression) -> pc.Expression:
        found = self._predicate(node)
        return ~found if node.args.get("negate") else found  # `x NOT LIKE ..` and the like

    @functools.singledispatchmethod
    def _predicate(self, node: exp.Expression) -> pc.Expression:
        """The Arrow expression of one node: one method per sqlglot class, registered below."""
        raise self._unsupported(node)

    @_predicate.register(exp.Paren)
    def _paren(self, node: exp.Paren) -> pc.Expression:
        return self._condition(node.this)

    @_predicate.register(exp.And)
    def _and(self, node: exp.And) -> pc.Expression:
        return self._condition(node.this) & self._condition(node.expression)

    @_predicate.register(exp.Or)
    def _or(self, node: exp.Or) -> pc.Expression:
        return self._condition(node.this) | self._condition(node.expression)

    @_predicate.register(exp.Not)
    def _not(self, node: exp.Not) -> pc.Expression:
        return ~self._condition(node.this)

    @_predicate.register(exp.EQ)
    @_predicate.register(exp.NEQ)
    @_predicate.register(exp.GT)
    @_predicate.register(exp.GTE)
    @_predicate.register(exp.LT)
    @_predicate.register(exp.LTE)
    def _comparison(self, node: exp.Binary) -> pc.Expression:
        left, right = self._pair(node.this, node.expression)
        return _COMPARISONS[type(node)](left, right)

    @_predicate.register(exp.Is)
    def _is_null(self, node: exp.Is) -> pc.Expression:
        if not isinstance(node.expression, exp.Null):
            raise self._unsupported(node)
        return self._column(node.this).is_null()

    @_predicate.register(exp.In)
    def _in(self, node: exp.In) -> pc.Expression:
        if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
            raise self._unsupported(node)
        column, dtype = self._typed_column(node.this)
        values = [self._literal(v, dtype) for v in node.expressions]
        known = _value_set([v for v in values if v is not None], dtype, self.context)
        if len(known) < len(values):  # x IN (.., NULL): true on a match, else unknown
            unknown = pc.scalar(pa.scalar(None, pa.bool_()))
            return pc.if_else(column.isin(known), pc.scalar(True), unknown) if len(known) else unknown
        return column.isin(known)

    @_predicate.register(exp.Between)
    def _between(self, node: exp.Between) -> pc.Expression:
        column, dtype = self._typed_column(node.this)
        low, high = self._literal(node.args["low"], dtype), self._literal(node.args["high"], dtype)
        return (column >= _scalar(low, dtype)) & (column <= _scalar(high, dtype))

    @_predicate.register(exp.Like)
    def _like(self, node: exp.Like) -> pc.Expression:
        column, dtype = self._typed_column(node.this)
        if not pa.types.is_string(dtype) and not pa.types.is_large_string(dtype):
            raise ScanConditionError(f"{self.context}: LIKE takes a text column; {node.this.sql('spark')} is not one")
        pattern = self._literal(node.expression, dtype)
        if pattern is None:
            return pc.scalar(pa.scalar(None, pa.bool_()))
        return pc.match_like(column, pattern)

    @_predicate.register(exp.Boolean)
    def _boolean(self, node: exp.Boolean) -> pc.Expression:
        return pc.scalar(bool(node.this))

    @_predicate.register(exp.Column)
    def _boolean_column(self, node: exp.Column) -> pc.Expression:
        """A BOOLEAN column on its own."""
        column, dtype = self._typed_column(node)
        if not pa.types.is_boolean(dtype):
            raise ScanConditionError(f"{self.context}: column {node.name} is not BOOLEAN; compare it with a value")
        return column

    # -- operands ---------------------------------------------------------------------------------
    def _pair(self, left: exp.Expression, right: exp.Expression):
        """Both sides of a comparison: a literal takes the type of the column on the other side."""
        left_col, right_col = _is_column(left), _is_column(right)
        if left_col and right_col:
            return self._column(left), self._column(right)
        if left_col:
            column, dtype = self._typed_column(left)
            return column, _scalar(self._literal(right, dtype), dtype)
        if right_col:
            column, dtype = self._typed_column(right)
            return _scalar(self._literal(left, dtype), dtype), column
        for side in (left, right):
            if not isinstance(side, exp.Literal | exp.Null | exp.Boolean | exp.Neg | exp.Cast | exp.TryCast | exp.Paren):
                raise self._unsupported(side)
        raise ScanConditionError(
            f"{self.context}: {shown(left.sql('spark'))} and {shown(right.sql('spark'))}: a comparison needs a column; {SUPPORTED}"
        )

    def _typed_column(self, node: exp.Expression) -> tuple[pc.Expression, pa.DataType]:
        column = self._resolve(node)
        return pc.field(column.name), to_arrow(column.type)

    def _column(self, node: exp.Expression) -> pc.Expression:
        return pc.field(self._resolve(node).name)

    def _resolve(self, node: exp.Expression):
        """The version's column a column reference names (case-insensitive), noted as read."""
        if not _is_column(node):
            raise self._unsupported(node)
        if node.table:
            raise ScanConditionError(f"{self.context}: column {shown(node.sql('spark'))} is qualified; name columns alone")
        column = self.version.column(node.name)
        if column is None:
            raise ScanConditionError(f"{self.context}: unknown column {shown(node.name)}")
        if column.name not in self.columns:
            self.columns.append(column.name)
        return column

    def _literal(self, node: exp.Expression, dtype: pa.DataType):
        """A literal as a Python value of the column's type (None for NULL)."""
        if isinstance(node, exp.Paren):
            return self._literal(node.this, dtype)
        if isinstance(node, exp.Null):
            return None
        if isinstance(node, exp.Cast | exp.TryCast) and isinstance(node.this, exp.Literal) and node.this.is_string:
            node = node.this  # DATE '2024-01-01', TIMESTAMP '...': read as the column's type below
        negative = False
        if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
            negative, node = True, node.this
        if isinstance(node, exp.Boolean):
            value: object = bool(node.this)
        elif isinstance(node, exp.Literal) and node.is_string:
            value = node.this
        elif isinstance(node, exp.Literal):
            text = ("-" if negative else "") + node.this
            try:
                value = int(text) if text.lstrip("-").isdigit() else decimal.Decimal(text)
            except decimal.InvalidOperation:
                raise ScanConditionError(f"{self.context}: {shown(text)} is not a number") from None
        else:
            raise self._unsupported(node)
        return _as_type(value, dtype, self.context)

    def _unsupported(self, node: exp.Expression) -> ScanConditionError:
        return ScanConditionError(f"{self.context}: {shown(node.sql('spark'))} is not supported; {SUPPORTED}")


def _is_column(node: exp.Expression) -> bool:
    return isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier)


def _scalar(value, dtype: pa.DataType) -> pc.Expression:
    if value is None:
        return pc.scalar(pa.scalar(None, dtype))
    if isinstance(value, decimal.Decimal) and not pa.types.is_decimal(dtype):
        return pc.scalar(float(value))  # a fraction compared with an integer or floating column
    try:
        return pc.scalar(pa.scalar(value, dtype) if not isinstance(value, int | decimal.Decimal) else value)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        raise ScanConditionError(f"where: {shown(value)} does not compare with a column of type {dtype}") from None


def _as_type(value, dtype: pa.DataType, context: str):
    """`value` (int, Decimal, bool or text) as a value the column's type compares with. Numbers
    stay numbers (2.5 compares with an INT column as 2.5), text is cast to the column's type."""
    if isinstance(value, bool):
        if not pa.types.is_boolean(dtype):
            raise ScanConditionError(f"{context}: {str(value).upper()} compared with a {dtype} column")
        return value
    if isinstance(value, int | decimal.Decimal):
        if pa.types.is_decimal(dtype):  # compared as decimals: an int64 would widen past 38 digits
            return decimal.Decimal(value)
        if pa.types.is_integer(dtype) or pa.types.is_floating(dtype) or pa.types.is_decimal(dtype):
            return value
        raise ScanConditionError(f"{context}: the number {value} compared with a {dtype} column")
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return value
    try:
        return pa.scalar(value).cast(dtype).as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        raise ScanConditionError(f"{context}: {shown(value)} is not a value of type {dtype}") from None


def _value_set(values: list, dtype: pa.DataType, context: str) -> pa.Array:
    """The literals of an IN list as an array of the column's type."""
    try:
        if all(isinstance(v, int | decimal.Decimal) for v in values) and not pa.types.is_decimal(dtype):
            return pa.array([float(v) if isinstance(v, decimal.Decimal) else v for v in values]).cast(dtype)
        return pa.array(values, type=dtype)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        raise ScanConditionError(f"{context}: a value of the IN list is no value of type {dtype}") from None
