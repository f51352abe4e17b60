"""A heavyweight ALTER whose rewrite meets a full warehouse (a tmpfs of its own), through the real
`alterflow` command on both catalogs: one line naming the job, its state and the command that
continues it; the table reads as before; after room is made, RESUME finishes the job."""

from __future__ import annotations

import random
import re
import string

from tests.support.cli_lines import one_line, run
from tests.support.mounts import fill, tmpfs


def test_a_heavy_alter_on_a_full_warehouse_stops_resumable_in_one_line(catalog_url, tmp_path):
    rng = random.Random(35)
    csv = tmp_path / "h.csv"
    csv.write_text("id,m,v\n" + "".join(f"{i},{i},{''.join(rng.choices(string.ascii_letters, k=40))}\n" for i in range(30_000)))
    with tmpfs(tmp_path / "warehouse", "3m") as warehouse:
        home = tmp_path / "home"
        env = {"ALTERFLOW_CATALOG_URL": catalog_url, "ALTERFLOW_WAREHOUSE": str(warehouse)}
        setup = "CREATE TABLE h (id INT NOT NULL, m INT, v STRING, PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 2"
        assert run(home, "sql", "-e", setup, **env).returncode == 0
        assert run(home, "load", "h", str(csv), **env).returncode == 0
        before = run(home, "sql", "-e", "SELECT sum(m) AS s, count(*) AS n FROM h", "--format", "json", **env).stdout
        fill(warehouse)
        message = one_line(run(home, "sql", "-e", "ALTER TABLE h MODIFY COLUMN m STRING", **env))
        assert re.fullmatch(
            r"ALTER TABLE h: no space left on device: job (\d+) stopped in RUNNING and nothing of it is visible; "
            r"free space and RESUME ALTER TABLE COLUMN FROM h \(or CANCEL it\)",
            message,
        ), message
        assert run(home, "sql", "-e", "SELECT sum(m) AS s, count(*) AS n FROM h", "--format", "json", **env).stdout == before
        (warehouse / "filler").unlink()
        resumed = run(home, "sql", "-e", "RESUME ALTER TABLE COLUMN FROM h", **env)
        assert resumed.returncode == 0 and "FINISHED" in resumed.stdout, resumed.stdout + resumed.stderr
        after = run(home, "sql", "-e", "SELECT count(*) AS n, count(DISTINCT m) AS d FROM h", "--format", "json", **env)
        assert after.stdout == '{"columns": ["n", "d"], "rows": [[30000, 30000]]}\n', after.stdout + after.stderr
        assert run(home, "gc", "--retention", "0", **env).returncode == 0
