"""af_first_asset_events: the Airflow task that emitted each table's first asset event, so that an
event right after it goes at once once that task succeeded (Airflow created the asset with it)
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"


def upgrade() -> None:
    with op.batch_alter_table("af_first_asset_events") as batch:
        batch.add_column(sa.Column("dag_id", sa.String(250), nullable=True))
        batch.add_column(sa.Column("run_id", sa.String(250), nullable=True))
        batch.add_column(sa.Column("task_id", sa.String(250), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("af_first_asset_events") as batch:
        batch.drop_column("task_id")
        batch.drop_column("run_id")
        batch.drop_column("dag_id")
