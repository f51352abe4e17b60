"""repeatable migrations (`R__<description>.sql`, as Flyway names them): af_migrations.kind tells a
versioned file's row (VERSIONED: every row before this release) from one application of a
repeatable file (REPEATABLE), which gets a row of its own each time it is applied again
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"


def upgrade() -> None:
    op.add_column("af_migrations", sa.Column("kind", sa.String(16), nullable=False, server_default="VERSIONED"))


def downgrade() -> None:
    with op.batch_alter_table("af_migrations") as batch_op:
        batch_op.drop_column("kind")
