"""SQL surface of alterflow: statements parsed into the dataclasses of `alterflow.sql.ast`."""

from alterflow.sql.ast import *  # noqa: F401,F403
from alterflow.sql.parser import SqlError, parse_statements, split_statements  # noqa: F401
